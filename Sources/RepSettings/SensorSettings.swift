/// How an IIO accelerometer is read: the `[sensor]` keys (its `provider` is `DaemonConfiguration.provider`), and
/// `LinuxIIOMotionProvider.Options` itself. The last three are not configuration keys: repctl and the tests set them.
public struct SensorSettings: Sendable, Equatable {
    /// `sensor.device`: the device's name, label, sysname (`iio:deviceN`), syspath or /dev node; empty takes the
    /// first accelerometer.
    public var device = ""
    /// `sensor.rate_hz`: the sample rate asked of the device, Hz (default 100).
    public var rate = 100.0
    /// `sensor.trigger`: the trigger's name; nil (`""` in the file) chooses: the device's own, else the current one,
    /// else none.
    public var trigger: String?
    /// `sensor.force_polling`: poll `in_accel_*_raw` even if the device has a buffer (default false).
    public var forcePolling = false
    /// `sensor.hrtimer_trigger`: create an hrtimer trigger through configfs when the device has none, and remove it
    /// at stop (default false).
    public var hrtimerTrigger = false
    /// How long samples may wait in the kernel before the reader wakes, seconds (sets the buffer watermark).
    public var latency = 0.02
    /// A buffer that delivers nothing for this long falls back to polling, seconds.
    public var deliveryDeadline = 2.0
    /// How often a missing or lost device is looked for again, seconds.
    public var rescanInterval = 0.5

    /// The defaults.
    public init() {}
}
