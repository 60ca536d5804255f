import Logging
import MotionCore
import PlainText
import RepSettings
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real accelerometer through the IIO buffered character device, behind the `MotionProvider` protocol.
///
/// `start()` spawns one reader thread that finds the device with libudev, configures it (`IIOCaptureSession`),
/// opens `/dev/iio:deviceN` non-blocking and loops in `poll()` on it and on an eventfd that `stop()` fires. It reads
/// many records per `read()`, carries partial records over, decodes into a reused array and writes each batch into
/// `sampleOutlet`, from which attached sinks (the daemon: its ring) take it without a copy. Nothing per sample
/// allocates, locks or logs; nothing per batch allocates unless someone subscribes to `samplePublisher`.
///
/// Faults: ENODEV/EIO (or EOF) while reading mean the sensor is gone: the state becomes `.sensorLost`, the device is
/// closed, and the thread rescans every `rescanInterval` until it returns (`.sensorBack`). A buffer that delivers
/// nothing within `deliveryDeadline`, or a device without a buffer, falls back to polling `in_accel_*_raw` at the
/// configured rate (`.polling`). A missing device at start is `.failed(.notFound)` and is waited for the same way;
/// permission problems are `.failed(.permissionDenied)` naming the file and the fix. `stop()` puts the device back
/// exactly as it was found.
public final class LinuxIIOMotionProvider: MotionProvider, @unchecked Sendable {
    // @unchecked Sendable: the state subject and the outlet are sent to only from the reader thread;
    // `thread`/`stopSignal` are guarded by `control`; counters are atomics.

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
    public let sampleOutlet = MotionSampleOutlet()

    private let stateSubject = CurrentValueSubject<MotionProviderState, Never>(.idle)
    private let control = Mutex<(thread: NamedThread?, stop: WakeSignal?)>((nil, nil))
    private let records = Atomic<Int>(0)
    private let discarded = Atomic<Int>(0)
    private let reconnectCount = Atomic<Int>(0)
    private let device = Mutex<IIODevice?>(nil)
    private let timingState = Mutex<SampleTiming?>(nil)

    private let logger: Logger

    /// A provider with `options`; nothing happens until `start()`. `logger` gets what does not stop capture but
    /// should be seen: a mount matrix that does not parse (at capture start) and state that could not be put back
    /// (at stop). Never per sample.
    public init(options: Options = .init(), logger: Logger = Logger(label: "repd.iio")) {
        self.options = options
        self.logger = logger
    }

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

    /// Starts the reader thread. Does nothing if it runs.
    public func start() {
        control.withLock { c in
            guard c.thread == nil else { return }
            let stop = WakeSignal()
            c.stop = stop
            c.thread = NamedThread(name: "repd-iio") { [self] in self.run(stop: stop) }
        }
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

    // MARK: - The reader thread

    private enum Outcome {
        case stopped
        case lost(String)
        case noData
        /// The driver refused the buffered setup; why, with the file and the fix.
        case refused(String)
    }

    private func run(stop: WakeSignal) {
        let monitor = UdevMonitor()
        var lost = false
        var reportedMissing = false
        var lastFailure: String?
        while !stop.fired {
            do {
                let found = try IIODeviceScanner.choose(options.device)
                device.withLock { $0 = found }
                timingState.withLock { $0 = nil }
                if lost { reconnectCount.wrappingAdd(1, ordering: .relaxed) }
                let outcome: Outcome
                // Accel or timestamp scan elements that do not parse fail the buffered setup (with the file and
                // why) rather than fall back to polling unnoticed.
                if found.hasBufferedAccel || (found.devnode != nil && !found.channelErrors.isEmpty), found.bufferDirectory != nil, !options.forcePolling {
                    let buffered: Outcome
                    do {
                        buffered = try runBuffered(found, stop: stop, monitor: monitor, back: lost)
                    } catch where error.kind == .io {
                        // The driver refused the setup (a trigger it does not accept, a buffer it cannot start):
                        // the message names the file and the fix; samples still flow by polling.
                        buffered = .refused(error.description)
                    }
                    switch buffered {
                    case .noData:
                        outcome = try runPolling(found, stop: stop, reason: "the buffer delivered nothing within \(options.deliveryDeadline) s")
                    case .refused(let reason):
                        outcome = try runPolling(found, stop: stop, reason: reason)
                    default:
                        outcome = buffered
                    }
                } else {
                    let reason =
                        options.forcePolling ? "polling was asked for"
                        : found.devnode == nil ? "the device has no buffer (no \(found.sysname) device node)" : "the device has no usable buffer"
                    outcome = try runPolling(found, stop: stop, reason: reason)
                }
                lastFailure = nil
                switch outcome {
                case .stopped: return
                case .lost(let reason):
                    lost = true
                    reportedMissing = true
                    stateSubject.send(.sensorLost(reason: reason))
                case .noData, .refused: break
                }
            } catch {
                switch error.kind {
                case .notFound, .deviceLost:
                    if !reportedMissing {
                        reportedMissing = true
                        if lost {
                            stateSubject.send(.sensorLost(reason: error.description))
                        } else {
                            stateSubject.send(.failed(MotionProviderError(.notFound, error.description)))
                        }
                    }
                    if error.kind == .deviceLost { lost = true }
                case .permissionDenied, .unsupported, .invalidValue, .io:
                    // The same failure again at the next rescan is not news.
                    if lastFailure != error.description {
                        lastFailure = error.description
                        let kind: MotionProviderError.Kind =
                            error.kind == .permissionDenied ? .permissionDenied : error.kind == .io ? .io : .unsupported
                        stateSubject.send(.failed(MotionProviderError(kind, error.description)))
                    }
                    reportedMissing = true
                }
            }
            if wait(stop, monitor: monitor, seconds: options.rescanInterval) { return }
        }
    }

    /// Waits up to `seconds`, or less when udev reports an added IIO device; true when stopped.
    private func wait(_ stop: WakeSignal, monitor: UdevMonitor?, seconds: Double) -> Bool {
        guard let monitor else { return wait(stop, seconds: seconds) }
        var fds = [pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: monitor.fd, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, Int32(seconds * 1000))
        if fds[1].revents != 0 { _ = monitor.drain() }
        return fds[0].revents != 0
    }

    /// Waits up to `seconds`; true when stopped.
    private func wait(_ stop: WakeSignal, seconds: Double) -> Bool {
        var pfd = pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, Int32(seconds * 1000)) > 0
    }

