import Synchronization

/// Wakes the detector task when the reader has queued samples, without a lock on the reader's side unless the
/// detector is actually asleep.
///
/// The consumer marks itself sleeping, re-checks for work, and only then waits; the producer, after publishing its
/// work, rings only if it finds the mark. Sequentially consistent fences on both sides make it impossible for both
/// to miss each other (the classic store-then-load handshake). A spurious wake-up is harmless.
final class Doorbell: Sendable {
    private let sleeping = Atomic<Bool>(false)
    private let continuation: AsyncStream<Void>.Continuation
    let stream: AsyncStream<Void>

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Called by the producer after it queued work: wakes the consumer if it sleeps.
    func ring() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if sleeping.exchange(false, ordering: .sequentiallyConsistent) { continuation.yield() }
    }

    /// Wakes the consumer whatever it is doing (timers, control requests).
    func ringAlways() {
        sleeping.store(false, ordering: .sequentiallyConsistent)
        continuation.yield()
    }

    /// Waits until rung, unless `hasWork()` already says there is something to do. Returns false once the stream
    /// ended (the waiting task was cancelled).
    func wait(_ iterator: inout AsyncStream<Void>.AsyncIterator, hasWork: () -> Bool) async -> Bool {
        sleeping.store(true, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if hasWork() {
            sleeping.store(false, ordering: .sequentiallyConsistent)
            return true
        }
        return await iterator.next() != nil
    }
}
