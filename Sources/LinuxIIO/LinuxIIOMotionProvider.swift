import Logging
import MotionCore
import RepSettings
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real accelerometer through the IIO buffered character device, behind the `MotionProvider` protocol.
///
/// `start()` spawns one reader thread running a supervisor loop: it finds the device with libudev and runs one
/// capture driver on it (`CaptureDriver`): `BufferedCapture` configures the device (`IIOCaptureSession`), opens
/// `/dev/iio:deviceN` non-blocking and loops in `poll()` on it and on an eventfd that `stop()` fires, reading many
/// records per `read()`, carrying partial records over and decoding into a reused array; `PolledCapture` reads
/// `in_accel_*_raw` at the rate. Each batch goes into `sampleOutlet`, from which attached sinks (the daemon: its
/// ring) take it without a copy. Nothing per sample allocates, locks or logs; nothing per batch allocates unless
/// someone subscribes to `samplePublisher`.
///
/// Faults: ENODEV/EIO (or EOF) while reading mean the sensor is gone: the state becomes `.sensorLost`, the device is
/// closed, and the thread rescans every `rescanInterval` until it returns (`.sensorBack`). A buffer that delivers
/// nothing within `deliveryDeadline`, or a device without a buffer, falls back to polling `in_accel_*_raw` at the
/// configured rate (`.polling`). A buffer that stops delivering after data flowed (a lost interrupt, a removed
/// trigger) is `.sensorLost` too, and the capture is started again (the buffer disabled and enabled, which re-arms
/// the trigger); after `stallsBeforePolling` such stalls within `stallWindow` the device is polled instead, until it
/// is lost (or repd restarts). A missing device at start is `.failed(.notFound)` and is waited for the same way;
/// permission problems are `.failed(.permissionDenied)` naming the file and the fix; a value that does not parse is
/// `.failed(.invalidData)`.
/// A state is published when it changes, not at every retry of the same failure (a retry ending as the last one did
/// is not news; the log repeats it every `reminderInterval`). `stop()` puts the device back exactly as it was found.
public final class LinuxIIOMotionProvider: MotionProvider, @unchecked Sendable {
    // @unchecked Sendable: the state subject and the outlet are sent to only from the reader thread (and from
    // `start()`/`stop()` while no reader thread runs); `thread`/`stopSignal` are guarded by `control`; counters are
    // atomics; what the supervisor remembers (`Supervision`) belongs to one run of the reader thread.

    /// What to read and how: the `[sensor]` settings (`RepSettings`), one struct from the configuration file to here.
    public typealias Options = SensorSettings

    /// Counters, readable from any thread.
    public struct Counters: Sendable, Equatable {
        /// Whole records decoded.
        public var recordsRead: Int
        /// Bytes of partial records dropped (when the device went away mid-record).
        public var bytesDiscarded: Int
        /// Times the device came back after being lost.
        public var reconnects: Int
        /// Where the current capture's sample times come from (nil before samples flow).
        public var timing: SampleTiming?
    }

    /// The options.
    public let options: Options
    /// Where the reader thread writes each batch (from either driver); attach the sink that takes them.
    public let sampleOutlet = MotionSampleOutlet()

    private let stateSubject = CurrentValueSubject<MotionProviderState, Never>(.idle)
    private let control = Locked<(thread: NamedThread?, stop: WakeSignal?)>((nil, nil))
    private let records = Atomic<Int>(0)
    private let discarded = Atomic<Int>(0)
    private let reconnectCount = Atomic<Int>(0)
    private let device = Locked<IIODevice?>(nil)
    private let timingState = Locked<SampleTiming?>(nil)

    private let logger: Logger

    /// A provider with `options`; nothing happens until `start()`. `logger` gets what does not stop capture but
    /// should be seen: a mount matrix that does not parse (at capture start) and state that could not be put back
    /// (at stop). Never per sample.
    public init(options: Options = .init(), logger: Logger = Logger(label: "repd.iio")) {
        self.options = options
        self.logger = logger
    }

    /// The state: `.running`, `.sensorLost`, `.sensorBack`, `.polling`, `.failed`, `.stopped`; sent from the reader
    /// thread (and from `stop()`).
    public var statePublisher: AnyPublisher<MotionProviderState, Never> { stateSubject.eraseToAnyPublisher() }

