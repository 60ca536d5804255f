// Elementary functions without Foundation: the C library's, which every platform Swift runs on has.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(ucrt)
    import ucrt
#endif

@inline(__always) func _sin(_ x: Double) -> Double { sin(x) }
@inline(__always) func _cos(_ x: Double) -> Double { cos(x) }
@inline(__always) func _log(_ x: Double) -> Double { log(x) }
@inline(__always) func _exp(_ x: Double) -> Double { exp(x) }
