import MotionCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A real accelerometer through the IIO buffered character device, behind the `MotionProvider` protocol.
///
/// `start()` spawns one reader thread that finds the device with libudev, configures it (`IIOCaptureSession`),
/// opens `/dev/iio:deviceN` non-blocking and loops in `poll()` on it and on an eventfd that `stop()` fires. It reads
/// many records per `read()`, carries partial records over, decodes into a reused array and delivers each batch:
/// to `directSink` when set (the daemon: zero-copy into its ring), else through `samplePublisher`. Nothing per sample
/// allocates, locks or logs.
///
/// Faults: ENODEV/EIO (or EOF) while reading mean the sensor is gone: the state becomes `.sensorLost`, the device is
/// closed, and the thread rescans every `rescanInterval` until it returns (`.sensorBack`). A buffer that delivers
/// nothing within `deliveryDeadline`, or a device without a buffer, falls back to polling `in_accel_*_raw` at the
/// configured rate (`.polling`). A missing device at start is `.failed(.notFound)` and is waited for the same way;
/// permission problems are `.failed(.permissionDenied)` naming the file and the fix. `stop()` puts the device back
/// exactly as it was found.
public final class LinuxIIOMotionProvider: MotionProvider, @unchecked Sendable {
    // @unchecked Sendable: the subjects are sent to only from the reader thread; `thread`/`stopSignal` are guarded by
    // `control`; counters are atomics; `directSink` is set before `start()` and only read by the reader thread.

    /// What to read and how.
    public struct Options: Sendable {
        /// Device name, label, sysname, syspath or devnode; empty takes the first accelerometer.
        public var device = ""
        /// Requested sample rate, Hz.
        public var rate = 100.0
        /// Trigger name; nil chooses (the device's own, else the current one, else none).
        public var trigger: String?
        /// How long samples may wait in the kernel before the reader wakes (sets the buffer watermark).
        public var latency = 0.02
        /// A buffer that delivers nothing for this long falls back to polling.
        public var deliveryDeadline = 2.0
        /// How often a missing or lost device is looked for again, seconds.
        public var rescanInterval = 0.5
        /// Poll `in_accel_*_raw` even if the device has a buffer.
        public var forcePolling = false
        /// Create an hrtimer trigger through configfs when the device has none (and remove it at stop).
        public var hrtimerTrigger = false

        /// The defaults.
        public init() {}
    }

    /// Counters, readable from any thread.
    public struct Counters: Sendable, Equatable {
        /// Whole records decoded.
        public var recordsRead: Int
        /// Bytes of partial records dropped (when the device went away mid-record).
        public var bytesDiscarded: Int
        /// Times the device came back after being lost.
        public var reconnects: Int
    }

    /// The options.
    public let options: Options
    /// When set (before `start()`), batches go here instead of `samplePublisher`, without copying.
    public var directSink: (@Sendable (UnsafeBufferPointer<MotionSample>) -> Void)?

    private let sampleSubject = PassthroughSubject<[MotionSample], Never>()
    private let stateSubject = CurrentValueSubject<MotionProviderState, Never>(.idle)
    private let control = Mutex<(thread: ReaderThread?, stop: StopSignal?)>((nil, nil))
    private let records = Atomic<Int>(0)
    private let discarded = Atomic<Int>(0)
    private let reconnectCount = Atomic<Int>(0)
    private let device = Mutex<IIODevice?>(nil)

    /// A provider with `options`; nothing happens until `start()`.
    public init(options: Options = .init()) { self.options = options }

    public var samplePublisher: AnyPublisher<[MotionSample], Never> { sampleSubject.eraseToAnyPublisher() }
    public var statePublisher: AnyPublisher<MotionProviderState, Never> { stateSubject.eraseToAnyPublisher() }

    /// The counters so far.
    public var counters: Counters {
        Counters(
            recordsRead: records.load(ordering: .relaxed), bytesDiscarded: discarded.load(ordering: .relaxed),
            reconnects: reconnectCount.load(ordering: .relaxed))
    }

    /// The device in use (nil before it is found).
    public var currentDevice: IIODevice? { device.withLock { $0 } }