    /// The counters so far.
    public var counters: Counters {
        Counters(
            recordsRead: records.load(ordering: .relaxed), bytesDiscarded: discarded.load(ordering: .relaxed),
            reconnects: reconnectCount.load(ordering: .relaxed), timing: timing)
    }

    /// Where the current capture's sample times come from; set before `.running`, `.sensorBack` or `.polling` is
    /// published, nil before samples flow.
    public var timing: SampleTiming? { timingState.withLock { $0 } }

    /// The device in use (nil before it is found).
    public var currentDevice: IIODevice? { device.withLock { $0 } }

    /// Stalls of the buffer within `stallWindow` after which the device is polled instead.
    static let stallsBeforePolling = 3
    /// Seconds within which `stallsBeforePolling` stalls make the provider poll.
    static let stallWindow = 600.0
    /// Seconds between log lines saying that the same failure goes on (its state is published once).
    static let reminderInterval = 600.0

    /// Starts the reader thread. Does nothing if it runs. When the thread or its stop eventfd cannot be created
    /// (no file descriptor left, no thread), the state becomes `.failed(.io)` saying so, and nothing runs.
    public func start() {
        let failure = control.withLock { c -> IIOError? in
            guard c.thread == nil else { return nil }
            let stop: WakeSignal
            do throws(IIOError) { stop = try WakeSignal.make() } catch { return error }
            let thread = NamedThread(name: "repd-iio") { [self] in self.run(stop: stop) }
            guard thread.started else {
                return IIOError(.io, path: "", "cannot start the sensor's reader thread (pthread_create failed)")
            }
            c = (thread, stop)
            return nil
        }
        if let failure { stateSubject.send(.failed(MotionProviderError(.io, failure.description))) }
    }

    /// Stops the reader thread and restores the device. Idempotent.
    public func stop() {
        let (thread, stop) = control.withLock { c in
            defer { c = (nil, nil) }
            return (c.thread, c.stop)
        }
        guard let thread, let stop else { return }
        stop.fire()
        thread.join()
        stateSubject.send(.stopped)
    }

    // MARK: - The reader thread: the supervisor loop

