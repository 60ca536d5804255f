/// A direction or acceleration in the sensor frame (g when it is an acceleration).
public struct Vector3: Sendable, Hashable {
    /// Component along x.
    public var x: Double
    /// Component along y.
    public var y: Double
    /// Component along z.
    public var z: Double

    /// Creates a vector from its components.
    public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// The unit vector along x.
    public static let x = Vector3(1, 0, 0)
    /// The unit vector along y.
    public static let y = Vector3(0, 1, 0)
    /// The unit vector along z.
    public static let z = Vector3(0, 0, 1)
    /// The zero vector.
    public static let zero = Vector3(0, 0, 0)

    /// Euclidean length.
    public var length: Double { (x * x + y * y + z * z).squareRoot() }

    /// This vector scaled to length 1 (the zero vector stays zero).
    public var normalized: Vector3 {
        let l = length
        return l > 0 ? self * (1 / l) : self
    }

    /// Component-wise sum.
    public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    /// Scaling by a number.
    public static func * (a: Vector3, k: Double) -> Vector3 { Vector3(a.x * k, a.y * k, a.z * k) }
    /// The dot product.
    public func dot(_ b: Vector3) -> Double { x * b.x + y * b.y + z * b.z }
}
