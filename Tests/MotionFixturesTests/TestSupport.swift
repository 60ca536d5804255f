import Foundation
import MotionCore

/// Collects what a provider delivers, from whichever thread it delivers on: through `samplePublisher` (app code's
/// route), or as a sink attached to the provider (the daemon's). Its state is behind an `NSLock` (a pthread mutex,
/// which ThreadSanitizer sees; `Synchronization.Mutex` is a bare futex on Linux, invisible to it, and a read under it
/// was reported as a race, as in the daemon tests' `CapturedOutput`).
final class BatchRecorder: MotionSampleSink, @unchecked Sendable {
    enum Route { case publisher, sink }

    struct Delivery: Sendable {
        var batch: [MotionSample]
        var at: ContinuousClock.Instant
    }

    private let lock = NSLock()
    // Read and written only under `lock`.
    private var state: (deliveries: [Delivery], completed: Bool, states: [MotionProviderState]) = ([], false, [])
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
        subscriptions.append(
            provider.statePublisher.sink { value in self.lock.withLock { self.state.states.append(value) } })
    }

    func receive(_ batch: UnsafeBufferPointer<MotionSample>) { record(Array(batch)) }

    func finish() { lock.withLock { state.completed = true } }

    private func record(_ batch: [MotionSample]) {
        let now = ContinuousClock.now
        lock.withLock { state.deliveries.append(Delivery(batch: batch, at: now)) }
    }

    var deliveries: [Delivery] { lock.withLock { state.deliveries } }
    var batches: [[MotionSample]] { deliveries.map(\.batch) }
    var samples: [MotionSample] { batches.flatMap { $0 } }
    var completed: Bool { lock.withLock { state.completed } }
    var states: [MotionProviderState] { lock.withLock { state.states } }
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

/// Samples at a steady rate with a recognizable value in each (ax = index / 64, exact in binary).
func rampSamples(count: Int, interval: Double = 0.01, start: Double = 0) -> [MotionSample] {
    (0..<count).map { MotionSample(timestamp: start + Double($0) * interval, ax: Double($0) / 64, ay: 0, az: 1) }
}

/// Counts the samples a subscriber received and says, once, when it has had enough: behind an `NSLock` for the
/// reason `BatchRecorder` gives.
final class StoppingSubscriber: @unchecked Sendable {
    private let lock = NSLock()
    // Read and written only under `lock`.
    private var seen = 0
    private var hasStopped = false

    /// Adds `count` samples; true exactly once, the first time at least `limit` have been seen.
    func shouldStop(after count: Int, atLeast limit: Int) -> Bool {
        lock.withLock {
            seen += count
            guard seen >= limit, !hasStopped else { return false }
            hasStopped = true
            return true
        }
    }

    var stopped: Bool { lock.withLock { hasStopped } }
}