    private func run(stop: WakeSignal) {
        let monitor = UdevMonitor()
        let supervision = Supervision()
        while !stop.fired {
            do {
                let found = try IIODeviceScanner.choose(options.device)
                device.withLock { $0 = found }
                timingState.withLock { $0 = nil }
                let context = CaptureContext(
                    device: found, options: options, stop: stop, monitor: monitor, supervision: supervision,
                    provider: self)
                let outcome: CaptureOutcome
                let stalledTooOften = supervision.stalls.count >= Self.stallsBeforePolling
                // Accel or timestamp scan elements that do not parse fail the buffered setup (with the file and
                // why) rather than fall back to polling unnoticed.
                if found.hasBufferedAccel
                    || (found.devnode != nil && !found.devnodeMissing && !found.channelErrors.isEmpty),
                    found.bufferDirectory != nil, !options.forcePolling, !stalledTooOften
                {
                    let buffered: CaptureOutcome
                    do {
                        var driver = BufferedCapture(context)
                        buffered = try capture(with: &driver, on: found)
                    } catch  where error.kind == .io {
                        // The driver refused the setup (a trigger it does not accept, a buffer it cannot start):
                        // the message names the file and the fix; samples still flow by polling.
                        buffered = .refused(error.description)
                    }
                    switch buffered {
                    case .noData:
                        var driver = PolledCapture(
                            context, reason: "the buffer delivered nothing within \(options.deliveryDeadline) s")
                        outcome = try capture(with: &driver, on: found)
                    case .refused(let reason):
                        var driver = PolledCapture(context, reason: reason)
                        outcome = try capture(with: &driver, on: found)
                    default:
                        outcome = buffered
                    }
                } else {
                    let reason: String
                    if options.forcePolling {
                        reason = "polling was asked for"
                    } else if stalledTooOften {
                        let window = Int(Self.stallWindow)
                        reason =
                            "the buffer stopped delivering \(supervision.stalls.count) times within \(window) s (a lost "
                            + "interrupt or a trigger that stops firing?)"
                    } else if found.devnode == nil {
                        reason = "the device has no buffer (no \(found.sysname) device node)"
                    } else if found.devnodeMissing, let node = found.devnode {
                        reason = "\(node) does not exist (a container that does not pass the device in?)"
                    } else {
                        reason = "the device has no usable buffer"
                    }
                    var driver = PolledCapture(context, reason: reason)
                    outcome = try capture(with: &driver, on: found)
                }
                switch outcome {
                case .stopped: return
                case .lost(let reason):
                    supervision.lost = true
                    supervision.reportedMissing = true
                    supervision.stalls = []  // a device that comes back gets its buffer tried afresh
                    send(.sensorLost(reason: reason), supervision)
                case .stalled(let reason):
                    let now = monotonicNow()
                    supervision.recordStall(at: now)
                    supervision.lost = true
                    supervision.reportedMissing = true
                    let next =
                        supervision.stalls.count >= Self.stallsBeforePolling
                        ? "polling instead (until the device is lost or repd restarts)" : "restarting the capture"
                    send(.sensorLost(reason: "\(reason); \(next)"), supervision)
                case .noData, .refused: break
                }
            } catch {
                switch error.kind {
                case .notFound, .deviceLost:
                    if !supervision.reportedMissing {
                        supervision.reportedMissing = true
                        if supervision.lost {
                            send(.sensorLost(reason: error.description), supervision)
                        } else {
                            send(.failed(MotionProviderError(.notFound, error.description)), supervision)
                        }
                    }
                    if error.kind == .deviceLost { supervision.lost = true }
                case .permissionDenied, .unsupported, .invalidValue, .io:
                    // The same failure again at the next rescan is not news: published once, logged again only
                    // every `reminderInterval`.
                    let now = monotonicNow()
                    let failed = MotionProviderState.failed(
                        MotionProviderError(Self.kind(of: error), error.description))
                    if supervision.lastState != failed {
                        supervision.repeats = 0
                        supervision.lastReminder = now
                        send(failed, supervision)
                    } else {
                        supervision.repeats += 1
                        if now - supervision.lastReminder >= Self.reminderInterval {
                            supervision.lastReminder = now
                            let attempts = supervision.repeats
                            logger.warning(
                                "sensor: still failing (\(attempts) more attempts since it was reported): \(error)")
                        }
                    }
                    supervision.reportedMissing = true
                }
            }
            if wait(stop, monitor: monitor, seconds: options.rescanInterval) { return }
        }
    }

    /// What the supervisor loop remembers between capture attempts: one per run of the reader thread, used on it
    /// only (by the loop, and by the drivers through `CaptureContext` when samples flow).
    final class Supervision {
        /// A loss was reported and samples have not flowed since: the next samples publish `.sensorBack`.
        var lost = false
        /// The device's absence was reported (`.sensorLost` or `.failed(.notFound)`): not again until samples flow.
        var reportedMissing = false
        /// Attempts that failed as the one whose `.failed` state was published last, and when that was last logged.
        var repeats = 0
        var lastReminder = 0.0
        /// The state sent last: the same state is not sent again (the same failure at the next attempt included).
        var lastState: MotionProviderState?
        /// When the buffer stalled (CLOCK_MONOTONIC s), the stalls of the last `stallWindow` only.
        var stalls: [Double] = []

        /// Counts a stall at `now`, forgetting those more than `stallWindow` before it; returns whether that makes
        /// `stallsBeforePolling` within the window (the device is then polled).
        @discardableResult
        func recordStall(at now: Double) -> Bool {
            stalls = stalls.filter { now - $0 < LinuxIIOMotionProvider.stallWindow } + [now]
            return stalls.count >= LinuxIIOMotionProvider.stallsBeforePolling
        }
    }

    /// Sends `state` unless it is the state sent last: a retry that ends as the last attempt did is not a change.
    private func send(_ state: MotionProviderState, _ supervision: Supervision) {
        guard supervision.lastState != state else { return }
        supervision.lastState = state
        stateSubject.send(state)
    }

