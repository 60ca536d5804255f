import CBuildVersion

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The version of repd, repctl and repd-web (`--version`; `hello`'s and `status`'s `version`; the `version` of the
/// uplink's retained status message): the version the build was given (`make VERSION=…`; a package's is its Debian version, such as
/// `0.1.0~git20261205.8858799`), else `baseVersion`.
public let repdVersion: String = {
    let built = String(cString: repd_build_version())
    return built.isEmpty ? baseVersion : built
}()

/// The release the sources are at: the version of a build that was given none (a plain `swift build`).
public let baseVersion = "0.1.0"

/// The Unix time now, in seconds, fractional (`CLOCK_REALTIME`): the `wall` field of events, and every other wall
/// time repd, repctl, repd-web and the uplink take. The one wall clock (sample times use the monotonic clock).
public func wallClock() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// The host's name (`gethostname(2)`), "" when it cannot be read: the default station name of repd's events and
/// of repd-web's page.
public func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
