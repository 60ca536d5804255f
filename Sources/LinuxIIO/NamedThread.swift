import CLinuxShims

#if canImport(Glibc)
    import Glibc
#endif

/// A dedicated, named POSIX thread (not a Task: it blocks in poll() and must never wait behind other work): the
/// IIO reader and the uplink each run on one. The name (at most 15 bytes, `pthread_setname_np`) shows in
/// `top -H` and `/proc/PID/task/TID/comm`. Joined exactly once, by whoever owns it.
public final class NamedThread: Sendable {
    private let thread: pthread_t?

    private final class Context {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new thread called `name`; `started` says whether `pthread_create` succeeded.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Context(name: String(name.prefix(15)), body: body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { raw in
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

    /// Whether the thread was created.
    public var started: Bool { thread != nil }

    /// Waits for the thread to end. Call once.
    public func join() {
        if let thread { pthread_join(thread, nil) }
    }

    /// Names the calling thread (at most 15 bytes), for a thread someone else created (the journal's).
    public static func nameCurrent(_ name: String) {
        _ = repd_set_thread_name(String(name.prefix(15)))
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
    switch retryingInterrupts({ read(fd, buffer.baseAddress, buffer.count) }) {
    case .success(0): .endOfFile
    case .success(let n): .bytes(n)
    case .wouldBlock: .wouldBlock
    case .failure(let error): .failed(error.rawValue)
    }
}
