/// One accelerometer reading: time in seconds, acceleration in g (1 g = 9.80665 m/s²), gravity included.
///
/// The shape is the one Core Motion test code uses, so fixtures written for `CMAccelerometerData` mocks carry over.
public struct MotionSample: Sendable, Hashable, BitwiseCopyable {
    /// Seconds on the provider's clock. Monotonic within one stream; the origin is the provider's choice.
    public var timestamp: Double
    /// Acceleration along x, in g.
    public var ax: Double
    /// Acceleration along y, in g.
    public var ay: Double
    /// Acceleration along z, in g.
    public var az: Double

    /// Creates a sample from a time in seconds and an acceleration in g.
    public init(timestamp: Double, ax: Double, ay: Double, az: Double) {
        self.timestamp = timestamp
        self.ax = ax
        self.ay = ay
        self.az = az
    }

    /// Standard gravity, in m/s² per g.
    public static let standardGravity: Double = 9.80665

    /// The largest acceleration along an axis a sample may carry, in g. The strongest accelerometers made for motion
    /// measure ±400 g; a larger value is a unit mix-up (m/s² read as g is 9.8 times larger, still within it) or a
    /// broken reading, and one such value would swamp every sum the detector keeps.
    public static let accelerationLimit: Double = 1000

    /// The latest time, in seconds either side of the clock's origin, a sample may carry: 10¹² s is 31 700 years. A
    /// larger value is a time in nanoseconds or microseconds read as seconds.
    public static let timestampLimit: Double = 1e12

    /// Whether the sample's time and acceleration are finite and within `timestampLimit` and `accelerationLimit`.
    /// The detector ignores a sample that is not (and counts it); a fixture row that is not is refused.
    @inlinable public var isPlausible: Bool {
        abs(timestamp) <= Self.timestampLimit && abs(ax) <= Self.accelerationLimit && abs(ay) <= Self.accelerationLimit
            && abs(az) <= Self.accelerationLimit
    }

    /// The length of the acceleration vector, in g.
    public var magnitude: Double { (ax * ax + ay * ay + az * az).squareRoot() }

    /// The same sample shifted in time by `offset` seconds.
    public func shifted(by offset: Double) -> MotionSample {
        MotionSample(timestamp: timestamp + offset, ax: ax, ay: ay, az: az)
    }
}
