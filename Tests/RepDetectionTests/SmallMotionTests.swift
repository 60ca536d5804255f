import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The exercise gate and motion too small for its pace (a still wrist's tremor)")
struct SmallMotionTests {
    /// A moment of a real standing wrist (WISDM, person 1606, 74 s into the standing recording; `repctl eval
    /// --features`): 0.022 g RMS at a period of 0.32 s, 0.78 mm either way. The tree that `scripts/train-gate`
    /// trained without that person judged it 0.99, and held out that recording counted 5 (docs/DETECTOR.md, "Motion too
    /// small for its pace is refused").
    static let tremor = ExerciseGateFeatures(
        logPeriod: -1.13943, logRMS: -3.83641, periodicity: 0.8278, verticalShare: 0.0858, verticalHalf: -0.87925,
        acrossHalf: -0.82286, verticalFull: 0.78778, acrossFull: 0.81619, logSharpness: -0.06288,
        logVerticalSharpness: -0.04492, steadiness: 0.62572, pauseShare: 0.54667, stepRhythm: 1.64152,
        verticalStepRhythm: 1.66703, stepPeriod: 0.32)

    /// The displacement either way, m, of a sine of `rms` g and `period` s.
    static func displacement(rms: Double, period: Double) -> Double {
        rms * 2.0.squareRoot() * 9.80665 * pow(period / (2 * .pi), 2)
    }

    @Test(
        "a moment whose sine of its RMS and period moves less than 1 mm either way is refused unless it is steady repetition"
    )
    func tooSmallIsRefused() {
        #expect(Self.displacement(rms: exp(Self.tremor.logRMS), period: exp(Self.tremor.logPeriod)) < 0.0008)
        #expect(Self.tremor.isTooSmallForItsPace)
        #expect(ExerciseGateModel.constant(probability: 0.99).judgement(of: Self.tremor) == 0)
        // Steady repetition is judged first and passes.
        let steady = Self.tremor.with {
            $0.periodicity = 0.97
            $0.steadiness = 0.95
            $0.verticalShare = 0.01
        }
        #expect(steady.isSteadyRepetition && steady.isTooSmallForItsPace)
        #expect(ExerciseGateModel.trained.judgement(of: steady) == 1)
        // At the same period, 1 mm is the edge: a little more passes the floor, a little less does not.
        let oneMillimetre = 0.001 / Self.displacement(rms: 1, period: 0.32)
        #expect(!Self.tremor.with { $0.logRMS = log(oneMillimetre * 1.01) }.isTooSmallForItsPace)
        #expect(Self.tremor.with { $0.logRMS = log(oneMillimetre * 0.99) }.isTooSmallForItsPace)
        // The same size at a slower pace moves far more: 0.022 g RMS at 1 s, 7.6 mm.
        #expect(!Self.tremor.with { $0.logPeriod = 0 }.isTooSmallForItsPace)
    }

    @Test(
        """
        15 irregular reps of 0.06 g at their peak, 0.33 s a rep (under 1 mm either way) count nothing with the gate and \
        with its hand rules alone, and within one with it off; sines of 0.5 g at 3 Hz, 0.1 g at 2.5 Hz and 0.05 g at \
        1.5 Hz count every rep
        """, arguments: [0.2, 0.5])
    func tinyFastRepsCountNothing(lift: Double) {
        var rulesOnly = RepDetectorConfiguration()
        rulesOnly.exerciseGate = .open
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        for seed: UInt64 in [1, 2] {
            let tremor = irregularReps(direction: Vector3(1, 0, lift), size: 0.06, period: 0.33, seed: seed)
            #expect(repCount(tremor) == 0, "lift \(lift), seed \(seed)")
            #expect(repCount(tremor, configuration: rulesOnly) == 0, "lift \(lift), seed \(seed), hand rules only")
            #expect((14...16).contains(repCount(tremor, configuration: off)), "lift \(lift), seed \(seed), gate off")
        }
        #expect(repCount(sineSet(repCount: 30, frequency: 3, amplitude: 0.5)) == 30)
        #expect(repCount(sineSet(repCount: 30, frequency: 2.5, amplitude: 0.1)) == 30)
        #expect(repCount(sineSet(repCount: 30, frequency: 1.5, amplitude: 0.05)) == 30)
    }
}
