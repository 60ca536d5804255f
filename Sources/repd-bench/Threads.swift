#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` on a new POSIX thread; `join()` waits for it.
final class BenchThread: @unchecked Sendable {
    // @unchecked: the handle is written once in init and read once by join(), on the creating thread.
    private var handle = pthread_t()

    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    init(_ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        pthread_create(
            &handle, nil,
            { raw in
                Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
                return nil
            }, box)
    }

    func join() { pthread_join(handle, nil) }
}
