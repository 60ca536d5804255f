import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The exercise gate and vertical repetition (the body rising and sinking, the arms still on it)")
struct VerticalRepetitionTests {
    /// A moment of a real squat set seen from a wrist (cara_mixed, P1, 33.6 s into the recording), measured by
    /// `repctl eval --features`. The tree trained without that person judged it 0.034, and the set counted 0 of 20.
    static let squat = ExerciseGateFeatures(
        logPeriod: 0.18232, logRMS: -1.0081, periodicity: 0.94637, verticalShare: 0.97578, verticalHalf: 0.03149,
        acrossHalf: -0.21319, verticalFull: 0.72637, acrossFull: 0.01022, logSharpness: 0.4792,
        logVerticalSharpness: 0.46791, steadiness: 0.82503, pauseShare: 0.22667, stepRhythm: 0.51086,
        verticalStepRhythm: 0.52891, stepPeriod: 0.6)

    /// A gate that refuses every moment as the held-out tree refused that squat (0.034).
    static let refusing = ExerciseGateModel.constant(probability: 0.034)

    /// 15 squats seen from a wrist held still on the body: every rep moves along gravity only, as two bumps half a rep
    /// apart (down and up; the second 0.7 times the first, which makes a step rhythm), 0.3 g, 1.25 s a rep ±5 %, each
    /// rep's size ±5 %, with 0.02 g of white noise on each axis; `lead` s of stillness before and 10 s after, 50 Hz.
    static func squats(lead: Double, seed: UInt64) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let schedule = RepSchedule(
            count: 15, period: 1.25, lead: lead, length: 0.95...1.05, size: 0.95...1.05, random: &random)
        return schedule.samples(rate: 50, tail: 10) { t, under in
            let a = under.map { schedule.sizes[$0.rep] * 0.3 * (sin(2 * .pi * $0.p) + 0.7 * sin(4 * .pi * $0.p)) } ?? 0
            let noise = { random.nextGaussian(standardDeviation: 0.02) }
            return MotionSample(timestamp: t, ax: noise(), ay: noise(), az: 1 + a + noise())
        }
    }

    @Test(
        """
        vertical repetition passes the gate unjudged: periodicity 0.85, 90 % of the energy along gravity, no clear \
        step rhythm along gravity, whatever its steadiness
        """)
    func verticalRepetitionPassesUnjudged() {
        #expect(Self.squat.isSteadyRepetition)
        #expect(Self.refusing.judgement(of: Self.squat) == 1)
        var faint = Self.squat
        faint.logRMS = log(0.014)
        #expect(!faint.isSteadyRepetition)
    }

    @Test(
        """
        with a gate that refuses every moment, 15 squats of a wrist held still on the body count within one of 15, \
        as with the gate off (without vertical repetition they count 0)
        """, arguments: [3.0, 6.0], [UInt64(1), 2])
    func stillWristSquatsCountWithARefusingGate(lead: Double, seed: UInt64) {
        let samples = Self.squats(lead: lead, seed: seed)
        var refusing = RepDetectorConfiguration()
        refusing.exerciseGate = Self.refusing
        var gateOff = RepDetectorConfiguration()
        gateOff.minimumExerciseLikelihood = 0
        let counted = repCount(samples, configuration: refusing)
        #expect(abs(counted - 15) <= 1, "lead \(lead) s, seed \(seed): \(counted)")
        #expect(abs(repCount(samples, configuration: gateOff) - 15) <= 1, "lead \(lead) s, seed \(seed), gate off")
    }

    @Test("gait, swinging arms and irregular motion do not pass as vertical repetition")
    func gaitIsNotVerticalRepetition() {
        var swinging = Self.squat
        swinging.verticalShare = 0.89
        var irregular = Self.squat
        irregular.periodicity = 0.84
        // A stair climb whose wrist barely swings (a hand on a rail) is as vertical, but its steps make a clear rhythm
        // along gravity (a generated climb at 0.85 strides/s: 0.93 of its energy along gravity, a rhythm of 1.9).
        var climbing = Self.squat
        climbing.verticalShare = 0.93
        climbing.verticalStepRhythm = 1.0
        for (name, moment) in [("swinging", swinging), ("irregular", irregular), ("climbing", climbing)] {
            #expect(!moment.isSteadyRepetition, "\(name)")
        }
    }
}
