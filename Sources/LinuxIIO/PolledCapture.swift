import MotionCore
import PlainText

#if canImport(Glibc)
    import Glibc
#endif

/// Polled capture (iio-sensor-proxy's `drv-iio-poll-accel.c`): `in_accel_{x,y,z}_raw` read at the configured rate,
/// for a device without a (usable) buffer.
///
/// `start()` refuses a device without the three raw attributes (naming why polling was chosen), sets the chip's
/// sampling frequency (`IIOCaptureSession.configurePolling`: some chips wait for a sample at their own rate on every
/// raw read) and opens the three attributes. `run()` publishes host timing and `.polling(reason:)`, then at each
/// period reads the three values with `pread()` into a reused text buffer, times the sample with CLOCK_MONOTONIC, and
/// hands batches of `latency` worth of samples to the provider; between reads it waits on the stop signal's eventfd.
/// Nothing per sample allocates, locks or logs. A reader that falls behind (suspend, slow sysfs) skips ahead instead
/// of bursting.
///
/// `run()` returns `.lost` when a read fails or returns nothing, and throws when the driver refuses raw reads while
/// its buffer runs (EBUSY, naming the `enable` file) or a value is not a number. `finish()` closes the attributes and
/// puts the sampling frequency back.
struct PolledCapture: CaptureDriver {
    private let context: CaptureContext
    private let reason: String
    private let session: IIOCaptureSession
    private let paths: [String]
    private var fds: [Int32] = []

    /// A driver for `context.device`, chosen for `reason` (published with `.polling`); nothing is written until
    /// `start()`.
    init(_ context: CaptureContext, reason: String) {
        self.context = context
        self.reason = reason
        session = IIOCaptureSession(device: context.device)
        paths = ["x", "y", "z"].map { context.device.path("in_accel_\($0)_raw") }
    }

    mutating func start() throws(IIOError) {
        let found = context.device
        guard found.hasRawAccel else {
            throw IIOError(.unsupported, path: found.syspath, "no in_accel_x/y/z_raw to poll (\(reason))")
        }
        // A chip that sleeps between reads (lis3dh: 2000 / sampling_frequency ms per read) must run fast enough.
        try session.configurePolling(rate: context.options.rate)
        context.provider.warnAboutMountMatrix(found)
        for path in paths {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw Sysfs.error(path, verb: "cannot open") }
            fds.append(fd)
        }
    }

    mutating func run() throws(IIOError) -> CaptureOutcome {
        precondition(fds.count == 3, "PolledCapture.run() without a successful start()")
        let found = context.device
        let options = context.options
        let provider = context.provider
        let stop = context.stop
        let fds = fds
        let conversion = AccelRecordDecoder.Conversion(
            scale: found.scale, offset: found.offset, mountMatrix: found.mountMatrix)
        provider.publish(
            SampleTiming(
                source: .host, reason: "\(found.sysname) polled: CLOCK_MONOTONIC at each read of in_accel_*_raw"),
            state: .polling(reason: reason))
        let period = 1 / max(0.1, options.rate)
        var next = monotonicNow()
        var text = [UInt8](repeating: 0, count: 64)
        var raw = [0.0, 0.0, 0.0]
        var batch: [MotionSample] = []
        batch.reserveCapacity(64)
        let perBatch = max(1, Int(options.latency / period))
        while true {
            let delay = next - monotonicNow()
            if delay > 0, stop.wait(seconds: delay) { return .stopped }
            if stop.fired { return .stopped }
            for (axis, fd) in fds.enumerated() {
                let n = pread(fd, &text, text.count - 1, 0)
                if n < 0, errno == EBUSY {
                    let enable = found.bufferDirectory.map { found.path($0 + "/enable") } ?? found.path("buffer/enable")
                    throw IIOError(
                        .io, path: paths[axis],
                        "busy: the driver refuses raw reads while its buffer runs (\(enable) = 1, enabled by another "
                            + "program); stop that program, or write 0 to \(enable)")
                }
                if n <= 0 {
                    let code = n < 0 ? errno : ENODEV
                    provider.deliver(&batch)
                    return .lost("\(paths[axis]): \(String(cString: strerror(code)))")
                }
                guard let value = parseDecimal(String(decoding: text[..<n], as: UTF8.self)) else {
                    throw IIOError(.invalidValue, path: paths[axis], "not a number")
                }
                raw[axis] = value
            }
            let now = monotonicNow()
            batch.append(conversion.sample(rawX: raw[0], rawY: raw[1], rawZ: raw[2], time: now))
            provider.countRecords(1)
            if batch.count >= perBatch { provider.deliver(&batch) }
            next += period
            if next < now - period { next = now }  // fell behind (suspend, slow sysfs): do not burst
        }
    }

    mutating func finish() -> [IIOError] {
        fds.forEach { close($0) }
        fds.removeAll()
        return session.restore()
    }
}
