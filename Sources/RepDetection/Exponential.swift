#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(ucrt)
    import ucrt
#endif

/// e^x from the platform's C library (no Foundation).
@inline(__always) func exponential(_ x: Double) -> Double { exp(x) }

/// The cosine of `x` radians from the platform's C library (no Foundation).
@inline(__always) func cosine(_ x: Double) -> Double { cos(x) }
