import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The rules by which the detector uses the gate's probability (docs/DETECTOR.md, "How the detector uses it"), shown
/// with gates of one question: is the motion's RMS small (`log_rms` ≤ −2, a rep of 0.1 g) or not (0.4 g)?
@Suite("How the detector uses the gate: hold-offs and dismissal")
struct GateHoldOffAndDismissalTests {
    static let rate = 50.0
    /// The reps' period, s: shorter than the 2 s from which slow, strong repetition passes unjudged.
    static let repPeriod = 1.8

    /// A gate whose probability is `small` for motion whose RMS is at most e^`split` g, `large` above.
    static func gate(small: Double, large: Double, split: Double = -2) -> RepDetectorConfiguration {
        func logit(_ p: Double) -> Double { log(p / (1 - p)) }
        var c = RepDetectorConfiguration()
        c.exerciseGate = ExerciseGateModel(
            feature: [2, -1, -1], threshold: [split, 0, 0], left: [1, 0, 0], right: [2, 0, 0],
            score: [0, logit(small), logit(large)])
        return c
    }

    /// Reps of `repPeriod` 30° above the horizontal y (gravity along z; level motion would pass unjudged), every other
    /// one 0.8 times as large, from `start`, `amplitude` g,
    /// with white noise of 0.3 times the amplitude: few moments (about a tenth of a set's) are periodic and steady
    /// enough to pass without the gate's judgement (`ExerciseGateFeatures.isSteadyRepetition`).
    /// `period` (s) is `repPeriod` unless given.
    static func reps(count: Int, amplitude: Double, start: Double, seed: UInt64, period: Double = repPeriod)
        -> [MotionSample]
    {
        var random = SeededGenerator(seed: seed)
        return SignalGenerator.samples(duration: Double(count) * period - 1 / rate, sampleRate: rate, start: start) {
            t in
            let k = Int(((t - start) / period).rounded(.down))
            let size = amplitude * (k % 2 == 0 ? 1 : 0.8)
            let noise = 0.3 * amplitude
            return MotionSample(
                timestamp: t, ax: random.nextGaussian(standardDeviation: noise),
                ay: 0.87 * size * sin(2 * .pi * (t - start) / period) + random.nextGaussian(standardDeviation: noise),
                az: 1 + 0.5 * size * sin(2 * .pi * (t - start) / period)
                    + random.nextGaussian(standardDeviation: noise))
        }
    }

    /// Stillness, then the blocks of reps (count, g, and period in s: `repPeriod` when nil) one after the other, then
    /// 15 s of stillness.
    static func recording(_ blocks: [(Int, Double)], periods: [Double?] = []) -> [MotionSample] {
        var samples = GeneratedMotion.still(seconds: 3, start: 0, up: .z, rate: rate, seed: 1)
        for (n, (count, amplitude)) in blocks.enumerated() {
            let period = (n < periods.count ? periods[n] : nil) ?? repPeriod
            samples += GeneratedMotion.shifted(
                reps(count: count, amplitude: amplitude, start: 0, seed: UInt64(n + 2), period: period),
                after: samples, rate: rate)
        }
        return samples
            + GeneratedMotion.shifted(
                GeneratedMotion.still(seconds: 15, start: 0, up: .z, rate: rate, seed: 9), after: samples, rate: rate)
    }

    /// When (s into the samples) the detector announced its first set, live, and when the gate last refused the motion
    /// before that.
    static func firstStart(_ samples: [MotionSample], _ configuration: RepDetectorConfiguration) -> (
        start: Double, lastRefusal: Double
    )? {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var lastRefusal = -Double.infinity
        for sample in samples {
            detector.process(sample, into: &events)
            if let p = detector.exerciseLikelihood, p < configuration.minimumExerciseLikelihood {
                lastRefusal = sample.timestamp
            }
            if events.contains(where: { if case .setStarted = $0 { true } else { false } }) {
                return (sample.timestamp, lastRefusal)
            }
        }
        return nil
    }

