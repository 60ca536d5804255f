#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a pthread mutex, for state that threads and tasks share outside the realtime path (the provider's
/// sinks, the daemon's status, the uplink's status).
///
/// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer intercepts pthread locking, while `Mutex`
/// on Linux locks through the standard library's uninstrumented futex code when two threads contend, so the accesses
/// it orders look unordered and are reported as data races (a correct two-thread counter under `Mutex` is reported;
/// a daemon test once exited 66 under ThreadSanitizer that way). `@unchecked Sendable`: every access to `value`
/// happens inside `withLock`, between `pthread_mutex_lock` and `pthread_mutex_unlock` on the one mutex this object
/// owns.
public final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A lock holding `value`.
    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the lock held.
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
