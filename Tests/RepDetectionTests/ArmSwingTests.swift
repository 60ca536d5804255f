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
    /// sitting down and standing up counted 4–10 reps each (docs/DETECTOR.md, "A smooth arm swing at a stride's
    /// period is refused").
    static let walk = ExerciseGateFeatures(
        logPeriod: 0.03922, logRMS: -0.76379, periodicity: 0.85479, verticalShare: 0.32028, verticalHalf: -0.17193,
        acrossHalf: 0.44653, verticalFull: 0.63266, acrossFull: 0.47912, logSharpness: -0.04813,
        logVerticalSharpness: 0.19112, steadiness: 0.78985, pauseShare: 0, stepRhythm: 0, verticalStepRhythm: 0,
        stepPeriod: 0)

    @Test(
        """
        a smooth swing at a stride's period (0.96–1.08 s on the 40 ms grid) with no step rhythm, 15–60 % of its energy \
        along gravity and 0.15–0.6 g RMS is refused whatever the tree says
        """)
    func armSwingIsRefused() {
        #expect(Self.walk.isArmSwing)
        #expect(!Self.walk.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.probability(of: Self.walk) > 0.2)
        #expect(ExerciseGateModel.trained.judgement(of: Self.walk) == 0)
        for period in [0.96, 1.08] {
            #expect(Self.walk.with { $0.logPeriod = log(period) }.isArmSwing, "\(period) s")
        }
        let kept = [
            ("faster stride", Self.walk.with { $0.logPeriod = log(0.92) }),
            ("slower stride", Self.walk.with { $0.logPeriod = log(1.12) }),
            ("steps", Self.walk.with { $0.stepRhythm = 0.3 }),
            ("steps along gravity", Self.walk.with { $0.verticalStepRhythm = 0.135 }),
            ("sharp", Self.walk.with { $0.logSharpness = 0.197 }),
            ("irregular", Self.walk.with { $0.periodicity = 0.65698 }),
            ("level", Self.walk.with { $0.verticalShare = 0.149 }),
            ("vertical", Self.walk.with { $0.verticalShare = 0.601 }),
            ("faint", Self.walk.with { $0.logRMS = log(0.149) }),
            ("strong", Self.walk.with { $0.logRMS = log(0.601) }),
        ]
        for (name, moment) in kept {
            #expect(!moment.isArmSwing, "\(name)")
        }
    }

    @Test("exercise in the tree's leaf of smooth 1 s swings is not an arm swing: push-ups, squats, rope skipping")
    func exerciseInTheSameLeafPasses() {
        // Real moments of that leaf, each judged 0.69 by the tree (repctl eval --features): a push-up whose wrist only
        // tilts (7.5 % of the energy along gravity), a squat that moves along gravity (85 %), rope skipping that moves
        // the wrist harder (0.63 g).
        let pushUp = ExerciseGateFeatures(
            logPeriod: 0, logRMS: -1.39297, periodicity: 0.68466, verticalShare: 0.07482, verticalHalf: -0.19278,
            acrossHalf: 0.58796, verticalFull: -0.02456, acrossFull: 0.65477, logSharpness: -0.10723,
            logVerticalSharpness: 0.85906, steadiness: 0.45189, pauseShare: 0.08, verticalStepRhythm: 0.01306)
        let squat = ExerciseGateFeatures(
            logPeriod: 0.07696, logRMS: -0.81297, periodicity: 0.95957, verticalShare: 0.85081, verticalHalf: -0.91495,
            acrossHalf: 0.66698, verticalFull: 0.93788, acrossFull: 0.89132, logSharpness: -0.06225,
            logVerticalSharpness: -0.02622, steadiness: 0.848, pauseShare: 0.08)
        let skipping = ExerciseGateFeatures(
            logPeriod: 0.07696, logRMS: -0.46331, periodicity: 0.68237, verticalShare: 0.03383, verticalHalf: -0.21761,
            acrossHalf: -0.66363, verticalFull: 0.033, acrossFull: 0.26763, logSharpness: -0.05474,
            logVerticalSharpness: 0.45482, steadiness: 0.89734, pauseShare: 0.06667)
        for (name, moment) in [("push-up", pushUp), ("squat", squat), ("rope skipping", skipping)] {
            #expect(!moment.isArmSwing, "\(name)")
            #expect(!moment.isSteadyRepetition, "\(name)")
            #expect(abs(ExerciseGateModel.trained.judgement(of: moment) - 0.69) < 0.01, "\(name)")
        }
    }

    @Test("steady repetition is judged first: a steady, clean swing at a stride's period passes")
    func steadyRepetitionComesFirst() {
        let steady = Self.walk.with {
            $0.periodicity = 0.96
            $0.steadiness = 0.9
        }
        #expect(steady.isArmSwing)
        #expect(steady.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.judgement(of: steady) == 1)
    }

    @Test(
        """
        15 irregular reps moving diagonally (a fifth to two fifths of their energy along gravity) count 0 at a \
        stride's period (1 s) and 15 at 1.15 s: at 1 s, smooth and without steps, they move as such a walk does
        """, arguments: [0.5, 0.8], [0.35, 0.7])
    func diagonalRepsAtAStridesPeriodAreRefused(lift: Double, size: Double) {
        for seed: UInt64 in [1, 2] {
            let atStride = irregularReps(direction: Vector3(1, 0, lift), size: size, period: 1, seed: seed)
            let slower = irregularReps(direction: Vector3(1, 0, lift), size: size, period: 1.15, seed: seed)
            #expect(repCount(atStride) == 0, "lift \(lift), \(size) g, seed \(seed), 1 s")
            #expect(repCount(slower) == 15, "lift \(lift), \(size) g, seed \(seed), 1.15 s")
        }
    }
}