    /// Starts the reader thread. Does nothing if it runs.
    public func start() {
        control.withLock { c in
            guard c.thread == nil else { return }
            let stop = StopSignal()
            c.stop = stop
            c.thread = ReaderThread(name: "repd-iio") { [self] in self.run(stop: stop) }
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
    }

    private func run(stop: StopSignal) {
        let monitor = UdevMonitor()
        var lost = false
        var reportedMissing = false
        while !stop.fired {
            do {
                let found = try IIODeviceScanner.choose(options.device)
                device.withLock { $0 = found }
                if lost { reconnectCount.wrappingAdd(1, ordering: .relaxed) }
                let outcome: Outcome
                if found.hasBufferedAccel, found.bufferDirectory != nil, !options.forcePolling {
                    let buffered = try runBuffered(found, stop: stop, monitor: monitor, back: lost)
                    if case .noData = buffered {
                        outcome = try runPolling(found, stop: stop, reason: "the buffer delivered nothing within \(options.deliveryDeadline) s")
                    } else {
                        outcome = buffered
                    }
                } else {
                    let reason = options.forcePolling ? "polling was asked for" : "the device has no usable buffer"
                    outcome = try runPolling(found, stop: stop, reason: reason)
                }
                switch outcome {
                case .stopped: return
                case .lost(let reason):
                    lost = true
                    reportedMissing = true
                    stateSubject.send(.sensorLost(reason: reason))
                case .noData: break
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
                case .permissionDenied:
                    stateSubject.send(.failed(MotionProviderError(.permissionDenied, error.description)))
                    reportedMissing = true
                case .unsupported, .invalidValue:
                    stateSubject.send(.failed(MotionProviderError(.unsupported, error.description)))
                    reportedMissing = true
                case .io:
                    stateSubject.send(.failed(MotionProviderError(.io, error.description)))
                    reportedMissing = true
                }
            }
            if wait(stop, monitor: monitor, seconds: options.rescanInterval) { return }
        }
    }

    /// Waits up to `seconds`, or less when udev reports an added IIO device; true when stopped.
    private func wait(_ stop: StopSignal, monitor: UdevMonitor?, seconds: Double) -> Bool {
        guard let monitor else { return wait(stop, seconds: seconds) }
        var fds = [pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0), pollfd(fd: monitor.fd, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, Int32(seconds * 1000))
        if fds[1].revents != 0 { _ = monitor.drain() }
        return fds[0].revents != 0
    }

    /// Waits up to `seconds`; true when stopped.
    private func wait(_ stop: StopSignal, seconds: Double) -> Bool {
        var pfd = pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, Int32(seconds * 1000)) > 0
    }

