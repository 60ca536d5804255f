import MotionCore
import MotionSimulation
import RepDetection
import Testing

/// A set that starts on a wrong period: generated deadlifts (the pull, a pause at lockout, the lowering, a pause on
/// the floor) whose first reps the tracker took for a period of about 0.4–0.6 of the rep's. The template of that
/// length matched twice a cycle (every rep counted twice), or once a cycle with the set-end recount finding two match
/// peaks a cycle. Once the tracker has held the rep's period clearly for a whole length of it (1.3–4.5 times the
/// set's, at about twice it only when the motion did not repeat at the set's period; a tenth of its points may miss),
/// the motion is no longer periodic at the set's period and the set's last two reps came within about one tracked
/// period or each as long as it, the set anchors again there (`RepDetector.followTrackedPeriod`) and its end recounts
/// it at that period. A set whose motion did not repeat at its period while the tracker held a longer one at half
/// of its points is counted at that period at its end (`SetPeriodTally`).
@Suite("A set that started on a wrong period")
struct WrongStartPeriodTests {
    static func deadlifts(rate: Double, loss: Double, seed: UInt64, reps: Int = 5) -> [MotionSample] {
        var generator = BarbellGenerator()
        generator.lift = .deadlift
        generator.reps = reps
        generator.sampleRate = rate
        generator.velocityLoss = loss
        generator.seed = seed
        return generator.generate().samples
    }

    // Measured on 2026-12-02: each of these sets counted 10 before the set anchored again; 5 since. Over 96 generated
    // deadlift sets (seeds 1–12; 12.5, 25, 50 and 100 Hz; 30 % and 50 % velocity loss) 18 counted 10 before. Then 12
    // of those counted 5 (these nine and three more), 2 counted 4 (one rep short) and 4 still 10; since the rules of
    // the tests below, those 4 count 5 too (88 of the 96 count 5, 8 count 4, as the day before).
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

    /// The one set of `samples`.
    static func set(_ samples: [MotionSample]) throws -> SetEvent {
        let ends = detect(samples).compactMap { if case .setEnded(let set) = $0 { set } else { nil } }
        return try #require(ends.count == 1 ? ends.first : nil, "\(ends.count) sets")
    }

    // Measured on 2026-12-02 (`repctl generate barbell --lift deadlift --loss 0`, seeds as given): each counted 7–15
    // before; with the rule for live reps already a tracked period apart disabled (`followedMinimumRatio` 99), 7, 4,
    // 7, 7 and 8.
    @Test(
        "generated deadlifts whose template was shorter than a rep count right when their live reps came once a rep",
        arguments: [(12.5, 6, 5), (25.0, 6, 5), (12.5, 9, 8), (50.0, 31, 8), (25.0, 38, 5)] as [(Double, UInt64, Int)])
    func liveRepsOnceARepAreFollowed(rate: Double, seed: UInt64, reps: Int) throws {
        let set = try Self.set(Self.deadlifts(rate: rate, loss: 0, seed: seed, reps: reps))
        #expect(set.repCount == reps)
    }

    // Measured on 2026-12-02: each counted 9 before, and 9 with either of these disabled: following about twice the
    // set's period when the motion did not repeat at the set's own (`pairMaximumRepetition` −99), or letting the
    // tracker miss the period at a tenth of its points (`TrackedPeriodRun.missShare` −1).
    @Test(
        "generated deadlifts whose tracker lost the rep's period at every rest on the floor, at about twice the set's, count five",
        arguments: [12.5, 25, 50, 100])
    func periodLostAtEachRestIsFollowed(rate: Double) throws {
        let set = try Self.set(Self.deadlifts(rate: rate, loss: 0, seed: 23))
        #expect(set.repCount == 5)
    }

    // Measured on 2026-12-02: each counted 10 before, and 10 with the set-end rule disabled (`setLongerShare` 99).
    @Test(
        "generated deadlifts whose motion never repeated at the set's period are counted at the tracker's at the set's end",
        arguments: [(25.0, 0.0, 9), (25.0, 0.3, 9), (50.0, 0.0, 39), (100.0, 0.0, 39)] as [(Double, Double, UInt64)])
    func setEndCountsAtTheLongerPeriod(rate: Double, loss: Double, seed: UInt64) throws {
        let set = try Self.set(Self.deadlifts(rate: rate, loss: loss, seed: seed))
        #expect(set.repCount == 5)
    }
}
