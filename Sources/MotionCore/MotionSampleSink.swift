/// Where a provider's batches go: the one sample path.
///
/// Every provider (IIO, polling, fixture) writes each batch into its `MotionSampleOutlet`, which hands it to the
/// sinks attached to it: the daemon's ring producer, and the adapters behind `samplePublisher` and `sampleBatches`.
/// `receive` is called on the provider's delivery thread (the IIO reader thread, the fixture's queue, the caller of
/// `replayAll()`), one batch at a time and in time order. The buffer is valid only during the call and is not
/// copied on the way: a sink that keeps samples copies them (the ring does, into its own storage).
public protocol MotionSampleSink: AnyObject, Sendable {
    /// One batch, in time order. Must not block: the provider's reader waits for it.
    func receive(_ batch: UnsafeBufferPointer<MotionSample>)
    /// The data came to its end (a fixture without `loop`); no batch follows. A live sensor never finishes.
    func finish()
}

extension MotionSampleSink {
    /// Nothing to do at the end of the data.
    public func finish() {}
}

/// What a provider writes its batches into; it passes them on to every attached sink, in the order attached.
///
/// Attaching and detaching are thread-safe. Delivery takes a lock only long enough to read the current list of
/// sinks (no allocation, no copy of the samples) and calls the sinks outside it, so a sink may stop its provider or
/// detach itself from inside `receive`. A sink attached after the data finished is finished at once.
public final class MotionSampleOutlet: MotionSampleSink {
    private let state = Locked<(sinks: [any MotionSampleSink], finished: Bool)>(([], false))
    private let publishing = Locked<PublishingSampleSink?>(nil)

    /// An outlet with no sinks: batches go nowhere until one is attached.
    public init() {}

    /// Sends every later batch to `sink` as well (the daemon attaches its ring's producer before `start()`).
    public func attach(_ sink: any MotionSampleSink) {
        let finished = state.withLock { state in
            state.sinks.append(sink)
            return state.finished
        }
        if finished { sink.finish() }
    }

    /// How many sinks batches go to now.
    var attachedSinkCount: Int { state.withLock { $0.sinks.count } }

    /// Stops sending batches to `sink`.
    public func detach(_ sink: any MotionSampleSink) {
        state.withLock { $0.sinks.removeAll { $0 === sink } }
    }

    /// Hands `batch` to every attached sink. Called by the provider on its delivery thread.
    public func receive(_ batch: UnsafeBufferPointer<MotionSample>) {
        guard !batch.isEmpty else { return }
        let sinks = state.withLock { $0.sinks }
        for sink in sinks { sink.receive(batch) }
    }

    /// Ends the data for every attached sink (and every sink attached later).
    public func finish() {
        let sinks = state.withLock { state -> [any MotionSampleSink] in
            state.finished = true
            return state.sinks
        }
        for sink in sinks { sink.finish() }
    }

    /// The batches as a Combine publisher that completes when the data finishes.
    ///
    /// The adapter is attached on first use, so a provider nobody subscribes to through Combine builds no arrays.
    public var publisher: AnyPublisher<[MotionSample], Never> {
        let (adapter, isNew) = publishing.withLock { existing -> (PublishingSampleSink, Bool) in
            if let existing { return (existing, false) }
            let made = PublishingSampleSink()
            existing = made
            return (made, true)
        }
        if isNew { attach(adapter) }
        return adapter.subject.eraseToAnyPublisher()
    }

    /// The batches as an `AsyncSequence` that ends when the data finishes.
    ///
    /// Subscribes when called; nothing is dropped (the buffer is unbounded, so consume promptly). Cancelling the
    /// consuming task detaches it.
    public func batches() -> AsyncStream<[MotionSample]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [MotionSample].self)
        let sink = StreamingSampleSink(continuation)
        continuation.onTermination = { [weak self, sink] _ in self?.detach(sink) }
        attach(sink)
        return stream
    }
}

/// The Combine adapter over the sink path: each batch becomes one `[MotionSample]` value of a subject.
final class PublishingSampleSink: MotionSampleSink, @unchecked Sendable {
    // @unchecked Sendable: the subject is sent to only from `receive` and `finish`, which the outlet calls on its
    // provider's one delivery thread at a time; subscribing is thread-safe in Combine and OpenCombine.
    let subject = PassthroughSubject<[MotionSample], Never>()

    func receive(_ batch: UnsafeBufferPointer<MotionSample>) { subject.send(Array(batch)) }

    func finish() { subject.send(completion: .finished) }
}

/// The `AsyncSequence` adapter over the sink path.
final class StreamingSampleSink: MotionSampleSink {
    private let continuation: AsyncStream<[MotionSample]>.Continuation

    init(_ continuation: AsyncStream<[MotionSample]>.Continuation) { self.continuation = continuation }

    func receive(_ batch: UnsafeBufferPointer<MotionSample>) { continuation.yield(Array(batch)) }

    func finish() { continuation.finish() }
}
