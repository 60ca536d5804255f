import MotionCore

/// A sinusoidal acceleration along any direction, on top of gravity along any direction.
///
/// `a(t) = gravity + direction · (offset + amplitude · sin(2π·frequency·t + phase))`, in g.
public struct SineMotion: Sendable {
    /// Cycles per second.
    public var frequency: Double
    /// Peak acceleration, in g.
    public var amplitude: Double
    /// A constant added along `direction`, in g.
    public var offset: Double
    /// Phase in radians.
    public var phase: Double
    /// The direction of the motion (normalized on use).
    public var direction: Vector3
    /// Gravity as the sensor sees it, in g (e.g. `.z` for a sensor lying flat; `.zero` for none).
    public var gravity: Vector3

    /// Creates a sine motion; see the type's documentation for the formula.
    public init(
        frequency: Double,
        amplitude: Double,
        offset: Double = 0,
        phase: Double = 0,
        direction: Vector3 = .y,
        gravity: Vector3 = .z
    ) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.offset = offset
        self.phase = phase
        self.direction = direction
        self.gravity = gravity
    }

    /// The acceleration at time `t`, in g.
    public func acceleration(at t: Double) -> Vector3 {
        let value = offset + amplitude * _sin(2 * Double.pi * frequency * t + phase)
        return gravity + direction.normalized * value
    }

    /// The sample at time `t`.
    public func sample(at t: Double) -> MotionSample {
        let a = acceleration(at: t)
        return MotionSample(timestamp: t, ax: a.x, ay: a.y, az: a.z)
    }

    /// Samples this motion at `sampleRate` Hz for `duration` seconds.
    public func samples(duration: Double, sampleRate: Double) -> [MotionSample] {
        SignalGenerator.samples(duration: duration, sampleRate: sampleRate) { sample(at: $0) }
    }
}
