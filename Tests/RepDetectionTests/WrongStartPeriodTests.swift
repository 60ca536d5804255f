import MotionCore
import MotionSimulation
import RepDetection
import Testing

/// A set that starts on a wrong period: generated deadlifts (the pull, a pause at lockout, the lowering, a pause on
/// the floor) whose first reps the tracker took for a period of about 0.6 of the rep's. The template of that length
/// matched twice a cycle, and every rep counted twice. Once the tracker has found the rep's period clearly for a whole
/// length of it (1.3–2.8 times the set's, not about twice it), the motion is no longer periodic at the set's period
/// and the set's last two reps came within about one tracked period, the set anchors again there
/// (`RepDetector.followTrackedPeriod`) and its end recounts it at that period.
@Suite("A set that started on a wrong period")
struct WrongStartPeriodTests {
    static func deadlifts(rate: Double, loss: Double, seed: UInt64) -> [MotionSample] {
        var generator = BarbellGenerator()
        generator.lift = .deadlift
        generator.reps = 5
        generator.sampleRate = rate
        generator.velocityLoss = loss
        generator.seed = seed
        return generator.generate().samples
    }

    // Measured on 2026-12-02: each of these sets counted 10 before the set anchored again; 5 since. Over 96 generated
    // deadlift sets (seeds 1–12; 12.5, 25, 50 and 100 Hz; 30 % and 50 % velocity loss) 18 counted 10 before. Since,
    // 12 of those count 5 (these nine and three more), 2 count 4 (one rep short) and 4 still count 10 (three at 25 Hz,
    // one at 100 Hz; two of them moved to a 1.2 s template first, whose live reps then came once a cycle while the
    // recount found two match peaks a cycle; the other two were not looked into).
    @Test(
        "five generated deadlifts whose set started on a wrong period count five, not ten",
        arguments: [
            (12.5, 0.5, 1), (12.5, 0.5, 2), (12.5, 0.5, 6), (12.5, 0.5, 9), (25.0, 0.3, 6), (50.0, 0.5, 8),
            (100.0, 0.3, 6), (100.0, 0.5, 2), (100.0, 0.5, 9),
        ] as [(Double, Double, UInt64)])
    func wrongStartPeriodIsCorrected(rate: Double, loss: Double, seed: UInt64) throws {
        let events = detect(Self.deadlifts(rate: rate, loss: loss, seed: seed))
        let ends = events.compactMap { if case .setEnded(let set) = $0 { set } else { nil } }
        let set = try #require(ends.count == 1 ? ends.first : nil, "\(ends.count) sets")
        #expect(set.repCount == 5)
        // The reps announced live before the set anchored again stay announced (8–9 of them): the rule fired.
        #expect((set.liveRepCount ?? 0) > 5)
    }
}
