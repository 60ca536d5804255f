import MotionCore
import Synchronization

/// Collects what a provider delivers, from whichever thread it delivers on: through `samplePublisher` (app code's
/// route), or as a sink attached to the provider (the daemon's).
final class BatchRecorder: MotionSampleSink {
    enum Route { case publisher, sink }

    struct Delivery: Sendable {
        var batch: [MotionSample]
        var at: ContinuousClock.Instant
    }

    private let state = Mutex<(deliveries: [Delivery], completed: Bool, states: [MotionProviderState])>(([], false, []))
    // Written once in init, then only kept alive; never read from two threads.
    nonisolated(unsafe) private var subscriptions: [AnyCancellable] = []

    init(_ provider: some MotionProvider, through route: Route = .publisher) {
        switch route {
        case .publisher:
            subscriptions.append(
                provider.samplePublisher.sink(
                    receiveCompletion: { _ in self.finish() }, receiveValue: { batch in self.record(batch) }))
        case .sink:
            provider.attach(self)
        }
        subscriptions.append(provider.statePublisher.sink { value in self.state.withLock { $0.states.append(value) } })
    }

    func receive(_ batch: UnsafeBufferPointer<MotionSample>) { record(Array(batch)) }

    func finish() { state.withLock { $0.completed = true } }

    private func record(_ batch: [MotionSample]) {
        let now = ContinuousClock.now
        state.withLock { $0.deliveries.append(Delivery(batch: batch, at: now)) }
    }

    var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    var batches: [[MotionSample]] { deliveries.map(\.batch) }
    var samples: [MotionSample] { batches.flatMap { $0 } }
    var completed: Bool { state.withLock { $0.completed } }
    var states: [MotionProviderState] { state.withLock { $0.states } }
}

/// Waits until `condition` holds, checking every few milliseconds, and gives up after `timeout`.
@discardableResult
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}

/// Samples at a steady rate with a recognizable value in each (ax = index).
func rampSamples(count: Int, interval: Double = 0.01, start: Double = 0) -> [MotionSample] {
    (0..<count).map { MotionSample(timestamp: start + Double($0) * interval, ax: Double($0), ay: 0, az: 1) }
}
