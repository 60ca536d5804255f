import MotionCore
import MotionSimulation
import RepDetection
import Testing

/// A set that starts on a wrong period: generated deadlifts (the pull, a pause at lockout, the lowering, a pause on
/// the floor) whose first reps the tracker took for a period of about 0.6 of the rep's. The template of that length
/// matched twice a cycle, and every rep counted twice. Once the tracker has found the rep's period clearly for a whole
/// period, while the motion is no longer periodic at the set's, the set anchors again there
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
    // deadlift sets (seeds 1–12; 12.5, 25, 50 and 100 Hz; 30 % and 50 % velocity loss) 18 counted 10 before and 4
    // since (three at 25 Hz, one at 100 Hz). Two of those are sets that moved to a 1.2 s template, whose live reps came
    // once a cycle while the recount found two match peaks a cycle; the other two were not looked into.
    @Test(
        "five generated deadlifts whose set started on a wrong period count five, not ten",
        arguments: [
            (12.5, 0.5, 1), (12.5, 0.5, 2), (12.5, 0.5, 6), (12.5, 0.5, 9), (25.0, 0.3, 6), (50.0, 0.5, 8),
            (100.0, 0.3, 6), (100.0, 0.5, 2), (100.0, 0.5, 9),
        ] as [(Double, Double, UInt64)])
    func wrongStartPeriodIsCorrected(rate: Double, loss: Double, seed: UInt64) {
        #expect(repCount(Self.deadlifts(rate: rate, loss: loss, seed: seed)) == 5)
    }
}
