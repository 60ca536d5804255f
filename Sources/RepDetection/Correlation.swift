/// A normalized correlation about zero (no means removed), accumulated pair by pair: the periodicity and step
/// checks compare a signal with itself some time earlier.
struct Correlation {
    private(set) var xy = 0.0, xx = 0.0, yy = 0.0

    mutating func add(_ x: Double, _ y: Double) {
        xy += x * y
        xx += x * x
        yy += y * y
    }

    /// −1 to 1; 0 when either side is all zeros.
    var value: Double { xx > 0 && yy > 0 ? xy / (xx * yy).squareRoot() : 0 }
}
