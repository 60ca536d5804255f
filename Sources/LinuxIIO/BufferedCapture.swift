import MotionCore

#if canImport(Glibc)
    import Glibc
#endif

/// Buffered capture (iio-sensor-proxy's `drv-iio-buffer-accel.c`): the device's buffer through `/dev/iio:deviceN`.
///
/// `start()` configures the buffer (`IIOCaptureSession.configure`: rate, channels, trigger, length, watermark,
/// enable), builds the record decoder and opens the node non-blocking. `run()` loops in `poll()` on the node, the stop
/// signal's eventfd and the udev monitor; it reads many records per `read()`, carries a partial record over to the
/// next read, decodes into a reused array and hands each batch to the provider. Nothing per sample allocates, locks
/// or logs. The first records decide where sample times come from (`SampleClock`); then `.running` (or
/// `.sensorBack`) is published, with or without a timestamp channel.
///
/// `run()` returns `.lost` on ENODEV/EIO/ENXIO, EOF, a udev `remove` of the device, or a quiet node whose sysfs
/// directory is gone (counting the partial record's bytes as discarded), `.noData` when nothing arrived within
/// `deliveryDeadline`, and `.stalled` when, after data flowed, nothing arrived for `stallTimeout` (a lost
/// edge-triggered interrupt or a removed trigger: the buffer runs, poll() never wakes). `finish()` closes the node,
/// then disables the buffer and restores what `start()` changed.
struct BufferedCapture: CaptureDriver {
    private let context: CaptureContext
    private let session: IIOCaptureSession
    private var decoder: AccelRecordDecoder?
    private var fd: Int32 = -1

    /// Watermark periods without data, after data flowed, that make a stall (when longer than `deliveryDeadline`).
    static let stallPeriods = 10.0
    /// The shortest silence that makes a stall, in seconds: a lost interrupt never ends, so noticing it in 5 s rather
    /// than 2 costs nothing, while a trigger starved for a moment (a loaded board, a virtual machine) is not
    /// mistaken for one.
    static let minimumStall = 5.0

    /// How long a buffer that delivered may stay silent before it counts as stalled: `minimumStall`,
    /// `deliveryDeadline`, or `stallPeriods` times the time the kernel takes to queue a watermark of records at
    /// `rate`, whichever is longest.
    static func stallTimeout(rate: Double, latency: Double, deliveryDeadline: Double) -> Double {
        let rate = max(rate, 0.1)
        let watermarkPeriod = Double(max(1, Int(rate * latency))) / rate
        return max(minimumStall, deliveryDeadline, stallPeriods * watermarkPeriod)
    }

    /// A driver for `context.device`; nothing is written until `start()`.
    init(_ context: CaptureContext) {
        self.context = context
        session = IIOCaptureSession(device: context.device)
    }

    mutating func start() throws(IIOError) {
        let found = context.device
        let options = context.options
        try session.configure(
            rate: options.rate, trigger: options.trigger, latency: options.latency, hrtimer: options.hrtimerTrigger)
        context.provider.warnAboutMountMatrix(found)
        guard let layout = session.layout, let devnode = found.devnode else {
            throw IIOError(.unsupported, path: found.syspath, "no record layout")
        }
        decoder = try AccelRecordDecoder(
            layout: layout, scale: found.scale, offset: found.offset, mountMatrix: found.mountMatrix)
        let fd = open(devnode, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw Sysfs.error(devnode, verb: "cannot open") }
        self.fd = fd
    }

