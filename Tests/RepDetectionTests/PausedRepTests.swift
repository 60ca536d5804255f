import MotionCore
import MotionSimulation
import RepDetection
import Testing

/// Paused reps: a paused squat or bench press holds the bottom 1–2 s, a paused deadlift the lockout. The bar is still
/// twice a rep, and the set's first rep can make the tracker pick a fraction of it (the braking of the way down and
/// the drive of the way up, a pause apart, look alike). Generated sets (`BarbellGenerator.turnaroundPause`), each
/// counted exactly since 2026-12-02 (`repctl eval` on 432 such sets of 5 and 8 reps, pauses of 1, 1.5 and 2 s at
/// 25, 50 and 100 Hz, seeds 1–8: 324 wrong before, 12 after, 4 since the fifteenth session). Each test below fails
/// with its rule disabled; the rules work together (a set that started on a fraction of the rep anchors again at its
/// period, and then needs the rest before the set to place its cycles), so disabling one fails some cases of the
/// others too.
@Suite("Paused reps")
struct PausedRepTests {
    static func set(
        _ lift: BarbellGenerator.Lift, reps: Int = 5, pause: Double, rate: Double, seed: UInt64
    ) throws -> SetEvent {
        var generator = BarbellGenerator()
        generator.lift = lift
        generator.reps = reps
        generator.turnaroundPause = pause
        generator.sampleRate = rate
        generator.seed = seed
        let ends = detect(generator.generate().samples).compactMap {
            if case .setEnded(let set) = $0 { set } else { nil }
        }
        return try #require(ends.count == 1 ? ends.first : nil, "\(ends.count) sets")
    }

    // Before: each counted one short. The still moment nearest the set's first cycle was the pause at the bottom of
    // the first rep, so every cycle ran from one bottom to the next and the first rep's way down and the last one's
    // way up were pieces at the set's edges. Now the cycles start where the rest before the set ended
    // (`MotionGrid.onset`: a still moment less than a period after that rest, moving at least half as much as the
    // last period between, is a pause inside the first rep).
    @Test(
        "paused squats, bench presses and deadlifts count their first rep: their cycles start where the rest before the set ended",
        arguments: [
            (BarbellGenerator.Lift.squat, 25.0, 1), (.squat, 50, 1), (.squat, 100, 1), (.bench, 50, 2),
            (.deadlift, 50, 1),
        ] as [(BarbellGenerator.Lift, Double, UInt64)])
    func cyclesStartAtTheRest(lift: BarbellGenerator.Lift, rate: Double, seed: UInt64) throws {
        #expect(try Self.set(lift, pause: 1.5, rate: rate, seed: seed).repCount == 5)
    }

    // Before: 10, 14, 10 and 9. Half a period brings the way down's braking onto the way up's drive, so the cycle
    // repeats its shape and energy half a period later, like a pair of alternating lunges, and was counted as two
    // reps. Its height reverses there (about −0.7): up for one half, down for the other.
    @Test(
        "squats and bench presses paused 2 s at the bottom are not taken for pairs of reps",
        arguments: [
            (BarbellGenerator.Lift.squat, 5, 50.0, 1), (.squat, 8, 25, 2), (.bench, 5, 50, 1), (.bench, 8, 100, 3),
        ] as [(BarbellGenerator.Lift, Int, Double, UInt64)])
    func pausedCycleIsNotAPair(lift: BarbellGenerator.Lift, reps: Int, rate: Double, seed: UInt64) throws {
        #expect(try Self.set(lift, reps: reps, pause: 2, rate: rate, seed: seed).repCount == reps)
    }

    // Before: 9 of 5 and 15 of 8. The set started, within its first rep, on about a quarter of the rep (4.1 times
    // shorter than the period the tracker then held); a set follows the tracked period from 1.3 to 4.5 times its own.
    @Test(
        "deadlifts paused at lockout whose set started on a quarter of the rep count right",
        arguments: [(5, 2.0, 50.0, 2), (5, 1.0, 25, 1), (8, 1.5, 25, 1), (8, 2.0, 100, 2)]
            as [(Int, Double, Double, UInt64)])
    func quarterPeriodIsFollowed(reps: Int, pause: Double, rate: Double, seed: UInt64) throws {
        #expect(try Self.set(.deadlift, reps: reps, pause: pause, rate: rate, seed: seed).repCount == reps)
    }

