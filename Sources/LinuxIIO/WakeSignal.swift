import CLinuxShims

#if canImport(Glibc)
    import Glibc
#endif

/// An eventfd (`EFD_CLOEXEC | EFD_NONBLOCK`) that wakes a thread blocked in `poll()` on `fd`: to stop the IIO
/// reader, or to tell the uplink's thread about new events. The one eventfd wake-up in repd.
public final class WakeSignal: Sendable {
    /// The descriptor to poll for `POLLIN`.
    public let fd: Int32

    /// A new, unfired signal.
    public init() { fd = repd_eventfd() }

    deinit { close(fd) }

    /// Wakes the thread (adds 1 to the counter); callable from any thread, never blocks.
    public func fire() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, 8) }
    }

    /// Whether it was fired and not reset since (a stop signal stays fired).
    public var fired: Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) > 0
    }

    /// Waits up to `seconds` (whole milliseconds) for the signal; true when it was fired. The polling capture's wait
    /// between reads and the supervisor's between rescans.
    func wait(seconds: Double) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, Int32(seconds * 1000)) > 0
    }

    /// Resets the counter (after a wake-up was handled); does nothing when it was not fired.
    public func reset() {
        var count: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &count) { read(fd, $0.baseAddress, 8) }
    }
}
