#if canImport(Glibc)
import Glibc
#endif

/// Configures a device for buffered capture exactly as repd needs it and puts back exactly the state it found.
///
/// `configure` saves `buffer/enable`, the trigger, every scan element's `_en`, the sampling frequency, the buffer
/// length and watermark; `restore` writes them back (buffer disabled first, enable last).
public final class IIOCaptureSession: @unchecked Sendable {
    // @unchecked Sendable: configured and restored by one owner (the provider's start/stop or the reader thread
    // when the device is lost), never concurrently.

    /// The device.
    public let device: IIODevice
    /// The layout of the records the buffer delivers after `configure`.
    public private(set) var layout: RecordLayout?
    /// The sampling frequency set, Hz.
    public private(set) var frequency: Double?
    /// The trigger chosen ("" for none).
    public private(set) var trigger: String?

    private var saved: [(path: String, value: String)] = []
    private var createdTrigger: String?
    private var savedEnable: String?
    private var configured = false

    /// A session for `device`.
    public init(device: IIODevice) { self.device = device }

    /// Sets the rate, channels, trigger, length and watermark, and enables the buffer.
    /// - Parameters:
    ///   - rate: requested Hz (the nearest available at or above it is used).
    ///   - trigger: a trigger name, or nil to choose (the device's own, else the current one, else none).
    ///   - latency: how long samples may wait in the kernel before poll() wakes the reader (sets the watermark).
    ///   - enable: false leaves the buffer disabled (a caller that enables it itself).
    /// - Parameter hrtimer: when the device has no trigger of its own and none is set or requested, create an
    ///   hrtimer trigger through configfs (`/sys/kernel/config/iio/triggers/hrtimer/repd-<name>`) at the rate, and
    ///   remove it again in `restore()`.
    public func configure(
        rate: Double, trigger requested: String?, latency: Double = 0.02, enable: Bool = true, hrtimer: Bool = false
    ) throws(IIOError) {
        guard let bufferDirectory = device.bufferDirectory, device.hasBufferedAccel else {
            throw IIOError(.unsupported, path: device.syspath, "the device has no buffer with accel_x/y/z scan elements")
        }
        let enablePath = device.path(bufferDirectory + "/enable")
        savedEnable = try Sysfs.read(enablePath).trimmingWhitespace()
        if savedEnable != "0" { try Sysfs.write("0", to: enablePath) }
        configured = true

        // Sampling frequency.
        if let attribute = device.frequencyAttribute {
            let path = device.path(attribute)
            let target = SysfsValue.nearestAtOrAbove(rate, in: device.availableFrequencies) ?? rate
            try save(path)
            try Sysfs.write(Self.text(target), to: path)
            frequency = (try? SysfsValue.number(Sysfs.read(path), path: path)) ?? target
        }

        // Channels: accel x, y, z and the timestamp on, everything else off.
        var enabled: [ScanChannel] = []
        for channel in device.scanChannels {
            guard let path = device.scanElementPath(channel.name, "en") else { continue }
            let on = ["accel_x", "accel_y", "accel_z", "timestamp"].contains(channel.name)
            try save(path)
            try Sysfs.write(on ? "1" : "0", to: path)
            if on { enabled.append(channel) }
        }
        layout = RecordLayout(channels: enabled)

        // Trigger.
        let triggerPath = device.path("trigger/current_trigger")
        if Sysfs.exists(triggerPath) {
            let current = try Sysfs.read(triggerPath).trimmingWhitespace()
            var choice = requested ?? device.ownTriggers.first ?? current
            if choice.isEmpty, hrtimer { choice = try createHrtimerTrigger(rate: frequency ?? rate) }
            try save(triggerPath)
            if choice != current { try Sysfs.write(choice, to: triggerPath) }
            trigger = choice
        }

        // Buffer length (about 2 s of samples) and watermark (the latency budget).
        let rateHz = frequency ?? rate
        let lengthPath = device.path(bufferDirectory + "/length")
        if Sysfs.exists(lengthPath) {
            try save(lengthPath)
            let current = (try? SysfsValue.integer(Sysfs.read(lengthPath), path: lengthPath)) ?? 0
            let wanted = max(128, Int(rateHz * 2))
            if current < wanted { try Sysfs.write(String(wanted), to: lengthPath) }
        }
        let watermarkPath = device.path(bufferDirectory + "/watermark")
        if Sysfs.exists(watermarkPath) {
            try save(watermarkPath)
            try Sysfs.write(String(max(1, Int(rateHz * latency))), to: watermarkPath)
        }
        if enable { try Sysfs.write("1", to: enablePath) }
    }

    /// Puts back the state found before `configure`. Errors are collected, not thrown: as much as possible is
    /// restored (a device that vanished cannot be).
    @discardableResult
    public func restore() -> [IIOError] {
        guard configured, let bufferDirectory = device.bufferDirectory else { return [] }
        configured = false
        var errors: [IIOError] = []
        let enablePath = device.path(bufferDirectory + "/enable")
        do { try Sysfs.write("0", to: enablePath) } catch { errors.append(error) }
        for (path, value) in saved.reversed() {
            do { try Sysfs.write(value, to: path) } catch { errors.append(error) }
        }
        if let savedEnable, savedEnable != "0" {
            do { try Sysfs.write(savedEnable, to: enablePath) } catch { errors.append(error) }
        }
        saved.removeAll()
        if let createdTrigger {
            if rmdir(createdTrigger) != 0 { errors.append(Sysfs.error(createdTrigger, verb: "cannot remove")) }
            self.createdTrigger = nil
        }
        return errors
    }

    /// Makes an hrtimer trigger in configfs, sets its rate, and returns its name.
    private func createHrtimerTrigger(rate: Double) throws(IIOError) -> String {
        let folder = "/sys/kernel/config/iio/triggers/hrtimer"
        let name = "repd-" + String(device.sysname.map { $0 == ":" ? "-" : $0 })
        let path = folder + "/" + name
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw Sysfs.error(path, verb: "cannot create an hrtimer trigger (is configfs mounted and CONFIG_IIO_HRTIMER_TRIGGER on?) at")
        }
        createdTrigger = path
        // The trigger appears as /sys/bus/iio/devices/triggerN with `name` = our name; set its frequency there.
        for entry in IIODeviceScanner.listDirectory("/sys/bus/iio/devices") where entry.hasPrefix("trigger") {
            let base = "/sys/bus/iio/devices/" + entry
            if Sysfs.readIfPresent(base + "/name")?.trimmingWhitespace() == name {
                try Sysfs.write(Self.text(rate), to: base + "/sampling_frequency")
            }
        }
        return name
    }

    private func save(_ path: String) throws(IIOError) {
        guard !saved.contains(where: { $0.path == path }) else { return }
        saved.append((path, try Sysfs.read(path).trimmingWhitespace()))
    }

    static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int64(value)) : "\(value)"
    }
}
