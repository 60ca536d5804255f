/// Where the sensor sits. It decides which quality figures repd claims: only a sensor fixed to the bar (or a weight
/// stack) moves as the load does, so only `bar` gets velocities and range of motion; a wrist or an arm sensor turns
/// and swings on its own, and gets the tempo only.
public enum SensorPlacement: String, Sendable, Equatable, Hashable, CaseIterable {
    /// Fixed to the bar or the weight stack: tempo, range of motion, velocities, velocity loss.
    case bar
    /// On the wrist: tempo only.
    case wrist
    /// On the upper arm: tempo only.
    case arm
}

/// How one rep moved (docs/QUALITY.md has the method and the measured errors).
///
/// Conventions: *concentric* is the upward motion of the load, *eccentric* the downward one, whatever the lift. A
/// squat or bench press starts at the top (eccentric first, the turnaround at the bottom); a deadlift starts at the
/// bottom (concentric first, the turnaround at the top). A phase is the time the load moves faster than a tenth of
/// that phase's peak speed; the rest is pause.
public struct RepQuality: Sendable, Equatable, Hashable {
    /// Sample time at which the rep's window begins: the rest at its start position before it moved.
    public var start: Double
    /// Sample time at which the rep's window ends: the rest at its start position after it.
    public var end: Double
    /// Whether the rep started at the top (squat, bench: eccentric first); nil when no phase was found.
    public var startsAtTop: Bool?
    /// Seconds of upward motion.
    public var concentric: Double?
    /// Seconds of downward motion.
    public var eccentric: Double?
    /// Seconds of pause at the bottom: inside the rep for a lift that starts at the top, before it (since the
    /// previous rep of the set stopped moving) for one that starts at the bottom; nil for a set's first rep then.
    public var pauseBottom: Double?
    /// Seconds of pause at the top: inside the rep for a lift that starts at the bottom, before it for one that
    /// starts at the top (nil for a set's first rep then).
    public var pauseTop: Double?
    /// The velocities and range of motion; nil when not claimed (see `velocityUnavailable`, or a wrist or arm
    /// placement, which gets the tempo only).
    public var velocity: RepVelocity?
    /// Why a sensor on the bar gets no velocity for this rep (e.g. "sample rate too low"); nil otherwise.
    public var velocityUnavailable: String?

    /// Creates a rep's quality.
    public init(
        start: Double, end: Double, startsAtTop: Bool? = nil, concentric: Double? = nil, eccentric: Double? = nil,
        pauseBottom: Double? = nil, pauseTop: Double? = nil, velocity: RepVelocity? = nil,
        velocityUnavailable: String? = nil
    ) {
        self.start = start
        self.end = end
        self.startsAtTop = startsAtTop
        self.concentric = concentric
        self.eccentric = eccentric
        self.pauseBottom = pauseBottom
        self.pauseTop = pauseTop
        self.velocity = velocity
        self.velocityUnavailable = velocityUnavailable
    }
}

/// A rep's vertical motion, for a sensor on the bar.
public struct RepVelocity: Sendable, Equatable, Hashable {
    /// Range of motion: highest minus lowest position during the rep, m.
    public var rangeOfMotion: Double
    /// Mean velocity of the concentric (upward) phase, m/s: its rise divided by its duration.
    public var meanConcentric: Double
    /// Peak velocity of the concentric phase, m/s.
    public var peakConcentric: Double
    /// How much slower this rep's mean concentric velocity is than the set's fastest rep up to it, in percent
    /// (0 for the fastest).
    public var loss: Double

    /// Creates the figures.
    public init(rangeOfMotion: Double, meanConcentric: Double, peakConcentric: Double, loss: Double = 0) {
        self.rangeOfMotion = rangeOfMotion
        self.meanConcentric = meanConcentric
        self.peakConcentric = peakConcentric
        self.loss = loss
    }
}

/// How a whole set moved, computed again when it ends.
public struct SetQuality: Sendable, Equatable, Hashable {
    /// Each whole rep of the set's final count, in order (a cycle cut short by the stream's start or end has none).
    public var reps: [RepQuality]
    /// The fastest rep's mean concentric velocity, m/s (nil without velocities).
    public var fastestMeanVelocity: Double?
    /// Velocity loss of the set: how much slower the last rep was than the fastest, percent (the usual criterion to
    /// stop a set, e.g. at 20 %); nil without velocities.
    public var velocityLoss: Double?
    /// Why a sensor on the bar gets no velocities for this set; nil otherwise.
    public var velocityUnavailable: String?

    /// Creates a set's quality.
    public init(
        reps: [RepQuality], fastestMeanVelocity: Double? = nil, velocityLoss: Double? = nil,
        velocityUnavailable: String? = nil
    ) {
        self.reps = reps
        self.fastestMeanVelocity = fastestMeanVelocity
        self.velocityLoss = velocityLoss
        self.velocityUnavailable = velocityUnavailable
    }

    /// The set's figures from its reps' qualities: velocity loss of each rep against the fastest before it, and of
    /// the set (last against fastest).
    public init(reps: [RepQuality], velocityUnavailable: String? = nil) {
        var reps = reps
        var fastest: Double?
        for index in reps.indices {
            guard let v = reps[index].velocity?.meanConcentric else { continue }
            fastest = max(fastest ?? v, v)
            reps[index].velocity?.loss = RepKinematics.loss(v, fastest: fastest!)
        }
        let last = reps.last { $0.velocity != nil }?.velocity?.meanConcentric
        self.init(
            reps: reps, fastestMeanVelocity: fastest,
            velocityLoss: last.flatMap { l in fastest.map { RepKinematics.loss(l, fastest: $0) } },
            velocityUnavailable: velocityUnavailable ?? reps.lazy.compactMap(\.velocityUnavailable).first)
    }
}
