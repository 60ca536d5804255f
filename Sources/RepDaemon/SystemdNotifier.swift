#if canImport(Glibc)
import Glibc
#endif

/// `sd_notify(3)` without libsystemd: one datagram per message to `$NOTIFY_SOCKET` (a path, or `@name` for the
/// abstract namespace). Does nothing when the variable is absent (not started by systemd).
public struct SystemdNotifier: Sendable {
    /// The socket address from `NOTIFY_SOCKET`, nil when not under systemd.
    public let socketPath: String?
    /// `WATCHDOG_USEC` as seconds, when the watchdog is on for this process.
    public let watchdogInterval: Double?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from the environment.
    public init(environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) {
        let path = environment("NOTIFY_SOCKET")
        socketPath = (path?.isEmpty ?? true) ? nil : path
        if let usec = environment("WATCHDOG_USEC").flatMap({ UInt64($0) }), usec > 0,
            environment("WATCHDOG_PID").flatMap({ Int32($0) }).map({ $0 == getpid() }) ?? true
        {
            watchdogInterval = Double(usec) / 1e6
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends `state` (e.g. `READY=1`, `STATUS=…`, `WATCHDOG=1`, `STOPPING=1`). Returns whether it was delivered.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            if pathBytes.count < raw.count { raw[pathBytes.count] = 0 }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        return sent == bytes.count
    }
}
