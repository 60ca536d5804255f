/// A moment when recent cycles were in rhythm and a set could start: kept by `RepDetector` for plots and
/// diagnostics (why a set did or did not start).
public struct SetCandidate: Sendable, Equatable {
    /// The sample time of the cycle that completed the rhythm, in seconds.
    public var timestamp: Double
    /// The rhythm's period, in seconds.
    public var period: Double
    /// How much the signal over those cycles resembled itself one period earlier (normalized correlation), or nil
    /// when it was not judged: the check is off (`minimumPeriodicity` 0), or less than two periods of signal
    /// existed to compare (the stream or a dropout began just before); the rhythm alone then decides.
    public var periodicity: Double?
    /// How much the vertical motion over those cycles resembled itself half a period earlier, as walking's does
    /// (one bounce per step, two steps per arm swing); nil when not judged: the check is off
    /// (`maximumStepSimilarity` 1), or the vertical motion was too small to matter (below `minimumStepShare`).
    public var stepSimilarity: Double?
    /// Whether a set started here.
    public var started: Bool

    /// Creates a candidate record.
    public init(timestamp: Double, period: Double, periodicity: Double?, stepSimilarity: Double? = nil, started: Bool) {
        self.timestamp = timestamp
        self.period = period
        self.periodicity = periodicity
        self.stepSimilarity = stepSimilarity
        self.started = started
    }
}
