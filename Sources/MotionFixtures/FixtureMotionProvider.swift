import Dispatch
import MotionCore

/// Replays recorded or generated samples through the `MotionProvider` protocol: tests, demos, replays.
///
/// - `replayAll()` emits every remaining batch synchronously, in order, with no timers, then completes.
/// - `start()` replays in real time on a `DispatchSourceTimer`: a batch is delivered when its last sample is due,
///   at the samples' own intervals divided by `speedMultiplier`. Deadlines are absolute, so timing does not drift.
/// - A running timed replay keeps the provider alive until `stop()` or the end of the data (as a motion manager
///   keeps delivering until told to stop); call `stop()` before letting go of a looping provider.
/// - `stop()` cancels the timer and keeps the position. `start()` after `stop()` resumes with the first sample not
///   yet delivered, re-anchored to the current time (no burst of "late" batches).
/// - At the end of the data the sample publisher completes and the state becomes `.finished`; after that `start()`
///   and `replayAll()` do nothing. With `loop`, timed replay starts over instead, with timestamps shifted so that
///   time keeps increasing; `replayAll()` ignores `loop` (one pass, then completion).
///
/// Batches go into `sampleOutlet` (and so to every attached sink, `samplePublisher` and `sampleBatches`) on a
/// private serial queue (timed replay) or on the caller's thread (`replayAll()`), straight from the samples' own
/// storage: nothing is copied or allocated per batch, except when looping shifts the timestamps (into one reused
/// buffer).
public final class FixtureMotionProvider: MotionProvider, @unchecked Sendable {
    // @unchecked Sendable: every mutable property below is touched only on `queue` (see `onQueue`), and the outlet
    // and the subject are only sent to from there, so deliveries are serialized.

    /// Samples per batch; the last batch of a pass may be shorter.
    public let batchSize: Int
    /// The replay speed, clamped to ≥ 0.1 (1 is real time, 2 twice as fast).
    public let speedMultiplier: Double
    /// Whether timed replay starts over at the end.
    public let loop: Bool

    /// Where every replayed batch is written; sinks and adapters attach here.
    public let sampleOutlet = MotionSampleOutlet()

    private let samples: [MotionSample]
    private let stateSubject = CurrentValueSubject<MotionProviderState, Never>(.idle)
    private let queue = DispatchQueue(label: "repd.fixture-provider")
    private let queueKey = DispatchSpecificKey<Void>()

    private var cursor = 0
    private var loopOffset = 0.0
    private var timer: DispatchSourceTimer?
    private var anchor = (wall: DispatchTime.now(), sampleTime: 0.0)
    private var isFinished = false
    private var shifted: [MotionSample] = []

    /// Creates a provider over `samples` (in time order).
    /// - Parameters:
    ///   - batchSize: samples per delivered batch, ≥ 1 (default 1).
    ///   - speedMultiplier: replay speed for `start()`, clamped to ≥ 0.1 (default 1.0, real time).
    ///   - loop: start over at the end of the data in timed replay (demos).
    public init(samples: [MotionSample], batchSize: Int = 1, speedMultiplier: Double = 1.0, loop: Bool = false) {
        precondition(batchSize >= 1, "batchSize must be at least 1")
        self.samples = samples
        self.batchSize = batchSize
        self.speedMultiplier = speedMultiplier.isNaN ? 1.0 : max(0.1, speedMultiplier)
        self.loop = loop
        queue.setSpecific(key: queueKey, value: ())
    }

    /// `idle`, `running`, `stopped` or `finished`; emits the current state on subscribe.
    public var statePublisher: AnyPublisher<MotionProviderState, Never> { stateSubject.eraseToAnyPublisher() }

    /// The number of samples delivered so far (in the current pass when looping).
    public var deliveredCount: Int { onQueue { cursor } }

