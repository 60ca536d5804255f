/// A run of grid points in a set at which the period tracker held one clear period that the set's template is not at
/// (`RepDetector.followTrackedPeriod`): where it began, the period, the points at which the tracker lost it for a
/// moment, and how much the motion repeated at the set's own period meanwhile.
///
/// A heavy deadlift's period is lost for a moment at every rep, while the bar rests on the floor (the tracker then
/// finds a short period, or a group of reps, with a lower periodicity): up to `missShare` of the period's points may
/// be missed before the run starts again.
struct TrackedPeriodRun {
    /// The share of a tracked period's points at which the tracker may lose the period without ending the run.
    static let missShare = 0.1
    /// The tracked period must stay within this factor of the run's first one.
    static let tolerance = 1.15

    /// The run's period in grid points (0: no run).
    private(set) var lag = 0
    /// Where the run began.
    private var since = 0
    private var misses = 0
    private var repetition = 0.0
    private var points = 0
    /// Whether the tracked period was about twice the set's at some point of the run.
    private(set) var nearlyTwice = false

    /// The mean NSDF at the set's own period over the run's points, −1…1.
    var meanRepetition: Double { points > 0 ? repetition / Double(points) : 0 }

    /// Ends the run.
    mutating func reset() { lag = 0 }

    /// A point at which the tracker did not hold a period the run could use: the run ends when there were too many.
    mutating func miss() {
        guard lag > 0 else { return }
        misses += 1
        if Double(misses) > Self.missShare * Double(lag) { lag = 0 }
    }

    /// A point at which the tracker held `k` clearly, with `repetition` the NSDF at the set's own period: it goes on
    /// the run, or starts a new one when `k` is not the run's period. Returns whether the run has now lasted a whole
    /// period (it then ends, and the caller decides).
    mutating func note(at i: Int, lag k: Int, repetition: Double, nearlyTwice twice: Bool) -> Bool {
        if lag == 0 || !RepDetector.within(Self.tolerance, k, lag) {
            lag = k
            since = i
            misses = 0
            self.repetition = 0
            points = 0
            nearlyTwice = false
            return false
        }
        self.repetition += repetition
        points += 1
        if twice { nearlyTwice = true }
        return i - since >= lag
    }
}
