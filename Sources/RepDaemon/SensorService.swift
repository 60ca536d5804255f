import LinuxIIO
import Logging
import MotionCore
import RepDetection
import RepProtocol
import ServiceLifecycle
import Synchronization

/// The producer's end of the pipeline, owned by one object so that exactly one thread (the provider's) pushes. It is
/// the sink the daemon attaches to whichever provider it runs: every batch is copied straight into the ring.
///
/// It wakes the detector only for a batch that reaches a new point of the detector's grid (a new multiple of
/// `RepDetector.decisionInterval`, 40 ms of sample time): the batches in between cannot complete an event, so they
/// wait in the ring and are drained with it. A fast sensor (1600 Hz in 10 ms batches) then costs the detector 25
/// wake-ups a second instead of 100, and no event comes later. Raw `samples` subscribers get them up to 40 ms later.
final class SamplePump: MotionSampleSink {
    let producer: SPSCRing<MotionSample>.Producer
    let doorbell: Doorbell
    private let lastDropLog = Locked<ContinuousClock.Instant?>(nil)
    /// The grid cell (sample time ÷ 40 ms) of the last batch that woke the detector (only the delivery thread
    /// touches it).
    private let lastCell = Atomic<Int64>(.min)
    private let logger: Logger

    init(producer: consuming SPSCRing<MotionSample>.Producer, doorbell: Doorbell, logger: Logger) {
        self.producer = producer
        self.doorbell = doorbell
        self.logger = logger
    }

    /// Queues a batch for the detector and wakes it when the batch reaches a new grid point; a batch that does not
    /// fit is dropped, counted, and logged at most every 10 s. Called on the provider's delivery thread.
    func receive(_ batch: UnsafeBufferPointer<MotionSample>) {
        if !producer.push(batch) {
            let now = ContinuousClock.now
            let shouldLog = lastDropLog.withLock { last -> Bool in
                guard last.map({ now - $0 >= .seconds(10) }) ?? true else { return false }
                last = now
                return true
            }
            if shouldLog {
                let s = producer.statistics
                logger.warning(
                    "the detector falls behind: the ring is full and dropped \(s.droppedBatches) batches (\(s.droppedElements) samples) so far"
                )
            }
            doorbell.ring()
            return
        }
        guard let last = batch.last else { return }
        let cell = last.timestamp / RepDetector.decisionInterval
        guard cell.isFinite, abs(cell) < 1e15 else { return doorbell.ring() }  // the detector reports such samples
        // A sample within rounding of a grid point may or may not make it (the detector computes grid times its
        // own way): it wakes the detector, and so does the next batch past that point.
        let upper = Int64((cell + 1e-6).rounded(.down))
        if upper != lastCell.load(ordering: .relaxed) {
            lastCell.store(Int64((cell - 1e-6).rounded(.down)), ordering: .relaxed)
            doorbell.ring()
        }
    }
}

/// Runs the motion provider, whose batches go into the ring through the `SamplePump` attached to it; its state
/// changes go to the clients and the log.
final class SensorService: Service {
    private let provider: any MotionProvider & Sendable
    private let pump: SamplePump
    private let hub: EventHub
    private let state: DaemonState
    private let readiness: Readiness
    private let logger: Logger
    private let onState: @Sendable (MotionProviderState) -> Void

    init(
        provider: any MotionProvider & Sendable, pump: SamplePump, hub: EventHub, state: DaemonState,
        readiness: Readiness, logger: Logger,
        onState: @escaping @Sendable (MotionProviderState) -> Void = { _ in }
    ) {
        self.provider = provider
        self.pump = pump
        self.hub = hub
        self.state = state
        self.readiness = readiness
        self.logger = logger
        self.onState = onState
    }

    /// Starts the provider and publishes its state changes until shutdown. The provider's state subject calls its
    /// sink under its own lock, so the sink only queues the change: journaling and publishing happen here, on this
    /// task, never under the subject's lock (which would order it before the journal's and the event loop's).
    func run() async throws {
        // The provider emits its current state on subscribe and cannot change it before `start()`: report that one
        // here, so that `status` has it at once.
        let initial = Locked<MotionProviderState?>(nil)
        provider.statePublisher.first().sink { state in initial.withLock { $0 = state } }.cancel()
        if let state = initial.withLock({ $0 }) { report(state) }
        let (changes, queue) = AsyncStream.makeStream(of: MotionProviderState.self, bufferingPolicy: .unbounded)
        let states = provider.statePublisher.dropFirst().sink { queue.yield($0) }
        provider.start()
        readiness.sensorRunning()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                for await providerState in changes { report(providerState) }
            }
            try? await gracefulShutdown()
            provider.stop()
            states.cancel()
            queue.finish()
            await group.waitForAll()
        }
        pump.doorbell.ringAlways()
    }

    /// Logs a state change, publishes it as a `sensor` event (not `idle`, the state before start) and tells `onState`.
    private func report(_ providerState: MotionProviderState) {
        state.sensorState = ServerMessage.stateName(providerState)
        // Before `start()`: nothing happened yet, so nothing to tell (a client that connects early would get it late).
        if case .idle = providerState { return }
        // Samples flow from here on: say which clock times them.
        var timing: (source: String, reason: String)?
        switch providerState {
        case .running, .sensorBack, .polling: timing = state.sensorTiming?()
        default: timing = nil
        }
        let clock = timing.map { "; timestamps: \($0.source) (\($0.reason))" } ?? ""
        switch providerState {
        case .failed(let error): logger.error("sensor: \(error.message)")
        case .sensorLost(let reason): logger.warning("sensor lost: \(reason)")
        case .polling(let reason): logger.warning("sensor: polling instead of buffered capture: \(reason)\(clock)")
        default: logger.info("sensor: \(ServerMessage.stateName(providerState))\(clock)")
        }
        // Samples that came since the detector's last wake-up are not left waiting for the heartbeat.
        pump.doorbell.ringAlways()
        let wall = wallClock()
        hub.publishJournaled(.sensor(providerState, wall: wall, timestamps: timing?.source))
        onState(providerState)
    }
}
