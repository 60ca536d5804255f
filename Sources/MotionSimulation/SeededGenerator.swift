/// A small, fast, seedable random number generator (SplitMix64), so generated workouts are the same on every run
/// and every platform.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits (one SplitMix64 step).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A normally distributed value (Box–Muller) with the given mean and standard deviation.
    public mutating func nextGaussian(mean: Double = 0, standardDeviation: Double = 1) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        let radius = (-2 * _log(u1)).squareRoot()
        return mean + standardDeviation * radius * _cos(2 * Double.pi * u2)
    }
}
