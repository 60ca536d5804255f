/// One way of capturing samples from a found IIO device, behind the small vtable the provider's supervisor loop drives
/// (the shape of iio-sensor-proxy's `drv-*.c`): `BufferedCapture` reads `/dev/iio:deviceN`, `PolledCapture` reads
/// `in_accel_*_raw` at the rate.
///
/// The supervisor (`LinuxIIOMotionProvider`) creates a driver for each capture attempt, then calls `start()` once,
/// `run()` once if `start()` succeeded, and `finish()` exactly once whatever happened. It alone decides which driver
/// runs (buffered first; polling when there is no buffer, when polling is forced, when the buffer is refused,
/// delivers nothing within the deadline or stalled too often) and what a lost device or a stalled buffer means
/// (rescan or restart, `.sensorLost`, `.sensorBack`). A driver announces that samples flow with
/// `CaptureContext.flowing(_:polling:)` before it delivers the first batch, never before.
///
/// A driver runs on the reader thread only. Its `run()` loop must not allocate, lock or log per sample; it waits in
/// `poll()` with the stop signal's eventfd among the descriptors, and hands each batch to
/// `LinuxIIOMotionProvider.deliver(_:)`.
protocol CaptureDriver {
    /// Configures the device (an `IIOCaptureSession`) and opens what `run()` reads. Throws with the file and why;
    /// whatever was set before the error is put back by `finish()`.
    mutating func start() throws(IIOError)

    /// Reads until the stop signal fires (`.stopped`), the device goes away (`.lost`), the buffer stops delivering
    /// (`.stalled`), or the capture cannot go on this way (`.noData`). Throws for what polling again cannot fix (a
    /// busy or unparseable attribute).
    mutating func run() throws(IIOError) -> CaptureOutcome

    /// Closes what `start()` opened and puts the device back as it was found; returns what could not be put back.
    mutating func finish() -> [IIOError]
}

/// How a driver's `run()` ended.
enum CaptureOutcome {
    /// The stop signal fired.
    case stopped
    /// The device went away; why, for `.sensorLost`.
    case lost(String)
    /// The buffer delivered nothing within `deliveryDeadline`: the supervisor falls back to polling.
    case noData
    /// The buffer delivered, then nothing for longer than `deliveryDeadline` and several watermark periods (a lost
    /// edge-triggered interrupt, a removed trigger); why, for `.sensorLost`. The supervisor starts the capture again
    /// (disabling and enabling the buffer re-arms the trigger), or polls after repeated stalls.
    case stalled(String)
    /// The kernel driver refused the buffered setup (an `.io` error from `start()`, a trigger it does not accept, a
    /// buffer it cannot start); why, with the file and the fix. The supervisor falls back to polling.
    case refused(String)
}

/// What the supervisor gives a driver for one capture attempt.
struct CaptureContext {
    /// The device found.
    let device: IIODevice
    /// The provider's options (rate, latency, trigger, deadline).
    let options: LinuxIIOMotionProvider.Options
    /// Fired by `stop()`; its `fd` is polled beside the device's.
    let stop: WakeSignal
    /// udev hotplug events (nil without a monitor): the buffered driver watches it for the device's removal.
    let monitor: UdevMonitor?
    /// What the supervisor remembers between attempts (whether the device was lost: the first samples then publish
    /// `.sensorBack`, not `.running`).
    let supervision: LinuxIIOMotionProvider.Supervision
    /// Where batches, counts, timing and state go.
    let provider: LinuxIIOMotionProvider

    /// Samples flow: publishes `timing` and `.polling(reason)`, or `.running`/`.sensorBack` without a reason (once per
    /// change of state, see `LinuxIIOMotionProvider.publishFlowing`).
    func flowing(_ timing: SampleTiming, polling reason: String? = nil) {
        provider.publishFlowing(timing, polling: reason, supervision: supervision)
    }
}