    private func runBuffered(_ found: IIODevice, stop: WakeSignal, monitor: UdevMonitor?, back: Bool) throws(IIOError) -> Outcome {
        let session = IIOCaptureSession(device: found)
        defer { report(session.restore(), of: found) }
        try session.configure(rate: options.rate, trigger: options.trigger, latency: options.latency, hrtimer: options.hrtimerTrigger)
        warnAboutMountMatrix(found)
        guard let layout = session.layout, let devnode = found.devnode else {
            throw IIOError(.unsupported, path: found.syspath, "no record layout")
        }
        let decoder = try AccelRecordDecoder(
            layout: layout, scale: found.scale, offset: found.offset, mountMatrix: found.mountMatrix)
        let fd = open(devnode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Sysfs.error(devnode, verb: "cannot open") }
        defer { close(fd) }

        let recordSize = layout.recordSize
        let rate = session.frequency ?? options.rate
        var clock = SampleClock(deviceTimestamps: decoder.hasTimestamp, rate: rate)
        var buffer = [UInt8](repeating: 0, count: recordSize * 1024)
        var carried = 0
        var batch: [MotionSample] = []
        batch.reserveCapacity(1024)
        var gotData = false
        let started = monotonicNow()
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: monitor?.fd ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            for index in fds.indices { fds[index].revents = 0 }
            let ready: Int32
            switch retryingInterrupts({ poll(&fds, 3, 250) }) {
            case .success(let count): ready = count
            case .wouldBlock: ready = 0
            case .failure(let error): return .lost("poll failed: \(error)")
            }
            if fds[1].revents != 0 { return .stopped }
            if fds[2].revents != 0, let monitor {
                if monitor.drain().contains(where: { $0.action == "remove" && $0.syspath == found.syspath }) {
                    emit(&batch)
                    discarded.wrappingAdd(carried, ordering: .relaxed)
                    return .lost("\(found.sysname) was removed (udev)")
                }
            }
            // A removed device's node never polls readable again (the kernel reports no event): without udevd
            // nothing else tells, so a quiet node is checked against sysfs.
            if ready == 0, !Sysfs.exists(found.path("name")) {
                emit(&batch)
                discarded.wrappingAdd(carried, ordering: .relaxed)
                return .lost("\(found.sysname) is gone (\(found.syspath) no longer exists)")
            }
            if fds[0].revents != 0 {
                reading: while true {
                    let result = buffer.withUnsafeMutableBytes { raw in
                        readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[carried...]))
                    }
                    switch result {
                    case .bytes(let n):
                        gotData = true
                        let filled = carried + n
                        let first = batch.count
                        let consumed = buffer.withUnsafeBytes { raw in
                            decoder.decodeAll(UnsafeRawBufferPointer(rebasing: raw[0..<filled]), into: &batch)
                        }
                        if clock.stamp(&batch, from: first, readAt: monotonicNow()) { announce(clock, of: found, back: back) }
                        records.wrappingAdd(consumed / recordSize, ordering: .relaxed)
                        carried = filled - consumed
                        if carried > 0 {
                            buffer.withUnsafeMutableBytes { raw in
                                raw.baseAddress!.copyMemory(from: raw.baseAddress! + consumed, byteCount: carried)
                            }
                        }
                        if filled < buffer.count / 2 { break reading }
                    case .wouldBlock:
                        break reading
                    case .endOfFile:
                        if clock.decided { emit(&batch) }
                        discarded.wrappingAdd(carried, ordering: .relaxed)
                        return .lost("\(devnode): end of data (the device went away)")
                    case .failed(let code):
                        if clock.decided { emit(&batch) }
                        discarded.wrappingAdd(carried, ordering: .relaxed)
                        if code == ENODEV || code == EIO || code == ENXIO {
                            return .lost("\(devnode): \(String(cString: strerror(code)))")
                        }
                        return .lost("\(devnode): read failed: \(String(cString: strerror(code)))")
                    }
                }
                if clock.decided { emit(&batch) }
            }
            if !gotData, monotonicNow() - started > options.deliveryDeadline { return .noData }
        }
    }

    /// Publishes where the samples' times come from, then that samples flow.
    private func announce(_ clock: SampleClock, of found: IIODevice, back: Bool) {
        let capture = "CLOCK_MONOTONIC at read time, spread over each read at the sample rate"
        let timing: SampleTiming
        switch clock.source {
        case .device?:
            let setting = Sysfs.readIfPresent(found.path("current_timestamp_clock"))?.trimmingWhitespace()
            timing = SampleTiming(source: .device, reason: "\(found.sysname) in_timestamp, current_timestamp_clock \(setting ?? "absent (realtime)")")
        case .host? where clock.seen.isEmpty:
            timing = SampleTiming(source: .host, reason: "\(found.sysname) records carry no timestamp channel; \(capture)")
        default:
            let seen = clock.seen.map { String(Int64($0 * 1e9)) }.joined(separator: ", ")
            timing = SampleTiming(source: .host, reason: "\(found.sysname) in_timestamp does not advance (first values, ns: \(seen)); \(capture)")
        }
        timingState.withLock { $0 = timing }
        stateSubject.send(back ? .sensorBack : .running)
    }

    private func runPolling(_ found: IIODevice, stop: WakeSignal, reason: String) throws(IIOError) -> Outcome {
        guard found.hasRawAccel else {
            throw IIOError(.unsupported, path: found.syspath, "no in_accel_x/y/z_raw to poll (\(reason))")
        }
        // A chip that sleeps between reads (lis3dh: 2000 / sampling_frequency ms per read) must run fast enough.
        let session = IIOCaptureSession(device: found)
        defer { report(session.restore(), of: found) }
        try session.configurePolling(rate: options.rate)
        warnAboutMountMatrix(found)
        let conversion = AccelRecordDecoder.Conversion(scale: found.scale, offset: found.offset, mountMatrix: found.mountMatrix)
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        let paths = ["x", "y", "z"].map { found.path("in_accel_\($0)_raw") }
        for path in paths {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Sysfs.error(path, verb: "cannot open") }
            fds.append(fd)
        }
        timingState.withLock { $0 = SampleTiming(source: .host, reason: "\(found.sysname) polled: CLOCK_MONOTONIC at each read of in_accel_*_raw") }
        stateSubject.send(.polling(reason: reason))
        let period = 1 / max(0.1, options.rate)
        var next = monotonicNow()
        var text = [UInt8](repeating: 0, count: 64)
        var batch: [MotionSample] = []
        batch.reserveCapacity(64)
        let perBatch = max(1, Int(options.latency / period))
        while true {
            let delay = next - monotonicNow()
            if delay > 0, wait(stop, seconds: delay) { return .stopped }
            if stop.fired { return .stopped }
            var raw = [0.0, 0.0, 0.0]
            for (axis, fd) in fds.enumerated() {
                let n = pread(fd, &text, text.count - 1, 0)
                if n < 0, errno == EBUSY {
                    let enable = found.bufferDirectory.map { found.path($0 + "/enable") } ?? found.path("buffer/enable")
                    throw IIOError(.io, path: paths[axis],
                        "busy: the driver refuses raw reads while its buffer runs (\(enable) = 1, enabled by another program); stop that program, or write 0 to \(enable)")
                }
                if n <= 0 {
                    let code = n < 0 ? errno : ENODEV
                    emit(&batch)
                    return .lost("\(paths[axis]): \(String(cString: strerror(code)))")
                }
                guard let value = parseDecimal(String(decoding: text[..<n], as: UTF8.self)) else {
                    throw IIOError(.invalidValue, path: paths[axis], "not a number")
                }
                raw[axis] = value
            }
            let now = monotonicNow()
            batch.append(conversion.sample(rawX: raw[0], rawY: raw[1], rawZ: raw[2], time: now))
            records.wrappingAdd(1, ordering: .relaxed)
            if batch.count >= perBatch { emit(&batch) }
            next += period
            if next < now - period { next = now }  // fell behind (suspend, slow sysfs): do not burst
        }
    }

    private func warnAboutMountMatrix(_ found: IIODevice) {
        for problem in found.mountMatrixProblems {
            let used = found.mountMatrixSource.map { "using \($0) instead" } ?? "using none (samples are not rotated)"
            logger.warning("sensor: \(found.sysname): ignoring a mount matrix that does not parse (\(problem)); \(used)")
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
            logger.error("sensor: \(found.sysname) not restored as found: \(error)", metadata: ["device.path": "\(found.syspath)"])
        }
    }

    private func emit(_ batch: inout [MotionSample]) {
        guard !batch.isEmpty else { return }
        batch.withUnsafeBufferPointer { sampleOutlet.receive($0) }
        batch.removeAll(keepingCapacity: true)
    }
}
