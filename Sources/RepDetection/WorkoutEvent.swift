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
    /// How long the rep took, in seconds (time since the previous rep; the set's typical period for its first rep).
    public var duration: Double
    /// Peak-to-peak size of the rep's movement along its axis, in g.
    public var amplitude: Double

    /// Creates a rep event.
    public init(setNumber: Int, repInSet: Int, totalReps: Int, timestamp: Double, duration: Double, amplitude: Double) {
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
    /// Reps in the set so far (at its start: the reps that established it; at its end: all of them).
    public var repCount: Int

    /// Creates a set event.
    public init(setNumber: Int, timestamp: Double, repCount: Int) {
        self.setNumber = setNumber
        self.timestamp = timestamp
        self.repCount = repCount
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
