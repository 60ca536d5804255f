import RepProtocol

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
        let bytes = Array(state.utf8)
        let sent = withUnixSocketAddress(socketPath) { address, length in  // a leading @: the abstract namespace
            bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL), address, length) }
        }
        return sent == bytes.count
    }
}
