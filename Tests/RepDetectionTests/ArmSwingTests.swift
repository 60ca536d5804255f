import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The exercise gate and a smooth arm swing at a stride's period (a walk whose steps the wrist does not feel)")
struct ArmSwingTests {
    /// A moment of a real walk (WISDM, person 1611, 5 s into the walking recording; `repctl eval --features`): the arm
    /// swings once a second, the wrist feels no step. The tree judged it 0.69; that person's short walks between
    /// sitting down and standing up counted 4–10 reps each (docs/DETECTOR.md, "A smooth arm swing at a stride's period
    /// is refused").
    static let walk = ExerciseGateFeatures(
        logPeriod: 0.03922, logRMS: -0.76379, periodicity: 0.85479, verticalShare: 0.32028, verticalHalf: -0.17193,
        acrossHalf: 0.44653, verticalFull: 0.63266, acrossFull: 0.47912, logSharpness: -0.04813,
        logVerticalSharpness: 0.19112, steadiness: 0.78985, pauseShare: 0, stepRhythm: 0, verticalStepRhythm: 0,
        stepPeriod: 0)

    @Test(
        """
        a smooth swing at a stride's period (0.92–1.08 s) with no step rhythm, 15–60 % of its energy along gravity and \
        0.15–0.6 g RMS is refused whatever the tree says
        """)
    func armSwingIsRefused() {
        #expect(Self.walk.isArmSwing)
        #expect(!Self.walk.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.probability(of: Self.walk) > 0.2)
        #expect(ExerciseGateModel.trained.judgement(of: Self.walk) == 0)
        var slowerStride = Self.walk
        slowerStride.logPeriod = log(1.1)
        var steps = Self.walk
        steps.stepRhythm = 0.3
        var stepsAlongGravity = Self.walk
        stepsAlongGravity.verticalStepRhythm = 0.14
        var sharp = Self.walk
        sharp.logSharpness = 0.2
        var irregular = Self.walk
        irregular.periodicity = 0.65
        var level = Self.walk
        level.verticalShare = 0.14
        var vertical = Self.walk
        vertical.verticalShare = 0.61
        var faint = Self.walk
        faint.logRMS = log(0.14)
        var strong = Self.walk
        strong.logRMS = log(0.61)
        let kept = [
            ("slower stride", slowerStride), ("steps", steps), ("steps along gravity", stepsAlongGravity),
            ("sharp", sharp), ("irregular", irregular), ("level", level), ("vertical", vertical), ("faint", faint),
            ("strong", strong),
        ]
        for (name, moment) in kept {
            #expect(!moment.isArmSwing, "\(name)")
        }
    }

    @Test("exercise in the tree's leaf of smooth 1 s swings is not an arm swing: jumping jacks, push-ups")
    func exerciseInTheSameLeafPasses() {
        // Real moments the tree accepted in that leaf (cara_clean; repctl eval --features): jumping jacks move the
        // wrist far harder (1.6 g), push-ups only tilt it (2.7 % of the energy along gravity).
        let jumpingJack = ExerciseGateFeatures(
            logPeriod: -0.04082, logRMS: 0.47235, periodicity: 0.96234, verticalShare: 0.19465, verticalHalf: -0.14821,
            acrossHalf: -0.43717, verticalFull: 0.49458, acrossFull: 0.70053, logSharpness: 0.15098,
            logVerticalSharpness: 0.1597, steadiness: 0.82977, pauseShare: 0.06667)
        let pushUp = ExerciseGateFeatures(
            logPeriod: 0.07696, logRMS: -1.60228, periodicity: 0.85716, verticalShare: 0.0271, verticalHalf: -0.12227,
            acrossHalf: 0.46574, verticalFull: -0.02551, acrossFull: 0.69249, logSharpness: -0.16877,
            logVerticalSharpness: 1.08952, steadiness: 0.47767, pauseShare: 0.08, verticalStepRhythm: 0.00678)
        for (name, moment) in [("jumping jack", jumpingJack), ("push-up", pushUp)] {
            #expect(!moment.isArmSwing, "\(name)")
            #expect(ExerciseGateModel.trained.judgement(of: moment) >= 0.2, "\(name)")
        }
    }

    @Test("steady repetition is judged first: a steady, clean swing at a stride's period passes")
    func steadyRepetitionComesFirst() {
        var steady = Self.walk
        steady.periodicity = 0.96
        steady.steadiness = 0.9
        #expect(steady.isArmSwing)
        #expect(steady.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.judgement(of: steady) == 1)
    }

    @Test(
        """
        15 irregular reps moving diagonally (a fifth to two fifths of their energy along gravity) count 0 at a stride's \
        period (1 s) and 15 at 1.15 s: at 1 s, smooth and without steps, they move as such a walk does
        """, arguments: [0.5, 0.8], [0.3, 0.7])
    func diagonalRepsAtAStridesPeriodAreRefused(lift: Double, size: Double) {
        for seed: UInt64 in [1, 2] {
            let atStride = LevelRepetitionTests.irregularReps(
                direction: Vector3(1, 0, lift), size: size, period: 1, seed: seed)
            let slower = LevelRepetitionTests.irregularReps(
                direction: Vector3(1, 0, lift), size: size, period: 1.15, seed: seed)
            #expect(repCount(atStride) == 0, "lift \(lift), \(size) g, seed \(seed), 1 s")
            #expect(repCount(slower) == 15, "lift \(lift), \(size) g, seed \(seed), 1.15 s")
        }
    }
}