    /// The provider error kind for `error`.
    static func kind(of error: IIOError) -> MotionProviderError.Kind {
        switch error.kind {
        case .permissionDenied: .permissionDenied
        case .io: .io
        case .invalidValue: .invalidData
        case .notFound, .deviceLost: .notFound
        case .unsupported: .unsupported
        }
    }

    /// One capture attempt: starts `driver`, runs it, and always finishes it (closes, restores, logs what could not
    /// be put back).
    private func capture<Driver: CaptureDriver>(
        with driver: inout Driver, on found: IIODevice
    ) throws(IIOError) -> CaptureOutcome {
        defer { report(driver.finish(), of: found) }
        try driver.start()
        return try driver.run()
    }

    /// Waits up to `seconds`, or less when udev reports an added IIO device; true when stopped.
    private func wait(_ stop: WakeSignal, monitor: UdevMonitor?, seconds: Double) -> Bool {
        guard let monitor else { return stop.wait(seconds: seconds) }
        var fds = [
            pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: monitor.fd, events: Int16(POLLIN), revents: 0),
        ]
        _ = poll(&fds, 2, Int32(seconds * 1000))
        if fds[1].revents != 0 { _ = monitor.drain() }
        return fds[0].revents != 0
    }

    // MARK: - What the drivers report (from the reader thread)

    /// Hands `batch` to `sampleOutlet` and empties it, keeping its capacity; nothing when it is empty.
    func deliver(_ batch: inout [MotionSample]) {
        guard !batch.isEmpty else { return }
        batch.withUnsafeBufferPointer { sampleOutlet.receive($0) }
        batch.removeAll(keepingCapacity: true)
    }

    /// Counts `count` whole records decoded (`Counters.recordsRead`).
    func countRecords(_ count: Int) {
        records.wrappingAdd(count, ordering: .relaxed)
    }

    /// Counts `bytes` of a partial record dropped when the device went away (`Counters.bytesDiscarded`).
    func countDiscarded(bytes: Int) {
        discarded.wrappingAdd(bytes, ordering: .relaxed)
    }

    /// Samples flow (called by a driver before it delivers its first batch): sets where their times come from, then
    /// publishes `.polling(reason)` when `polling` is given, else `.sensorBack` after a loss or `.running` (unless that
    /// state is the one published last). After a loss this counts a reconnect (`Counters.reconnects`), and a device
    /// reported missing is forgotten, so that the next loss is published again.
    func publishFlowing(_ timing: SampleTiming, polling reason: String? = nil, supervision: Supervision) {
        timingState.withLock { $0 = timing }
        let state: MotionProviderState
        if let reason {
            state = .polling(reason: reason)
        } else {
            state = supervision.lost ? .sensorBack : .running
        }
        if supervision.lost { reconnectCount.wrappingAdd(1, ordering: .relaxed) }
        supervision.lost = false
        supervision.reportedMissing = false
        supervision.repeats = 0
        send(state, supervision)
    }

    /// Logs each mount matrix of `found` that does not parse, and which one is used instead, and each sampling
    /// frequency file that does not parse (at capture start).
    func warnAboutMountMatrix(_ found: IIODevice) {
        for problem in found.mountMatrixProblems {
            let used = found.mountMatrixSource.map { "using \($0) instead" } ?? "using none (samples are not rotated)"
            logger.warning(
                "sensor: \(found.sysname): ignoring a mount matrix that does not parse (\(problem)); \(used)")
        }
        for problem in found.frequencyProblems {
            logger.warning("sensor: \(found.sysname): \(problem); the rate asked for is written as it is")
        }
    }

    /// Logs what `IIOCaptureSession.restore()` could not put back. A device that is gone cannot be restored: one line.
    private func report(_ errors: [IIOError], of found: IIODevice) {
        guard !errors.isEmpty else { return }
        guard Sysfs.exists(found.path("name")) else {
            logger.info("sensor: \(found.sysname) is gone; \(errors.count) attribute(s) not restored")
            return
        }
        for error in errors {
            logger.error(
                "sensor: \(found.sysname) not restored as found: \(error)",
                metadata: ["device.path": "\(found.syspath)"])
        }
    }
}
