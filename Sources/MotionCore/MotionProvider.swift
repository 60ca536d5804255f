/// A source of accelerometer samples, delivered in batches.
///
/// The protocol keeps the shape of Core Motion-style code: subscribe to `samplePublisher`, call `start()`, and
/// `stop()` when done. Underneath, every provider writes each batch into its `sampleOutlet`, and there is no other
/// route: the daemon attaches its ring's producer there (`attach(_:)`, no copy, no allocation per batch), and
/// `samplePublisher` and `sampleBatches` are adapters attached the same way. Batches arrive in time order on the
/// provider's own thread or queue; a subscriber that touches state owned elsewhere must hop there itself. The data
/// ends (the publisher completes, the sinks are finished) when a fixture without `loop` runs out; a live sensor
/// never ends it.
public protocol MotionProvider: AnyObject {
    /// Where the provider writes every batch; sinks and adapters attach here.
    var sampleOutlet: MotionSampleOutlet { get }
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
    /// Every batch, also as a Combine publisher (an adapter over `sampleOutlet`).
    public var samplePublisher: AnyPublisher<[MotionSample], Never> { sampleOutlet.publisher }

    /// A provider that does not report state has only ever said that it runs.
    public var statePublisher: AnyPublisher<MotionProviderState, Never> {
        Just(MotionProviderState.running).eraseToAnyPublisher()
    }

    /// Sends every batch to `sink` from the provider's delivery thread, without copying. Attach before `start()`.
    public func attach(_ sink: any MotionSampleSink) { sampleOutlet.attach(sink) }

    /// The same batches as `samplePublisher`, as an `AsyncSequence` for async code.
    ///
    /// Subscribes when called; nothing is dropped (the buffer is unbounded, so consume promptly). The sequence ends
    /// when the data ends, and cancelling the consuming task detaches it.
    public var sampleBatches: AsyncStream<[MotionSample]> { sampleOutlet.batches() }

    /// The states of `statePublisher` as an `AsyncSequence`, starting with the current one.
    public var states: AsyncStream<MotionProviderState> {
        statePublisher.asyncStream()
    }
}
