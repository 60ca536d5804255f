import LinuxIIO
import Logging
import MotionCore
import RepDetection
import RepProtocol
import ServiceLifecycle
import Synchronization

/// The consumer's end: drains the ring into the rep detector and publishes every event to the hub. It owns the
/// `RepDetector` value itself: no Combine subject sits on this path (`RepDetectionService` is the adapter for apps,
/// over the same detector). Its loop also drives the systemd watchdog, so a stuck pipeline gets the daemon
/// restarted. When samples stop (sensor lost, end of a recording) an open set ends after `restToEndSet` seconds of
/// the monotonic clock, since the detector, which only sees sample times, cannot tell. At shutdown it drains what is
/// left and closes the open set, so the last set is announced.
final class DetectionPipelineService: Service {
    private let consumer: SPSCRing<MotionSample>.Consumer
    private let doorbell: Doorbell
    private let control: PipelineControl
    private let hub: EventHub
    private let state: DaemonState
    private let notifier: SystemdNotifier
    private let configuration: RepDetectorConfiguration
    private let logger: Logger
    private let onEvent: @Sendable (WorkoutEvent) -> Void
    private let stopping = Atomic<Bool>(false)

    init(
        consumer: consuming SPSCRing<MotionSample>.Consumer, doorbell: Doorbell, control: PipelineControl,
        hub: EventHub, state: DaemonState, notifier: SystemdNotifier, configuration: RepDetectorConfiguration,
        logger: Logger, onEvent: @escaping @Sendable (WorkoutEvent) -> Void
    ) {
        self.consumer = consumer
        self.doorbell = doorbell
        self.control = control
        self.hub = hub
        self.state = state
        self.notifier = notifier
        self.configuration = configuration
        self.logger = logger
        self.onEvent = onEvent
    }

