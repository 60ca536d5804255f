#if canImport(Glibc)
    import Glibc
#endif

/// Configures a device for buffered capture exactly as repd needs it and puts back exactly the state it found.
///
/// `configure` saves `buffer/enable`, the trigger, every scan element's `_en` (also those of channels the scanner
/// could not parse, which it switches off), the sampling frequency, `current_timestamp_clock`, the buffer length and
/// watermark; `restore` writes them back (buffer disabled first, enable last). `configurePolling` sets (and `restore`
/// puts back) the sampling frequency alone.
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
    /// `current_timestamp_clock` during capture (`monotonic` once set; nil when the device has no such attribute).
    public private(set) var timestampClock: String?

    private var saved: [(path: String, value: String)] = []
    private var createdTrigger: String?
    private var savedEnable: String?
    private var configured = false

    /// A session for `device`.
    public init(device: IIODevice) { self.device = device }

    /// Sets the rate, channels, trigger, length and watermark, and enables the buffer. A device whose counts cannot
    /// be converted (`scaleErrors`) is refused before anything is written.
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
        if let error = device.scaleErrors.first ?? device.channelErrors.first { throw error }
        guard let bufferDirectory = device.bufferDirectory, device.hasBufferedAccel else {
            throw IIOError(
                .unsupported, path: device.syspath, "the device has no buffer with accel_x/y/z scan elements")
        }
        let enablePath = device.path(bufferDirectory + "/enable")
        savedEnable = try Sysfs.read(enablePath).trimmingWhitespace()
        if savedEnable != "0" { try Sysfs.write("0", to: enablePath) }
        configured = true

        try setFrequency(rate)

        // Timestamps on CLOCK_MONOTONIC (the kernel's default is realtime, which an NTP or RTC step moves
        // backwards, and the detector drops samples whose time does not advance). Writable only while the buffer
        // is off (EBUSY otherwise), so before enabling.
        let clockPath = device.path("current_timestamp_clock")
        if Sysfs.exists(clockPath) {
            try save(clockPath)
            if try Sysfs.read(clockPath).trimmingWhitespace() != "monotonic" {
                try Sysfs.write("monotonic", to: clockPath)
            }
            timestampClock = "monotonic"
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
        // Scan elements the scanner left out (a `_type` that does not parse, an `_index` that cannot be read) are
        // switched off too: one left on would sit in every record at a place the layout does not know, and every
        // sample would be decoded from the wrong bytes. One that cannot be switched off refuses buffered capture.
        if let directory = device.scanElementsDirectory {
            let known = Set(device.scanChannels.map(\.name))
            for file in IIODeviceScanner.listDirectory(device.path(directory))
            where file.hasPrefix("in_") && file.hasSuffix("_en") {
                let channel = String(file.dropFirst(3).dropLast(3))
                guard !known.contains(channel) else { continue }
                let path = device.path(directory + "/" + file)
                do {
                    try save(path)
                    if try Sysfs.read(path).trimmingWhitespace() != "0" { try Sysfs.write("0", to: path) }
                } catch {
                    throw IIOError(
                        error.kind, path: error.path,
                        "\(error.message): channel \(channel), which repd cannot read (its scan type or index is "
                            + "unusable), must be switched off, or every record would hold it where repd does not "
                            + "expect it and all samples would be decoded from the wrong bytes")
                }
            }
        }
        layout = RecordLayout(channels: enabled)

        // Trigger.
        let triggerPath = device.path("trigger/current_trigger")
        if Sysfs.exists(triggerPath) {
            let current = try Sysfs.read(triggerPath).trimmingWhitespace()
            var choice = requested ?? device.ownTriggers.first ?? current
            if choice.isEmpty, hrtimer { choice = try createHrtimerTrigger(rate: frequency ?? rate) }
            try save(triggerPath)
            if choice != current {
                do { try Sysfs.write(choice, to: triggerPath) } catch  where error.kind == .io {
                    throw IIOError(
                        .io, path: triggerPath,
                        "\(error.message): the driver refuses trigger '\(choice)' (its validate_trigger accepts only its own, e.g. bmc150 with a hardware FIFO); set sensor.trigger to one of the device's own triggers (\(device.ownTriggers.isEmpty ? "it has none" : device.ownTriggers.joined(separator: ", ")))"
                    )
                }
            }
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
        if enable {
            do { try Sysfs.write("1", to: enablePath) } catch
                where error.kind == .io && (trigger ?? "").isEmpty && Sysfs.exists(triggerPath)
            {
                throw IIOError(
                    .io, path: enablePath,
                    "\(error.message): the device has no trigger (\(triggerPath) is empty and it has none of its own); set sensor.hrtimer_trigger = true (repctl sensors --hrtimer) to let repd create one, or sensor.trigger"
                )
            }
        }
    }

    /// For polling `in_accel_*_raw`: sets the sampling frequency alone (the nearest available at or above four
    /// times `rate`), since some chips wait for a sample at their own rate on every raw read (lis3dh sleeps
    /// 2000 / sampling_frequency ms: 2 s at its 1 Hz default).
    public func configurePolling(rate: Double) throws(IIOError) {
        if let error = device.scaleErrors.first { throw error }
        configured = true
        try setFrequency(rate * 4)
    }

    private func setFrequency(_ rate: Double) throws(IIOError) {
        guard let attribute = device.frequencyAttribute else { return }
        let path = device.path(attribute)
        let target = SysfsValue.nearestAtOrAbove(rate, in: device.availableFrequencies) ?? rate
        try save(path)
        // A driver that refuses the value (EINVAL: no list of choices to pick from) keeps its own rate.
        do { try Sysfs.write(Self.text(target), to: path) } catch  where error.kind == .io {}
        frequency = (try? SysfsValue.number(Sysfs.read(path), path: path)) ?? target
    }

    /// Puts back the state found before `configure`. Errors are collected, not thrown: as much as possible is
    /// restored (a device that vanished cannot be).
    @discardableResult
    public func restore() -> [IIOError] {
        guard configured else { return [] }
        configured = false
        var errors: [IIOError] = []
        let enablePath = device.bufferDirectory.map { device.path($0 + "/enable") }
        if let enablePath, savedEnable != nil {
            do { try Self.put("0", to: enablePath) } catch { errors.append(error) }
        }
        for (path, value) in saved.reversed() {
            do { try Self.put(value, to: path) } catch { errors.append(error) }
        }
        if let enablePath, let savedEnable, savedEnable != "0" {
            do { try Self.put(savedEnable, to: enablePath) } catch { errors.append(error) }
        }
        savedEnable = nil
        saved.removeAll()
        if let createdTrigger {
            if rmdir(createdTrigger) != 0 { errors.append(Sysfs.error(createdTrigger, verb: "cannot remove")) }
            self.createdTrigger = nil
        }
        return errors
    }

    /// Writes `value` to the attribute unless it already reads so: a setup that failed before changing an attribute
    /// (one repd may not write) leaves nothing to put back, and no error about it.
    private static func put(_ value: String, to path: String) throws(IIOError) {
        if let current = try? Sysfs.read(path), current.trimmingWhitespace() == value.trimmingWhitespace() { return }
        try Sysfs.write(value, to: path)
    }

    /// Makes an hrtimer trigger in configfs, sets its rate, and returns its name.
    private func createHrtimerTrigger(rate: Double) throws(IIOError) -> String {
        let folder = "/sys/kernel/config/iio/triggers/hrtimer"
        let name = "repd-" + String(device.sysname.map { $0 == ":" ? "-" : $0 })
        let path = folder + "/" + name
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw Sysfs.error(
                path,
                verb: "cannot create an hrtimer trigger (is configfs mounted and CONFIG_IIO_HRTIMER_TRIGGER on?) at")
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
