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
    /// How much those cycles moved like walking (see `RepDetectorConfiguration.maximumStepSimilarity`); nil when
    /// not judged: the check is off (`maximumStepSimilarity` 1), the rhythm is neither as long as a step nor as a
    /// stride, the cycles did not look alike anyway, or the vertical motion was too small (below `minimumStepShare`).
    /// Judged only for cycles that looked alike, so a judged candidate that did not start was refused as walking.
    public var stepSimilarity: Double?
    /// Whether the cycles were refused because they moved like walking.
    public var refusedAsWalking: Bool { !started && stepSimilarity != nil }
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
