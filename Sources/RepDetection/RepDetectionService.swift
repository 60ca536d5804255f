import MotionCore

/// Counts reps in batches of samples and publishes the events: the object apps subscribe to (the daemon's pipeline
/// feeds a `RepDetector` directly, the same detector, without the publisher).
///
/// `processBatch(_:)` feeds the detector and publishes, in order, every event the batch completed. Events are
/// delivered synchronously on the thread that calls `processBatch`; call it from one thread (or actor) at a time.
public final class RepDetectionService {
    private var detector: RepDetector
    private var scratch: [WorkoutEvent] = []
    private let eventSubject = PassthroughSubject<WorkoutEvent, Never>()

    /// Creates a service with a detector of the given configuration.
    public init(configuration: RepDetectorConfiguration = .init()) {
        detector = RepDetector(configuration: configuration)
        scratch.reserveCapacity(64)
    }

    /// The detector's configuration.
    public var configuration: RepDetectorConfiguration { detector.configuration }
    /// Reps counted since the start or the last reset.
    public var totalReps: Int { detector.totalReps }
    /// The current or last set's number (0 before the first).
    public var setNumber: Int { detector.setNumber }
    /// Whether a set is in progress.
    public var inSet: Bool { detector.inSet }

    /// Every event: set started, rep, set ended.
    public var eventPublisher: AnyPublisher<WorkoutEvent, Never> { eventSubject.eraseToAnyPublisher() }

    /// Only the reps.
    public var repPublisher: AnyPublisher<RepEvent, Never> {
        eventSubject.compactMap { event -> RepEvent? in
            if case .rep(let rep) = event { return rep }
            return nil
        }.eraseToAnyPublisher()
    }

    /// Set starts and ends.
    public var setPublisher: AnyPublisher<WorkoutEvent, Never> {
        eventSubject.filter { event in
            if case .rep = event { return false }
            return true
        }.eraseToAnyPublisher()
    }

    /// The events as an `AsyncSequence` (subscribes when called).
    public var events: AsyncStream<WorkoutEvent> { eventPublisher.asyncStream() }

    /// Feeds a batch of samples (in time order) and publishes the events it completes. Returns them too.
    @discardableResult
    public func processBatch(_ batch: [MotionSample]) -> [WorkoutEvent] {
        scratch.removeAll(keepingCapacity: true)
        detector.process(batch, into: &scratch)
        for event in scratch { eventSubject.send(event) }
        return scratch
    }

    /// Ends the stream: closes and announces an open set.
    @discardableResult
    public func finish() -> [WorkoutEvent] {
        scratch.removeAll(keepingCapacity: true)
        detector.finish(into: &scratch)
        for event in scratch { eventSubject.send(event) }
        return scratch
    }

    /// Starts a new workout: the open set is closed and announced, counts start again from set 1, rep 1.
    @discardableResult
    public func reset() -> [WorkoutEvent] {
        let closing = finish()
        detector.reset()
        return closing
    }
}