    /// The gate's probability averaged over the samples while a set was open, the share of those samples it refused,
    /// and the sets' final and live counts.
    static func judged(_ samples: [MotionSample], _ configuration: RepDetectorConfiguration) -> (
        mean: Double, refused: Double, sets: [(final: Int, live: Int)]
    ) {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var sum = 0.0, count = 0, refused = 0
        for sample in samples {
            detector.process(sample, into: &events)
            if detector.inSet, let p = detector.exerciseLikelihood {
                sum += p
                count += 1
                if p < configuration.minimumExerciseLikelihood { refused += 1 }
            }
        }
        detector.finish(into: &events)
        return (sum / Double(max(count, 1)), Double(refused) / Double(max(count, 1)), setCounts(events))
    }

    @Test("a set starts 2.5 s after the last moment the gate refused unsure, 4 s after one it refused with confidence")
    func holdOffDependsOnHowSureTheRefusalWas() throws {
        // 6 small reps the gate refuses, then 15 large ones it accepts: the set can start only after the refusals.
        let samples = Self.recording([(6, 0.1), (15, 0.4)])
        let unsure = try #require(Self.firstStart(samples, Self.gate(small: 0.1, large: 0.99)))
        let sure = try #require(Self.firstStart(samples, Self.gate(small: 0.01, large: 0.99)))
        let open = try #require(Self.firstStart(samples, Self.gate(small: 0.5, large: 0.99)))
        print(
            "set announced at \(unsure) s (refused unsure), \(sure) s (with confidence), \(open.start) s (never refused)"
        )
        // The last refusal seen here is the last sample whose held judgement (one every 160 ms) was a refusal: up to
        // 160 ms after the judgement itself. The start is checked every grid point (40 ms).
        #expect((2.3...2.6).contains(unsure.start - unsure.lastRefusal), "refused unsure: \(unsure)")
        #expect((3.8...4.1).contains(sure.start - sure.lastRefusal), "refused with confidence: \(sure)")
        // The refusals end where the window's RMS rises past the split, the same moment for both gates.
        #expect(abs(unsure.lastRefusal - sure.lastRefusal) < 0.05)
        // Accepted all along, the set starts while the reps are still small.
        #expect(open.start < 15, "never refused: \(open)")
    }

    @Test(
        "a set averaging 0.4-0.55 is dismissed when the gate refused 40 % of it or more, kept when it refused none"
    )
    func dismissalBetweenTwoAndTwoPointSevenFiveTimesTheThresholdNeedsRefusals() {
        // 12 reps of 0.4 g the gate accepts at 0.8, then 12 of 0.28 g (RMS about e^−1.9 g; the set goes on) it judges
        // 0.15 (refused) or 0.22 (accepted, unsure).
        let samples = Self.recording([(12, 0.4), (12, 0.28)])
        let refused = Self.judged(samples, Self.gate(small: 0.15, large: 0.8, split: -1.6))
        let accepted = Self.judged(samples, Self.gate(small: 0.22, large: 0.8, split: -1.6))
        let low = Self.judged(samples, Self.gate(small: 0.02, large: 0.5, split: -1.6))
        print("0.8 then 0.15: \(refused); 0.8 then 0.22: \(accepted); 0.5 then 0.02: \(low)")
        // What each case is (0.4 and 0.55: 2 and 2.75 times the threshold).
        #expect(refused.mean >= 0.4 && refused.mean < 0.55 && refused.refused >= 0.4, "\(refused)")
        #expect(accepted.mean < 0.55 && accepted.refused == 0, "\(accepted)")
        #expect(low.mean < 0.4, "\(low)")
        // What the detector does.
        #expect(!refused.sets.isEmpty && refused.sets.allSatisfy { $0.final == 0 }, "\(refused.sets)")
        #expect(refused.sets.contains { $0.live > 0 }, "it counted live before it was dismissed: \(refused.sets)")
        #expect(accepted.sets.map(\.final) == [24], "\(accepted.sets)")
        #expect(!low.sets.isEmpty && low.sets.allSatisfy { $0.final == 0 }, "\(low.sets)")
    }