    func run() async throws {
        var detector = RepDetector(configuration: configuration)
        var batch: [MotionSample] = []
        batch.reserveCapacity(4096)
        var events: [WorkoutEvent] = []
        events.reserveCapacity(64)
        var ignored = IgnoredSamplesLog()
        var iterator = doorbell.stream.makeAsyncIterator()
        let heartbeat = notifier.watchdogInterval.map { max(0.05, $0 / 3) } ?? 1.0
        var lastHeartbeat = ContinuousClock.now - .seconds(3600)
        var lastStatus = ""
        var lastSample = ContinuousClock.now
        let restToEndSet = Duration.seconds(configuration.restToEndSet)

        // A ticker wakes the loop at least once per heartbeat, so the watchdog is fed while no samples flow.
        let ticker = Task { [doorbell] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(heartbeat))
                doorbell.ringAlways()
            }
        }
        defer { ticker.cancel() }

        let ringCapacity = max(1, consumer.statistics.capacity)
        await withGracefulShutdownHandler {
            while !stopping.load(ordering: .acquiring) {
                let open = await doorbell.wait(&iterator) { !self.consumer.isEmpty || self.control.resetPending }
                // At most a ring's worth before the rest of the loop (the watchdog, a reset, a set's end on rest):
                // a detector that falls behind never finds the ring empty, and systemd's watchdog killed repd.
                let drained = drain(
                    into: &batch, detector: &detector, events: &events, ignored: &ignored, atMost: ringCapacity)
                if control.takeReset() {
                    // A new workout: the open set is closed and announced, then counts start again from set 1.
                    detector.finish(into: &events)
                    detector.reset()
                    announce(&events)
                    record(detector)
                }

                let now = ContinuousClock.now
                if drained > 0 { lastSample = now }
                if detector.inSet, now - lastSample >= restToEndSet {
                    let set = detector.setNumber
                    detector.finish(into: &events)
                    announce(&events)
                    record(detector)
                    let rest = JSONWriter.numberText(configuration.restToEndSet)
                    logger.notice("no samples for \(rest) s: set \(set) ended")
                }
                if now - lastHeartbeat >= .seconds(heartbeat) {
                    lastHeartbeat = now
                    if notifier.watchdogInterval != nil { notifier.notify("WATCHDOG=1") }
                    let status =
                        "STATUS=sensor \(state.sensorState), \(hub.clientCount) clients, \(detector.totalReps) reps"
                    if status != lastStatus {
                        notifier.notify(status)
                        lastStatus = status
                    }
                }
                if !open { break }
            }
        } onGracefulShutdown: {
            self.stopping.store(true, ordering: .releasing)
            self.doorbell.ringAlways()
        }
        drain(into: &batch, detector: &detector, events: &events, ignored: &ignored)
        detector.finish(into: &events)
        announce(&events)
        record(detector)
        // The open set's set_end is journaled on the journal's thread: wait until it is on its way to the clients,
        // or the socket server (shut down next) could say bye first and the set's final count would be lost.
        await hub.flushJournal()
        notifier.notify("STOPPING=1")
    }

    /// Feeds what is queued to the detector, up to `atMost` samples (more only to finish a batch), and announces the
    /// events; returns how many samples that was. `events` is scratch space (empty before and after), kept by the
    /// caller so nothing allocates per batch.
    @discardableResult
    private func drain(
        into batch: inout [MotionSample], detector: inout RepDetector, events: inout [WorkoutEvent],
        ignored: inout IgnoredSamplesLog, atMost: Int = .max
    ) -> Int {
        var total = 0
        while total < atMost {
            batch.removeAll(keepingCapacity: true)
            guard consumer.pop(into: &batch, limit: 4096) > 0 else { break }
            total += batch.count
            state.samples.wrappingAdd(batch.count, ordering: .relaxed)
            if hub.wantsSamples { hub.publish(.samples, ServerMessage.samples(batch)) }
            detector.process(batch, into: &events)
            announce(&events)
            record(detector)
            ignored.report(detector.ignoredSamples, to: logger)
            // After each pop, not only once the ring is empty: a detector that falls behind never empties it, and
            // `status` then said capacity 0 and nothing dropped while the log counted millions of dropped batches.
            state.updateRing(consumer.statistics)
        }
        state.updateRing(consumer.statistics)
        return total
    }

    private func record(_ detector: RepDetector) {
        state.reps.store(detector.totalReps, ordering: .relaxed)
        state.sets.store(detector.setNumber, ordering: .relaxed)
        state.inSet.store(detector.inSet, ordering: .relaxed)
    }

    /// Publishes `events` in order and empties it (keeping its capacity).
    private func announce(_ events: inout [WorkoutEvent]) {
        guard !events.isEmpty else { return }
        defer { events.removeAll(keepingCapacity: true) }
        let wall = wallClock()
        for event in events {
            hub.publishJournaled(.workout(event, wall: wall))
            onEvent(event)
        }
    }
}

/// Says in the log how many samples the detector ignored (their time did not advance, or a value was not finite,
/// beyond ±1000 g or beyond ±10¹² s: `MotionSample.isPlausible`), the first time and then at most once a minute.
struct IgnoredSamplesLog {
    private var reported = 0
    private var reportedAt: ContinuousClock.Instant?

    mutating func report(_ total: Int, to logger: Logger) {
        if let line = line(total, now: .now) { logger.warning("\(line)") }
    }

    /// The line to log for the detector's `ignoredSamples` being `total` at `now`, or nil when there is nothing new
    /// or the last line is less than a minute old.
    mutating func line(_ total: Int, now: ContinuousClock.Instant) -> String? {
        if total < reported { reported = 0 }  // a `reset` made a new detector: its count starts at 0
        guard total != reported else { return nil }
        if let reportedAt, now - reportedAt < .seconds(60) { return nil }
        defer {
            reported = total
            reportedAt = now
        }
        return "the detector ignored \(total - reported) samples (\(total) since the start or the last reset): "
            + "their time did not advance, or a value was not finite, beyond ±1000 g or beyond ±10¹² s; check the "
            + "sensor's scale and timestamps"
    }
}
