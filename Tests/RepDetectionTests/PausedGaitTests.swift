import Testing

@testable import RepDetection

/// `PausedGait` on grid points (25 a second): a walk or confidently refused motion, a pause, and a run after it.
@Suite("Gait that paused and goes on starts no set")
struct PausedGaitTests {
    /// Points of a second.
    static let second = Int((1 / MotionGrid.spacing).rounded())

    /// A walk of `points` grid points at `lag` from point 0, then `pause` non-periodic points.
    static func walked(points: Int, lag: Int, pause: Int) -> PausedGait {
        var gait = PausedGait()
        for i in 0..<points { gait.noteWalking(at: i, lag: lag) }
        for _ in 0..<pause { gait.notePause() }
        return gait
    }

    @Test("a walk, a pause of a second and a run at the walk's period (±15 %) within 10 s is held back")
    func walkPauseWalkIsHeldBack() {
        let gait = Self.walked(points: 40, lag: 27, pause: Self.second)
        let now = 39 + 3 * Self.second
        #expect(gait.holdsBack(at: now, lag: 27))
        #expect(gait.holdsBack(at: now, lag: 27 * 1.14))
        #expect(gait.holdsBack(at: now, lag: 27 / 1.14))
        #expect(!gait.holdsBack(at: now, lag: 27 * 1.2), "another pace")
        #expect(!gait.holdsBack(at: now, lag: 54), "twice the period: a set at another pace")
        #expect(!gait.holdsBack(at: 39 + 11 * Self.second, lag: 27), "more than 10 s after the walk")
    }

    @Test("without a pause, or after a flicker of the walking rule, a run at the same period is not held back")
    func noPauseOrFlickerIsNotHeldBack() {
        let now = 39 + 3 * Self.second
        #expect(!Self.walked(points: 40, lag: 27, pause: Self.second - 1).holdsBack(at: now, lag: 27))
        #expect(!Self.walked(points: 7, lag: 27, pause: 2 * Self.second).holdsBack(at: now, lag: 27))
        #expect(Self.walked(points: 8, lag: 27, pause: 2 * Self.second).holdsBack(at: now, lag: 27))
        #expect(!PausedGait().holdsBack(at: now, lag: 27), "no gait yet")
    }

    @Test("walking points after a pause start a new walk: a flicker then is not gait, whatever came before")
    func aNewWalkCountsItsOwnPoints() {
        var gait = Self.walked(points: 40, lag: 27, pause: 2 * Self.second)
        // The earlier walk is held until the next walking moment replaces it.
        #expect(gait.holdsBack(at: 100, lag: 27))
        for i in 100..<103 { gait.noteWalking(at: i, lag: 30) }
        for _ in 0..<(2 * Self.second) { gait.notePause() }
        #expect(!gait.holdsBack(at: 103 + 3 * Self.second, lag: 30), "three walking points after the pause")
        #expect(!gait.holdsBack(at: 103 + 3 * Self.second, lag: 27), "the old walk's period is gone")
    }

    @Test("two confident refusals outside a set are gait; one is not")
    func refusalsMakeGait() {
        var once = PausedGait()
        once.noteRefusal(at: 0, lag: 22)
        for _ in 0..<Self.second { once.notePause() }
        #expect(!once.holdsBack(at: 5 * Self.second, lag: 22))
        var twice = once
        twice.noteRefusal(at: 4, lag: 22)
        #expect(
            !twice.holdsBack(at: 5 * Self.second, lag: 22), "the second refusal came after the pause: no pause since")
        var refused = PausedGait()
        refused.noteRefusal(at: 0, lag: 22)
        refused.noteRefusal(at: 4, lag: 22)
        for _ in 0..<Self.second { refused.notePause() }
        #expect(refused.holdsBack(at: 5 * Self.second, lag: 22))
        #expect(!refused.holdsBack(at: 5 * Self.second, lag: 30))
    }
}
