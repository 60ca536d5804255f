import CLinuxShims

#if canImport(Glibc)
import Glibc
#endif

/// A dedicated POSIX thread (not a Task: it blocks in poll() and must never wait behind other work).
/// Joined exactly once, by whoever owns it.
final class ReaderThread: Sendable {
    private let thread: pthread_t?

    private final class Context {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Context(name: String(name.prefix(15)), body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { raw in
            let context = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
            _ = repd_set_thread_name(context.name)
            context.body()
            return nil
        }, context)
        if result == 0 {
            thread = handle
        } else {
            Unmanaged<Context>.fromOpaque(context).release()
            thread = nil
        }
    }

    /// Waits for the thread to end. Call once.
    func join() {
        if let thread { pthread_join(thread, nil) }
    }
}

/// An eventfd used to stop a thread blocked in poll().
final class StopSignal: Sendable {
    let fd: Int32

    init() { fd = repd_eventfd() }

    deinit { close(fd) }

    func fire() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(fd, $0.baseAddress, 8) }
    }

    var fired: Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) > 0
    }
}

/// `read()` with EINTR retried in one place; EAGAIN comes back as `.wouldBlock`, not as an error.
enum ReadResult {
    case bytes(Int)
    case wouldBlock
    case endOfFile
    case failed(Int32)
}

@inline(__always)
func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
    while true {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n > 0 { return .bytes(n) }
        if n == 0 { return .endOfFile }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
        return .failed(code)
    }
}
