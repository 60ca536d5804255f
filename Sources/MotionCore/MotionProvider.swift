/// A source of accelerometer samples, delivered in batches.
///
/// The protocol keeps the shape of Core Motion-style code: subscribe to `samplePublisher`, call `start()`, and
/// `stop()` when done. Batches arrive in time order on the provider's own thread or queue; a subscriber that touches
/// state owned elsewhere must hop there itself. The publisher completes when the data ends (a fixture without
/// `loop`); a live sensor never completes it.
public protocol MotionProvider: AnyObject {
    /// Batches of samples in time order. Completes (`.finished`) when the data ends.
    var samplePublisher: AnyPublisher<[MotionSample], Never> { get }
    /// What the provider is doing: running, finished, sensor lost/back, failed. Emits the current state on subscribe.
    var statePublisher: AnyPublisher<MotionProviderState, Never> { get }
    /// Starts (or resumes) delivering samples.
    func start()
    /// Stops delivering samples. Idempotent.
    func stop()
}

extension MotionProvider {
    /// A provider that does not report state has only ever said that it runs.
    public var statePublisher: AnyPublisher<MotionProviderState, Never> {
        Just(MotionProviderState.running).eraseToAnyPublisher()
    }

    /// The same batches as `samplePublisher`, as an `AsyncSequence` for async code.
    ///
    /// Subscribes when called; nothing is dropped (the buffer is unbounded, so consume promptly). The sequence ends
    /// when the publisher completes, and cancelling the consuming task cancels the subscription.
    public var sampleBatches: AsyncStream<[MotionSample]> {
        samplePublisher.asyncStream()
    }

    /// The states of `statePublisher` as an `AsyncSequence`, starting with the current one.
    public var states: AsyncStream<MotionProviderState> {
        statePublisher.asyncStream()
    }
}