    private func runBuffered(_ found: IIODevice, stop: StopSignal, monitor: UdevMonitor?, back: Bool) throws(IIOError) -> Outcome {
        let session = IIOCaptureSession(device: found)
        defer { session.restore() }
        try session.configure(rate: options.rate, trigger: options.trigger, latency: options.latency, hrtimer: options.hrtimerTrigger)
        guard let layout = session.layout, let devnode = found.devnode else {
            throw IIOError(.unsupported, path: found.syspath, "no record layout")
        }
        let decoder = try AccelRecordDecoder(
            layout: layout, scale: found.scale, offset: found.offset, mountMatrix: found.mountMatrix)
        let fd = open(devnode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Sysfs.error(devnode, verb: "cannot open") }
        defer { close(fd) }
        stateSubject.send(back ? .sensorBack : .running)

        let recordSize = layout.recordSize
        let rate = session.frequency ?? options.rate
        var buffer = [UInt8](repeating: 0, count: recordSize * 1024)
        var carried = 0
        var batch: [MotionSample] = []
        batch.reserveCapacity(1024)
        var gotData = false
        let started = realtimeNow()
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stop.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: monitor?.fd ?? -1, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            for index in fds.indices { fds[index].revents = 0 }
            let ready = poll(&fds, 3, 250)
            if ready < 0, errno != EINTR { return .lost("poll failed: \(String(cString: strerror(errno)))") }
            if fds[1].revents != 0 { return .stopped }
            if fds[2].revents != 0, let monitor {
                if monitor.drain().contains(where: { $0.action == "remove" && $0.syspath == found.syspath }) {
                    emit(&batch)
                    discarded.wrappingAdd(carried, ordering: .relaxed)
                    return .lost("\(found.sysname) was removed (udev)")
                }
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
                        let consumed = buffer.withUnsafeBytes { raw -> Int in
                            // With a timestamp channel every record carries its own time: decode them in one pass.
                            if decoder.hasTimestamp {
                                return decoder.decodeAll(UnsafeRawBufferPointer(rebasing: raw[0..<filled]), into: &batch)
                            }
                            // Without one, records are spaced back from now at the sample rate.
                            let now = realtimeNow()
                            let count = filled / recordSize
                            var offset = 0
                            var index = 0
                            while offset + recordSize <= filled {
                                let fallback = now - Double(count - 1 - index) / rate
                                batch.append(decoder.decode(UnsafeRawBufferPointer(rebasing: raw[offset..<offset + recordSize]), fallbackTime: fallback))
                                offset += recordSize
                                index += 1
                            }
                            return offset
                        }
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
                        emit(&batch)
                        discarded.wrappingAdd(carried, ordering: .relaxed)
                        return .lost("\(devnode): end of data (the device went away)")
                    case .failed(let code):
                        emit(&batch)
                        discarded.wrappingAdd(carried, ordering: .relaxed)
                        if code == ENODEV || code == EIO || code == ENXIO {
                            return .lost("\(devnode): \(String(cString: strerror(code)))")
                        }
                        return .lost("\(devnode): read failed: \(String(cString: strerror(code)))")
                    }
                }
                emit(&batch)
            }
            if !gotData, realtimeNow() - started > options.deliveryDeadline { return .noData }
        }
    }

    private func runPolling(_ found: IIODevice, stop: StopSignal, reason: String) throws(IIOError) -> Outcome {
        guard found.hasRawAccel else {
            throw IIOError(.unsupported, path: found.syspath, "no in_accel_x/y/z_raw to poll (\(reason))")
        }
        let conversion = AccelRecordDecoder.Conversion(scale: found.scale, offset: found.offset, mountMatrix: found.mountMatrix)
        var fds: [Int32] = []
        defer { fds.forEach { close($0) } }
        for axis in ["x", "y", "z"] {
            let path = found.path("in_accel_\(axis)_raw")
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Sysfs.error(path, verb: "cannot open") }
            fds.append(fd)
        }
        stateSubject.send(.polling(reason: reason))
        let period = 1 / max(0.1, options.rate)
        var next = realtimeNow()
        var text = [UInt8](repeating: 0, count: 64)
        var batch: [MotionSample] = []
        batch.reserveCapacity(64)
        let perBatch = max(1, Int(options.latency / period))
        while true {
            let delay = next - realtimeNow()
            if delay > 0, wait(stop, seconds: delay) { return .stopped }
            if stop.fired { return .stopped }
            var raw = [0.0, 0.0, 0.0]
            for (axis, fd) in fds.enumerated() {
                let n = pread(fd, &text, text.count - 1, 0)
                if n <= 0 {
                    let code = n < 0 ? errno : ENODEV
                    return .lost("\(found.path("in_accel_raw")): \(String(cString: strerror(code)))")
                }
                guard let value = parseDecimal(String(decoding: text[..<n], as: UTF8.self)) else {
                    throw IIOError(.invalidValue, path: found.path("in_accel_\(["x", "y", "z"][axis])_raw"), "not a number")
                }
                raw[axis] = value
            }
            batch.append(conversion.sample(rawX: raw[0], rawY: raw[1], rawZ: raw[2], time: realtimeNow()))
            records.wrappingAdd(1, ordering: .relaxed)
            if batch.count >= perBatch { emit(&batch) }
            next += period
            let now = realtimeNow()
            if next < now - period { next = now }  // fell behind (suspend, slow sysfs): do not burst
        }
    }

    private func emit(_ batch: inout [MotionSample]) {
        guard !batch.isEmpty else { return }
        if let directSink {
            batch.withUnsafeBufferPointer { directSink($0) }
            batch.removeAll(keepingCapacity: true)
        } else {
            sampleSubject.send(batch)
            batch.removeAll(keepingCapacity: true)
        }
    }
}
