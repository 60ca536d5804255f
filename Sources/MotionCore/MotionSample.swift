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

    /// The length of the acceleration vector, in g.
    public var magnitude: Double { (ax * ax + ay * ay + az * az).squareRoot() }

    /// The same sample shifted in time by `offset` seconds.
    public func shifted(by offset: Double) -> MotionSample {
        MotionSample(timestamp: timestamp + offset, ax: ax, ay: ay, az: az)
    }
}