    // Before: 10, 16, 9 and 16. The set started on a third of the rep (2.8–2.9 times shorter, beyond the old bound
    // of 2.8) and anchors again at the rep's period several reps later, where the nearest still moment is a pause at
    // the bottom: it looks for the rest before the set where the set began (without that, each one short).
    @Test(
        "a paused set that anchored again at the rep's period counts its first rep",
        arguments: [(5, 25.0, 1), (8, 50, 1), (8, 50, 2), (8, 25, 2)] as [(Int, Double, UInt64)])
    func anchoredAgainFromTheRest(reps: Int, rate: Double, seed: UInt64) throws {
        #expect(try Self.set(.squat, reps: reps, pause: 1, rate: rate, seed: seed).repCount == reps)
    }

    // Before: 10 and 16. The set started on half the rep, its template matched once a rep live, and the set-end
    // recount found two match peaks a rep. The tracker held twice the set's period, which is followed only when the
    // motion did not repeat at the set's own (alternating lunges' two legs do; a paused rep's halves do too). Live reps
    // that already come once a tracked period are not a pair's legs counted one by one, so the set follows it then.
    @Test(
        "bench presses paused 2 s whose live reps came once a rep, on a template of half the rep, count right",
        arguments: [(5, 50.0), (8, 25)] as [(Int, Double)])
    func liveRepsOnceATrackedPairAreFollowed(reps: Int, rate: Double) throws {
        #expect(try Self.set(.bench, reps: reps, pause: 2, rate: rate, seed: 2).repCount == reps)
    }

    // Before: 9 of 5, 15 of 8 and 7 of 8. A deadlift paused 2 s at lockout started on about a quarter of the rep, whose
    // template matched the pull and, 0.9 s later, the lowering, then nothing for the 3.6 s left of a 4.6 s rep. A set
    // anchors again at the tracked period when its last two reps came within 1.25 of it; it also required each to be
    // under 0.75 of it, which the 3.6 s gap is not.
    @Test(
        "deadlifts paused 2 s whose template matched the pull and the lowering a second apart count right",
        arguments: [(5, 25.0, 5), (8, 25, 5), (8, 50, 6), (5, 50, 7), (8, 100, 7)] as [(Int, Double, UInt64)])
    func unevenPairOfMatchesIsFollowed(reps: Int, rate: Double, seed: UInt64) throws {
        #expect(try Self.set(.deadlift, reps: reps, pause: 2, rate: rate, seed: seed).repCount == reps)
    }

    // Before: 5, 5 and 7 of 8. A slowing set with two pauses a rep of about 1.1 s, a standing rest and the bottom,
    // started on a third of the rep; its live reps came once a rep and it anchored again at the rep's period. The
    // still moment's phase, projected from the rest before the set over five periods, had drifted onto the middle of
    // a rep (the first case: reps of 3.3 s growing to 4.1 s, projected at 4 s): its cycles stopped matching a few
    // reps back. The live reps' phase, whose cycles reach back to the set's first rep, now wins.
    @Test(
        "a slowing paused set anchored again on live reps that came once a rep keeps their phase",
        arguments: [
            (BarbellGenerator.Lift.squat, 1.0, 50.0), (.squat, 1.5, 25), (.bench, 2.0, 25),
        ] as [(BarbellGenerator.Lift, Double, Double)])
    func liveRepsPhaseWins(lift: BarbellGenerator.Lift, pause: Double, rate: Double) throws {
        #expect(try Self.set(lift, reps: 8, pause: pause, rate: rate, seed: 10).repCount == 8)
    }

    // Before: 10 of 5 each as `repctl generate barbell` makes them (not run with the rule off here). A paused set started on a third of its rep (the pause at the bottom and the rest at the
    // top look alike); live, that template matched once a rep, 3.7 s apart, but the set-end recount at its own period
    // matched both halves of every rep. Live reps twice the set's period apart or more now make the recount count at
    // their interval (`RepDetector.liveFollowedPeriod`).
    @Test(
        "a set whose live reps came twice its period apart is counted again at their interval, not doubled",
        arguments: [
            (BarbellGenerator.Lift.squat, 1.0, 25.0, 12), (.bench, 1, 50, 12), (.squat, 1, 100, 5),
        ] as [(BarbellGenerator.Lift, Double, Double, UInt64)])
    func liveIntervalRecount(lift: BarbellGenerator.Lift, pause: Double, rate: Double, seed: UInt64) throws {
        #expect(try Self.set(lift, reps: 5, pause: pause, rate: rate, seed: seed).repCount == 5)
    }
}