    /// Emits every remaining batch synchronously and in order on the caller's thread, then completes.
    ///
    /// Cancels a running timed replay first. Does nothing once the data has finished.
    public func replayAll() {
        onQueue {
            guard !isFinished else { return }
            cancelTimer()
            stateSubject.send(.running)
            while cursor < samples.count { emitNextBatch() }
            finish()
        }
    }

    /// Starts or resumes timed replay. Does nothing if already running or finished.
    public func start() {
        onQueue {
            guard !isFinished, timer == nil else { return }
            guard cursor < samples.count else { return finish() }
            anchor = (DispatchTime.now(), samples[cursor].timestamp + loopOffset)
            stateSubject.send(.running)
            let source = DispatchSource.makeTimerSource(queue: queue)
            // A strong reference, released by libdispatch once the timer is cancelled (stop, replayAll, the end of
            // the data): a weak one would give the object a side table that outlives it until dispatch lets go of
            // the handler, asynchronously — which LeakSanitizer reported when repd exited right after stop().
            source.setEventHandler { self.timerFired() }
            timer = source
            scheduleNextBatch()
            source.resume()
        }
    }

    /// Stops timed replay, keeping the position. Idempotent.
    public func stop() {
        onQueue {
            guard timer != nil else { return }
            cancelTimer()
            if !isFinished { stateSubject.send(.stopped) }
        }
    }

    // MARK: - Queue-confined machinery

    private func onQueue<T>(_ body: () -> T) -> T {
        DispatchQueue.getSpecific(key: queueKey) != nil ? body() : queue.sync(execute: body)
    }

    /// The most batches one firing of the timer delivers. A replay that cannot keep up (a looping one at a speed no
    /// consumer keeps up with) had every batch due at once and never left the queue: `stop()`, which waits for the
    /// queue, never returned, and repd ignored SIGTERM. Now the queue is let go after this many; the timer, due
    /// again at once, goes on after whatever waited for the queue.
    static let batchesPerFiring = 1024

    private func timerFired() {
        let now = DispatchTime.now()
        var delivered = 0
        while timer != nil, cursor < samples.count, delivered < Self.batchesPerFiring,
            dueTime(ofBatchAt: cursor) <= now
        {
            emitNextBatch()
            delivered += 1
            if cursor == samples.count { wrapOrFinish() }
        }
        if timer != nil { scheduleNextBatch() }
    }

    private func wrapOrFinish() {
        guard loop, let first = samples.first, let last = samples.last else { return finish() }
        let span = last.timestamp - first.timestamp
        let period = samples.count > 1 ? span / Double(samples.count - 1) : 1.0
        loopOffset += span + period
        cursor = 0
    }

    private func scheduleNextBatch() {
        timer?.schedule(deadline: dueTime(ofBatchAt: cursor), leeway: .microseconds(200))
    }

    /// A batch is due when its last sample is: the wall time of the anchor plus the sample-time distance / speed.
    private func dueTime(ofBatchAt start: Int) -> DispatchTime {
        let last = min(start + batchSize, samples.count) - 1
        let sampleTime = samples[last].timestamp + loopOffset
        let seconds = max(0, (sampleTime - anchor.sampleTime) / speedMultiplier)
        let nanos = seconds < 1e9 ? UInt64(seconds * 1e9) : UInt64.max / 2
        return DispatchTime(uptimeNanoseconds: anchor.wall.uptimeNanoseconds &+ nanos)
    }

    private func emitNextBatch() {
        let start = cursor
        let end = min(cursor + batchSize, samples.count)
        cursor = end
        if loopOffset == 0 {
            samples.withUnsafeBufferPointer { sampleOutlet.receive(UnsafeBufferPointer(rebasing: $0[start..<end])) }
        } else {
            shifted.removeAll(keepingCapacity: true)
            for sample in samples[start..<end] { shifted.append(sample.shifted(by: loopOffset)) }
            shifted.withUnsafeBufferPointer { sampleOutlet.receive($0) }
        }
    }

    private func finish() {
        cancelTimer()
        isFinished = true
        stateSubject.send(.finished)
        sampleOutlet.finish()
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}
