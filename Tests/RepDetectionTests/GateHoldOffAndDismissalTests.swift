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

    /// A gate whose probability is `small` for motion whose RMS is at most e^`split` g, `large` above.
    static func gate(small: Double, large: Double, split: Double = -2) -> RepDetectorConfiguration {
        func logit(_ p: Double) -> Double { log(p / (1 - p)) }
        var c = RepDetectorConfiguration()
        c.exerciseGate = ExerciseGateModel(
            feature: [2, -1, -1], threshold: [split, 0, 0], left: [1, 0, 0], right: [2, 0, 0],
            score: [0, logit(small), logit(large)])
        return c
    }

    /// Reps of 2 s along y (gravity along z), every other one 0.8 times as large, from `start`, `amplitude` g, with
    /// white noise of 0.3 times the amplitude: no moment is periodic and steady enough to pass without the gate's
    /// judgement (`ExerciseGateFeatures.isSteadyRepetition`).
    static func reps(count: Int, amplitude: Double, start: Double, seed: UInt64) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        return SignalGenerator.samples(duration: Double(count) * 2 - 1 / rate, sampleRate: rate, start: start) { t in
            let k = Int(((t - start) / 2).rounded(.down))
            let size = amplitude * (k % 2 == 0 ? 1 : 0.8)
            let noise = 0.3 * amplitude
            return MotionSample(
                timestamp: t, ax: random.nextGaussian(standardDeviation: noise),
                ay: size * sin(2 * .pi * 0.5 * (t - start)) + random.nextGaussian(standardDeviation: noise),
                az: 1 + random.nextGaussian(standardDeviation: noise))
        }
    }

    /// Stillness, then the blocks of reps (count, g) one after the other, then 15 s of stillness.
    static func recording(_ blocks: [(Int, Double)]) -> [MotionSample] {
        var samples = GeneratedMotion.still(seconds: 3, start: 0, up: .z, rate: rate, seed: 1)
        for (n, (count, amplitude)) in blocks.enumerated() {
            samples += GeneratedMotion.shifted(
                reps(count: count, amplitude: amplitude, start: 0, seed: UInt64(n + 2)), after: samples, rate: rate)
        }
        return samples
            + GeneratedMotion.shifted(
                GeneratedMotion.still(seconds: 15, start: 0, up: .z, rate: rate, seed: 9), after: samples, rate: rate)
    }

    /// When (s into the samples) the detector announced its first set, live.
    static func firstStart(_ samples: [MotionSample], _ configuration: RepDetectorConfiguration) -> Double? {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        for sample in samples {
            detector.process(sample, into: &events)
            if events.contains(where: { if case .setStarted = $0 { true } else { false } }) {
                return sample.timestamp
            }
        }
        return nil
    }

    @Test("a set starts 2.5 s after the last moment the gate refused unsure, 4 s after one it refused with confidence")
    func holdOffDependsOnHowSureTheRefusalWas() throws {
        // 6 small reps the gate refuses, then 15 large ones it accepts: the set can start only after the refusals.
        let samples = Self.recording([(6, 0.1), (15, 0.4)])
        let unsure = try #require(Self.firstStart(samples, Self.gate(small: 0.1, large: 0.99)))
        let sure = try #require(Self.firstStart(samples, Self.gate(small: 0.01, large: 0.99)))
        let open = try #require(Self.firstStart(samples, Self.gate(small: 0.5, large: 0.99)))
        print("set announced at \(unsure) s (refused unsure), \(sure) s (with confidence), \(open) s (never refused)")
        // The refusals end where the window's RMS rises past the split, the same moment for both gates.
        #expect(abs((sure - unsure) - 1.5) <= 0.2, "unsure \(unsure) s, sure \(sure) s")
        // Accepted all along, the set starts while the reps are still small.
        #expect(open < 15, "never refused: \(open) s")
        #expect(unsure > 15)
    }

    @Test(
        "a set the gate judged 0.15 for half of it is dismissed (average 0.5, half refused); judged 0.25 there it is kept (no refusal)"
    )
    func dismissalNeedsRefusalsUnlessTheAverageIsLow() {
        // 12 reps of 0.4 g the gate accepts at 0.9, then 12 of 0.28 g (RMS about e^−1.9 g; the set goes on).
        let samples = Self.recording([(12, 0.4), (12, 0.28)])
        let refused = setCounts(detect(samples, configuration: Self.gate(small: 0.15, large: 0.9, split: -1.6)))
        let accepted = setCounts(detect(samples, configuration: Self.gate(small: 0.25, large: 0.9, split: -1.6)))
        let low = setCounts(detect(samples, configuration: Self.gate(small: 0.02, large: 0.5, split: -1.6)))
        print("judged 0.15: \(refused); judged 0.25: \(accepted); 0.5 then 0.02: \(low)")
        #expect(!refused.isEmpty && refused.allSatisfy { $0.final == 0 }, "\(refused)")
        #expect(refused.contains { $0.live > 0 }, "the set counted live before it was dismissed: \(refused)")
        #expect(accepted.map(\.final).reduce(0, +) >= 22, "\(accepted)")
        // Averaging below 2 times the threshold (0.4) dismisses a set whatever its refusals.
        #expect(!low.isEmpty && low.allSatisfy { $0.final == 0 }, "\(low)")
    }
}
