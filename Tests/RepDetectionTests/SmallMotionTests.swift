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
    /// --features`): 0.02 g at a period of 0.32 s, 0.78 mm either way. The tree that `scripts/train-gate`
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

    @Test("a moment whose sine of its RMS and period moves less than 1 mm either way is refused before anything else")
    func tooSmallIsRefused() {
        #expect(Self.displacement(rms: exp(Self.tremor.logRMS), period: exp(Self.tremor.logPeriod)) < 0.0008)
        #expect(Self.tremor.isTooSmallForItsPace)
        #expect(ExerciseGateModel.constant(probability: 0.99).judgement(of: Self.tremor) == 0)
        // Refused even when it would otherwise pass as steady repetition.
        let steady = Self.tremor.with {
            $0.periodicity = 0.97
            $0.steadiness = 0.95
            $0.verticalShare = 0.01
        }
        #expect(steady.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.judgement(of: steady) == 0)
        // At the same period, 1 mm is the edge: a little more passes the floor, a little less does not.
        let oneMillimetre = 0.001 / Self.displacement(rms: 1, period: 0.32)
        #expect(!Self.tremor.with { $0.logRMS = log(oneMillimetre * 1.01) }.isTooSmallForItsPace)
        #expect(Self.tremor.with { $0.logRMS = log(oneMillimetre * 0.99) }.isTooSmallForItsPace)
        // The same size at a slower pace moves far more: 0.02 g at 1 s is 5 mm.
        #expect(!Self.tremor.with { $0.logPeriod = 0 }.isTooSmallForItsPace)
    }

    @Test(
        """
        30 reps of a 3 Hz sine of 0.06 g (under 2 mm either way) count nothing; 0.5 g at 3 Hz and 0.1 g at 2.5 Hz, \
        0.05 g at 1.5 Hz count every rep
        """)
    func tinyFastSinesCountNothing() {
        #expect(repCount(sineSet(repCount: 30, frequency: 3, amplitude: 0.06)) == 0)
        #expect(repCount(sineSet(repCount: 30, frequency: 3, amplitude: 0.5)) == 30)
        #expect(repCount(sineSet(repCount: 30, frequency: 2.5, amplitude: 0.1)) == 30)
        #expect(repCount(sineSet(repCount: 30, frequency: 1.5, amplitude: 0.05)) == 30)
        // The gate off counts the tremor-sized sine (within one): the refusal is the gate's.
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        #expect((29...31).contains(repCount(sineSet(repCount: 30, frequency: 3, amplitude: 0.06), configuration: off)))
    }
}
