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
/// `.polling(reason:)` is published with the first sample read, not before: an attribute that fails at once (a value
/// that is not a number) is reported as that failure alone, once, however often the supervisor retries.
///
/// Reads: EINTR is retried, EAGAIN a few times more; ENODEV/ENXIO, a sysfs directory that is gone, or
/// `RawReadFailures.limit` failed reads in a row return `.lost`; any other failure (EIO from a bus that missed one
/// transfer, ...) skips that sample. `run()` throws when the driver refuses raw reads while its buffer runs (EBUSY,
/// naming the `enable` file) or a value is not a number or beyond a 32-bit raw value (kind `.invalidValue`, naming
/// the attribute and the text read: `SysfsValue.rawCount`). `finish()` closes the attributes and puts the sampling frequency back.
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
        let timing = SampleTiming(
            source: .host, reason: "\(found.sysname) polled: CLOCK_MONOTONIC at each read of in_accel_*_raw")
        var announced = false
        var failures = RawReadFailures()
        let period = 1 / max(0.1, options.rate)
        var next = monotonicNow()
        var text = [UInt8](repeating: 0, count: 64)
        var raw = [0.0, 0.0, 0.0]
        var batch: [MotionSample] = []
        batch.reserveCapacity(64)
        let perBatch = Self.samplesPerBatch(rate: options.rate, latency: options.latency)
        sampling: while true {
            let delay = next - monotonicNow()
            if delay > 0, stop.wait(seconds: delay) { return .stopped }
            if stop.fired { return .stopped }
            next += period
            for (axis, fd) in fds.enumerated() {
                let code: Int32
                switch Self.readRaw(fd, into: &text) {
                case .bytes(let n):
                    let count = text.withUnsafeBytes { SysfsValue.rawCount(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
                    guard case .value(let number) = count else {
                        provider.deliver(&batch)
                        let value = SysfsValue.printable(String(decoding: text[..<n], as: UTF8.self), limit: 40)
                        throw IIOError(
                            .invalidValue, path: paths[axis],
                            count == .outOfRange
                                ? "'\(value)' is beyond what a raw value holds (a 32-bit integer)"
                                : "'\(value)' is not a number (raw counts expected)")
                    }
                    raw[axis] = number
                    continue
                case .failed(EBUSY):
                    let enable = found.bufferDirectory.map { found.path($0 + "/enable") } ?? found.path("buffer/enable")
                    throw IIOError(
                        .io, path: paths[axis],
                        "busy: the driver refuses raw reads while its buffer runs (\(enable) = 1, enabled by another "
                            + "program); stop that program, or write 0 to \(enable)")
                case .failed(let failure): code = failure
                case .wouldBlock: code = EAGAIN
                case .endOfFile: code = 0
                }
                switch failures.failed(code, deviceGone: !Sysfs.exists(found.path("name"))) {
                case .skip:
                    let now = monotonicNow()
                    if next < now - period { next = now }  // slow failures: do not burst afterwards
                    continue sampling
                case .lost(let why):
                    provider.deliver(&batch)
                    return .lost("\(paths[axis]): \(why)")
                }
            }
            failures.succeeded()
            let now = monotonicNow()
            if !announced {
                announced = true
                context.flowing(timing, polling: reason)
            }
            batch.append(conversion.sample(rawX: raw[0], rawY: raw[1], rawZ: raw[2], time: now))
            provider.countRecords(1)
            if batch.count >= perBatch { provider.deliver(&batch) }
            if next < now - period { next = now }  // fell behind (suspend, slow sysfs): do not burst
        }
    }

    /// How many samples make a batch: `latency` worth at `rate` (at least 0.1 Hz), from 1 up to 100000. The quotient
    /// is clamped before it becomes an `Int`: a rate of 1e300 (or infinity, or nan) would otherwise trap.
    static func samplesPerBatch(rate: Double, latency: Double) -> Int {
        let wanted = latency * max(0.1, rate)
        return wanted >= 1 ? Int(min(wanted, 100_000)) : 1
    }

    /// EAGAIN retries of one raw read before it counts as failed.
    static let againRetries = 3

    /// `pread()` of a raw attribute into `text` (its last byte left free): EINTR retried in `retryingInterrupts`,
    /// EAGAIN up to `againRetries` more times. Allocates nothing.
    private static func readRaw(_ fd: Int32, into text: inout [UInt8]) -> ReadResult {
        var attempts = 0
        while true {
            let result = text.withUnsafeMutableBytes { bytes in
                retryingInterrupts { pread(fd, bytes.baseAddress, bytes.count - 1, 0) }
            }
            switch result {
            case .success(0): return .endOfFile
            case .success(let n): return .bytes(n)
            case .failure(let error): return .failed(error.rawValue)
            case .wouldBlock:
                attempts += 1
                if attempts > againRetries { return .wouldBlock }
            }
        }
    }

    mutating func finish() -> [IIOError] {
        fds.forEach { close($0) }
        fds.removeAll()
        return session.restore()
    }
}

/// What failed raw reads mean for polling. A sysfs read can fail once without the device going away (EIO when an
/// I2C transfer is not acknowledged, EAGAIN, ETIMEDOUT): such a failure skips one sample. The device is gone only on
/// ENODEV/ENXIO, when its sysfs directory is gone, or after `limit` failed reads in a row.
struct RawReadFailures: Equatable {
    /// Failed reads in a row that count as a lost device whatever the error.
    static let limit = 10

    /// What to do after a failed read.
    enum Verdict: Equatable {
        /// Skip this sample; read again at the next period.
        case skip
        /// The device is gone: why (errno's text, and what made it final).
        case lost(String)
    }

    /// Failed reads since the last whole sample.
    private(set) var inRow = 0

    /// One read failed with `code` (an errno value; 0 for a read that returned nothing). `deviceGone` is evaluated
    /// only when the code alone does not decide.
    mutating func failed(_ code: Int32, deviceGone: @autoclosure () -> Bool) -> Verdict {
        inRow += 1
        if code == ENODEV || code == ENXIO { return .lost(Self.describe(code)) }
        if deviceGone() { return .lost("\(Self.describe(code)) (the device's sysfs directory is gone)") }
        if inRow >= Self.limit { return .lost("\(Self.describe(code)) (\(inRow) reads in a row failed)") }
        return .skip
    }

    /// errno's text for `code`, or what a read of nothing means.
    private static func describe(_ code: Int32) -> String {
        code == 0 ? "read nothing" : String(cString: strerror(code))
    }

    /// A whole sample was read: the count starts again.
    mutating func succeeded() { inRow = 0 }
}
