/// Remembers the pace of the last gait the detector saw outside a set, so that walking that paused and went on (a
/// walk of a few metres, a turn, the walk back) does not start a set at that pace.
///
/// Gait here is either a walk (at least `leastWalkingPoints` grid points judged walking, step 5 of the method) or
/// motion the exercise gate refused with confidence at least `leastRefusals` times, outside a set. When the motion
/// then stopped being periodic for at least `leastPause` seconds, a run of periodic motion at that gait's period
/// (within `paceTolerance`) starts no set until `memory` seconds after the gait's last moment: the gate judges the
/// first seconds of a walk that resumes with the window still holding the pause, and on some wrists it takes them
/// for exercise (docs/DETECTOR.md, "Walking on after a pause").
struct PausedGait {
    /// How long (s) after the gait's last moment a run at its pace is held back.
    static let memory = 10.0
    /// The largest ratio between the run's period and the gait's that counts as the gait's pace.
    static let paceTolerance = 1.15
    /// How long (s) the motion must have been non-periodic since the gait: without a pause, the run is the same
    /// motion going on (a set the walking rule flickered on for a moment), which the gait's hold-offs already judge.
    static let leastPause = 1.0
    /// How many grid points of a walk make it gait (fewer: a flicker of the walking rule inside a set's motion).
    static let leastWalkingPoints = 8
    /// How many confident refusals make motion gait.
    static let leastRefusals = 2

    private var walk = Episode()
    private var refused = Episode()

    /// Moments of one kind (walking, or confident refusals): the run they make now (its moments since the last pause
    /// of `leastPause`), and the last moment of a run that held enough of them to be gait, with its period and the
    /// non-periodic points since. A later run too short to be gait (a flicker) leaves that gait as it was.
    private struct Episode {
        var moments = 0
        var pausedPoints = 0
        var gaitLast = Int.min / 2
        var gaitLag = 0
        var pausedSinceGait = 0

        mutating func note(at i: Int, lag k: Int, leastMoments: Int) {
            moments = pausedPoints >= PausedGait.pausePoints ? 1 : moments + 1
            pausedPoints = 0
            if moments >= leastMoments {
                gaitLast = i
                gaitLag = k
                pausedSinceGait = 0
            }
        }

        mutating func notePause() {
            pausedPoints += 1
            pausedSinceGait += 1
        }

        func holdsBack(at i: Int, lag: Double) -> Bool {
            guard gaitLag > 0, pausedSinceGait >= PausedGait.pausePoints,
                Double(i - gaitLast) <= PausedGait.memoryPoints
            else {
                return false
            }
            let gait = Double(gaitLag)
            return max(gait, lag) / min(gait, lag) <= PausedGait.paceTolerance
        }
    }

    fileprivate static let pausePoints = Int((leastPause / MotionGrid.spacing).rounded())
    fileprivate static let memoryPoints = memory / MotionGrid.spacing

    /// Outside a set, grid point `i` was judged walking at period `lag` (grid points).
    mutating func noteWalking(at i: Int, lag: Int) {
        walk.note(at: i, lag: lag, leastMoments: Self.leastWalkingPoints)
    }

    /// Outside a set, the gate refused grid point `i`'s motion at period `lag` with confidence.
    mutating func noteRefusal(at i: Int, lag: Int) {
        refused.note(at: i, lag: lag, leastMoments: Self.leastRefusals)
    }

    /// The motion at this grid point was not periodic (and not walking).
    mutating func notePause() {
        walk.notePause()
        refused.notePause()
    }

    /// Whether a run of periodic motion at period `lag` (grid points) at grid point `i` is paused gait going on.
    func holdsBack(at i: Int, lag: Double) -> Bool {
        guard lag > 0 else { return false }
        return walk.holdsBack(at: i, lag: lag) || refused.holdsBack(at: i, lag: lag)
    }
}