    mutating func run() -> CaptureOutcome {
        guard let decoder, let layout = session.layout, let devnode = context.device.devnode, fd >= 0 else {
            preconditionFailure("BufferedCapture.run() without a successful start()")
        }
        let found = context.device
        let provider = context.provider
        let stop = context.stop
        let monitor = context.monitor
        let fd = fd

        let recordSize = layout.recordSize
        let rate = session.frequency ?? context.options.rate
        var clock = SampleClock(deviceTimestamps: decoder.hasTimestamp, rate: rate)
        var buffer = [UInt8](repeating: 0, count: recordSize * 1024)
        var carried = 0
        var batch: [MotionSample] = []
        batch.reserveCapacity(1024)
        var gotData = false
        let started = monotonicNow()
        var lastData = started
        let stallAfter = Self.stallTimeout(
            rate: rate, latency: context.options.latency, deliveryDeadline: context.options.deliveryDeadline)
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
                    provider.deliver(&batch)
                    provider.countDiscarded(bytes: carried)
                    return .lost("\(found.sysname) was removed (udev)")
                }
            }
            // A removed device's node never polls readable again (the kernel reports no event): without udevd
            // nothing else tells, so a quiet node is checked against sysfs.
            if ready == 0, !Sysfs.exists(found.path("name")) {
                provider.deliver(&batch)
                provider.countDiscarded(bytes: carried)
                return .lost("\(found.sysname) is gone (\(found.syspath) no longer exists)")
            }
            if fds[0].revents != 0 {
                reading: while true {
                    let result = buffer.withUnsafeMutableBytes { raw in
                        readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[carried...]))
                    }
                    switch result {
                    case .bytes(let n):
                        let now = monotonicNow()
                        gotData = true
                        lastData = now
                        let filled = carried + n
                        let first = batch.count
                        let consumed = buffer.withUnsafeBytes { raw in
                            decoder.decodeAll(UnsafeRawBufferPointer(rebasing: raw[0..<filled]), into: &batch)
                        }
                        if clock.stamp(&batch, from: first, readAt: now) { context.flowing(timing(of: clock)) }
                        provider.countRecords(consumed / recordSize)
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
                        if clock.decided { provider.deliver(&batch) }
                        provider.countDiscarded(bytes: carried)
                        return .lost("\(devnode): end of data (the device went away)")
                    case .failed(let code):
                        if clock.decided { provider.deliver(&batch) }
                        provider.countDiscarded(bytes: carried)
                        if code == ENODEV || code == EIO || code == ENXIO {
                            return .lost("\(devnode): \(String(cString: strerror(code)))")
                        }
                        return .lost("\(devnode): read failed: \(String(cString: strerror(code)))")
                    }
                }
                if clock.decided { provider.deliver(&batch) }
            }
            if !gotData {
                if monotonicNow() - started > context.options.deliveryDeadline { return .noData }
            } else if monotonicNow() - lastData > stallAfter {
                if clock.decided { provider.deliver(&batch) }
                provider.countDiscarded(bytes: carried)
                return .stalled(
                    "\(found.sysname): the buffer stopped delivering (nothing for \(stallAfter) s after data flowed: a "
                        + "lost interrupt, or a trigger that no longer fires?)")
            }
        }
    }

    mutating func finish() -> [IIOError] {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        return session.restore()
    }

    /// Where the samples' times come from, once `clock` decided.
    private func timing(of clock: SampleClock) -> SampleTiming {
        let found = context.device
        let capture = "CLOCK_MONOTONIC at read time, spread over each read at the sample rate"
        switch clock.source {
        case .device?:
            let setting = Sysfs.readIfPresent(found.path("current_timestamp_clock"))?.trimmingWhitespace()
            return SampleTiming(
                source: .device,
                reason: "\(found.sysname) in_timestamp, current_timestamp_clock \(setting ?? "absent (realtime)")")
        case .host? where clock.seen.isEmpty:
            return SampleTiming(
                source: .host, reason: "\(found.sysname) records carry no timestamp channel; \(capture)")
        default:
            let seen = clock.seen.map { String(Int64($0 * 1e9)) }.joined(separator: ", ")
            return SampleTiming(
                source: .host,
                reason: "\(found.sysname) in_timestamp does not advance (first values, ns: \(seen)); \(capture)")
        }
    }
}
