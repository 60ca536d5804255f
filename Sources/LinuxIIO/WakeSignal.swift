import CLinuxShims

#if canImport(Glibc)
    import Glibc
#endif

/// An eventfd (`EFD_CLOEXEC | EFD_NONBLOCK`) that wakes a thread blocked in `poll()` on `fd`: to stop the IIO
/// reader, or to tell the uplink's thread about new events. The one eventfd wake-up in repd.
public final class WakeSignal: Sendable {
    /// The descriptor to poll for `POLLIN`.
    public let fd: Int32

    /// A new, unfired signal; throws (kind `.io`, naming eventfd and errno's reason, e.g. EMFILE when the process
    /// has no descriptor left) when the kernel gives no eventfd: a signal without one could never wake the thread,
    /// and whoever stops it would wait in `join()` forever.
    public static func make() throws(IIOError) -> WakeSignal {
        try WakeSignal(creating: repd_eventfd)
    }

    /// A new signal on the descriptor `create` returns (`repd_eventfd`; tests pass one that fails): -1 and `errno`
    /// is an error.
    init(creating create: () -> Int32) throws(IIOError) {
        let fd = create()
        guard fd >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            throw IIOError(
                .io, path: "",
                "cannot create an eventfd (EFD_CLOEXEC | EFD_NONBLOCK) to wake a thread: \(reason)"
                    + (code == EMFILE || code == ENFILE ? " (no file descriptor left: raise LimitNOFILE)" : ""))
        }
        self.fd = fd
    }

    /// A new, unfired signal, without checking that the kernel gave an eventfd: when it did not (`fd` is -1), `fire()`
    /// wakes nothing. Only for a thread that also wakes on its own: the uplink's polls with a timeout and reads its
    /// stop flag each time, so without the eventfd it is slower to see new events and a stop, never stuck.
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
