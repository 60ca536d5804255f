#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Unix time, for the figures repd-web shows (repd's own events carry repd's times).
enum WallClock {
    /// Seconds since 1970, fractional (CLOCK_REALTIME).
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// repd-web's version (the same as repd's).
public enum RepdWebVersion {
    /// The version string.
    public static let current = "0.1.0"
}

/// The host's name: a station's name until its repd's events name it (repd puts the same name in them).
public func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "station" }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "station" : name
}
