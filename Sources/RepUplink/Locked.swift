#if canImport(Glibc)
    import Glibc
#endif

/// A value behind a pthread mutex, for state the uplink's thread shares with the rest of the daemon.
///
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer intercepts pthread locking, while
/// `Mutex` (a bare futex on Linux) is invisible to it and accesses under it were reported as races (see
/// `CapturedOutput` in the daemon tests). `@unchecked Sendable`: every access to `value` happens inside
/// `withLock`, between `pthread_mutex_lock` and `pthread_mutex_unlock` on the one mutex this object owns.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