    @Test(
        "with the gate on, a set whose final count is below 3 is dismissed (its live reps taken back); off, it counts")
    func setsOfOneOrTwoRepsAreDismissedWithTheGateOn() {
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        let accepting = Self.gate(small: 0.99, large: 0.99)
        for reps in [2, 3, 4] {
            let samples = sineSet(repCount: reps, frequency: 0.5, amplitude: 0.3)
            let ungated = setCounts(detect(samples, configuration: off))
            let gated = setCounts(detect(samples, configuration: accepting))
            print("\(reps) reps: gate off \(ungated), gate on (accepting everything) \(gated)")
            #expect(ungated.map(\.final) == [reps], "gate off, \(reps) reps: \(ungated)")
            if reps < 3 {
                #expect(gated.map(\.final) == [0] && gated[0].live == reps, "\(reps) reps: \(gated)")
            } else {
                #expect(gated.map(\.final) == [reps], "\(reps) reps: \(gated)")
            }
        }
    }

    @Test(
        """
        with the gate on, a set of reps 5 s or longer must count 4 (3 such cycles are as long as standing up, a walk \
        there and back and sitting down); 3 reps of 4 s still count
        """)
    func slowSetsOfThreeRepsAreDismissedWithTheGateOn() {
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        let accepting = Self.gate(small: 0.99, large: 0.99)
        for (reps, period) in [(3, 6.0), (4, 6.0), (3, 5.5), (3, 4.0)] {
            let samples = sineSet(repCount: reps, frequency: 1 / period, amplitude: 0.3)
            let ungated = setCounts(detect(samples, configuration: off))
            let gated = setCounts(detect(samples, configuration: accepting))
            print("\(reps) reps of \(period) s: gate off \(ungated), gate on (accepting everything) \(gated)")
            #expect(ungated.map(\.final) == [reps], "gate off, \(reps) reps of \(period) s: \(ungated)")
            if reps < 4, period >= 5 {
                #expect(gated.map(\.final) == [0] && gated[0].live == reps, "\(reps) reps of \(period) s: \(gated)")
            } else {
                #expect(gated.map(\.final) == [reps], "\(reps) reps of \(period) s: \(gated)")
            }
        }
    }

    @Test("refused motion 3.6 times faster than a set after its last rep keeps it; at twice its pace it dismisses it")
    func dismissalWeighsTheMomentsAtTheSetsOwnPace() {
        // 4 reps of 0.4 g the gate accepts at 0.8, then, before the set ends (8 s after its last rep), 7 s of small
        // motion (0.06 g) it refuses at 0.02: cycles of 0.5 s (3.6 times faster than the reps) or 0.9 s (twice).
        let gate = Self.gate(small: 0.02, large: 0.8)
        let faster = Self.judged(Self.recording([(4, 0.4), (14, 0.06)], periods: [nil, 0.5]), gate)
        let twice = Self.judged(Self.recording([(4, 0.4), (8, 0.06)], periods: [nil, 0.9]), gate)
        print("then cycles of 0.5 s: \(faster); of 0.9 s: \(twice)")
        // Over all of the set's moments both would be dismissed: below 0.55 (2.75 times the threshold), half refused.
        for judged in [faster, twice] { #expect(judged.mean < 0.5 && judged.refused > 0.45, "\(judged)") }
        #expect(faster.sets.map(\.final) == [4], "\(faster.sets)")
        #expect(!twice.sets.isEmpty && twice.sets.allSatisfy { $0.final == 0 }, "\(twice.sets)")
        #expect(twice.sets.contains { $0.live == 4 }, "it counted live before it was dismissed: \(twice.sets)")
    }
}
