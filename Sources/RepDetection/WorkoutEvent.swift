/// One counted repetition.
public struct RepEvent: Sendable, Equatable, Hashable {
    /// The set this rep belongs to (1-based, counting from the detector's start or last reset).
    public var setNumber: Int
    /// The rep's number within its set (1-based).
    public var repInSet: Int
    /// Reps counted since the detector's start or last reset, this one included.
    public var totalReps: Int
    /// The sample time (seconds, the provider's clock) at which the rep completed.
    public var timestamp: Double
    /// How long the rep took, in seconds (time since the previous rep; the tracked period for a set's first rep).
    public var duration: Double
    /// Size of the set's cycle of motion, in g: 2√2 × the RMS of its cycle template (a sine's peak-to-peak).
    public var amplitude: Double
    /// How the rep moved (tempo; with a sensor on the bar, range of motion and velocities), measured from the raw
    /// samples when the rep is announced; nil when its samples are not held.
    public var quality: RepQuality?

    /// Creates a rep event.
    public init(
        setNumber: Int, repInSet: Int, totalReps: Int, timestamp: Double, duration: Double, amplitude: Double,
        quality: RepQuality? = nil
    ) {
        self.quality = quality
        self.setNumber = setNumber
        self.repInSet = repInSet
        self.totalReps = totalReps
        self.timestamp = timestamp
        self.duration = duration
        self.amplitude = amplitude
    }
}

/// The start or end of a set.
public struct SetEvent: Sendable, Equatable, Hashable {
    /// The set's number (1-based).
    public var setNumber: Int
    /// Sample time of the event: when the set's first rep began (start) or its last rep completed (end).
    public var timestamp: Double
    /// Reps in the set so far (at its start: the earlier reps found when it was established; at its end: the final
    /// count, from the whole set counted again).
    public var repCount: Int
    /// At a set's end, the count announced live (by `rep` events) when it differs from the final `repCount`; nil
    /// otherwise.
    public var liveRepCount: Int?
    /// At a set's end, how each rep of the final count moved (measured again with the samples after each rep) and
    /// the set's velocity loss; nil at a start, or when no rep could be measured.
    public var quality: SetQuality?

    /// Creates a set event.
    public init(setNumber: Int, timestamp: Double, repCount: Int, liveRepCount: Int? = nil, quality: SetQuality? = nil)
    {
        self.quality = quality
        self.setNumber = setNumber
        self.timestamp = timestamp
        self.repCount = repCount
        self.liveRepCount = liveRepCount
    }
}

/// Everything the detector reports, in the order it happened.
public enum WorkoutEvent: Sendable, Equatable, Hashable {
    /// A set began (announced when its rhythm is established, before its reps).
    case setStarted(SetEvent)
    /// A rep was counted.
    case rep(RepEvent)
    /// A set ended: no rep for `restToEndSet` seconds, or the stream ended.
    case setEnded(SetEvent)
}
