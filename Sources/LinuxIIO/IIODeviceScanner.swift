import CUdev

#if canImport(Glibc)
    import Glibc
#endif

/// Finds IIO devices with libudev (subsystem `iio`) and reads what repd needs from sysfs. Works with udevd (udev
/// properties such as `ACCEL_MOUNT_MATRIX`) and without it (devices not initialized: sysfs only).
public enum IIODeviceScanner {
    /// Every IIO device (`iio:deviceN`; not triggers, `iio_evgen` or `iio_sysfs_trigger`), accelerometers or not,
    /// sorted by sysname. A device without a buffer or events has no device node (da280, mma7660): it is listed too,
    /// and read by polling `in_accel_*_raw`.
    public static func scan() throws(IIOError) -> [IIODevice] {
        guard let udev = udev_new() else { throw IIOError(.io, path: "", "libudev: udev_new failed") }
        defer { udev_unref(udev) }
        guard let enumerate = udev_enumerate_new(udev) else {
            throw IIOError(.io, path: "", "libudev: udev_enumerate_new failed")
        }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, "iio")
        udev_enumerate_scan_devices(enumerate)

        var devices: [OpaquePointer] = []
        var triggers: [(sysname: String, name: String)] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let syspath = udev_list_entry_get_name(current), let device = udev_device_new_from_syspath(udev, syspath)
            {
                let sysname = udev_device_get_sysname(device).map { String(cString: $0) } ?? ""
                if sysname.hasPrefix("iio:device") {
                    devices.append(device)
                } else {
                    if sysname.hasPrefix("trigger"), let name = Sysfs.readIfPresent(String(cString: syspath) + "/name")
                    {
                        triggers.append((sysname, name.trimmingWhitespace()))
                    }
                    udev_device_unref(device)
                }
            }
            entry = udev_list_entry_get_next(current)
        }
        defer { devices.forEach { udev_device_unref($0) } }
        var result: [IIODevice] = []
        for device in devices {
            result.append(describe(device, triggers: triggers.map(\.name)))
        }
        return result.sorted { $0.sysname.localizedStandardLess($1.sysname) }
    }

    /// The accelerometers among the IIO devices.
    public static func accelerometers() throws(IIOError) -> [IIODevice] {
        try scan().filter(\.isAccelerometer)
    }

    /// The accelerometer `query` names (name, label, sysname, syspath or devnode), or the first one when `query`
    /// is empty. The error lists what was found.
    public static func choose(_ query: String) throws(IIOError) -> IIODevice {
        let all = try scan()
        let accelerometers = all.filter(\.isAccelerometer)
        if query.isEmpty {
            guard let first = accelerometers.first else {
                throw IIOError(.notFound, path: "/sys/bus/iio/devices", "no IIO accelerometer found; " + listing(all))
            }
            return first
        }
        if let match = accelerometers.first(where: { $0.matches(query) }) { return match }
        if let other = all.first(where: { $0.matches(query) }) {
            throw IIOError(
                .unsupported, path: other.syspath, "'\(query)' is not an accelerometer (no in_accel_x/y/z channels)")
        }
        throw IIOError(
            .notFound, path: "/sys/bus/iio/devices", "no IIO accelerometer matches '\(query)'; " + listing(all))
    }

    static func listing(_ devices: [IIODevice]) -> String {
        if devices.isEmpty { return "no IIO devices at all (is the driver loaded? is /sys mounted?)" }
        return "found: "
            + devices.map {
                "\($0.sysname) '\($0.name)' (\($0.isAccelerometer ? "accelerometer" : "not an accelerometer"))"
            }
            .joined(separator: ", ")
    }

    private static func describe(_ device: OpaquePointer, triggers: [String]) -> IIODevice {
        let syspath = udev_device_get_syspath(device).map { String(cString: $0) } ?? ""
        let sysname = udev_device_get_sysname(device).map { String(cString: $0) } ?? ""
        let devnode = udev_device_get_devnode(device).map { String(cString: $0) }
        /// nil when the attribute does not exist; why, when it exists and cannot be read (permission…).
        func reading(_ name: String) -> Result<String, IIOError>? {
            let path = syspath + "/" + name
            guard Sysfs.exists(path) else { return nil }
            do { return .success(try Sysfs.read(path).trimmingWhitespace()) } catch { return .failure(error) }
        }
        /// The attribute's text; nil when it does not exist or cannot be read.
        func attribute(_ name: String) -> String? { try? reading(name)?.get() }
        let name = attribute("name") ?? sysname
        let bufferDirectory =
            Sysfs.exists(syspath + "/buffer0/enable")
            ? "buffer0" : (Sysfs.exists(syspath + "/buffer/enable") ? "buffer" : nil)
        let scanDirectory =
            hasTypeFiles(syspath + "/buffer0")
            ? "buffer0" : (hasTypeFiles(syspath + "/scan_elements") ? "scan_elements" : nil)
        var channels: [ScanChannel] = []
        var channelErrors: [IIOError] = []
        var ignoredChannels: [IIOError] = []
        if let scanDirectory {
            for file in listDirectory(syspath + "/" + scanDirectory)
            where file.hasPrefix("in_") && file.hasSuffix("_type") {
                let channel = String(file.dropFirst(3).dropLast(5))
                let typePath = syspath + "/" + scanDirectory + "/" + file
                let indexPath = syspath + "/" + scanDirectory + "/in_\(channel)_index"
                do throws(IIOError) {
                    guard let typeText = try reading(scanDirectory + "/" + file)?.get() else {
                        throw IIOError(.unsupported, path: typePath, "cannot be read")
                    }
                    let type: ScanType
                    do { type = try ScanType.parse(typeText) } catch {
                        throw IIOError(.unsupported, path: typePath, SysfsValue.printable(error.message, limit: 200))
                    }
                    guard let indexText = attribute(scanDirectory + "/in_\(channel)_index") else {
                        throw IIOError(.unsupported, path: indexPath, "missing or unreadable")
                    }
                    channels.append(
                        ScanChannel(
                            name: channel, index: try SysfsValue.integer(indexText, path: indexPath), type: type))
                } catch {
                    if ["accel_x", "accel_y", "accel_z", "timestamp"].contains(channel) {
                        channelErrors.append(error)
                    } else {
                        ignoredChannels.append(error)
                    }
                }
            }
        }
        channels.sort { $0.index < $1.index }
        if let scanDirectory {
            channelErrors += layoutProblems(channels, directory: syspath + "/" + scanDirectory)
        }
        let axes = ["x", "y", "z"]
        let (scale, scaleErrors) = readScale(syspath: syspath, reading: reading)
        let (offset, offsetErrors) = readOffset(syspath: syspath, reading: reading)
        // The udev property wins over the driver's attribute; one that does not parse is reported and the next
        // source is used.
        var matrix: [[Double]]?
        var matrixSource: String?
        var matrixProblems: [IIOError] = []
        var sources: [(name: String, path: String, text: String?)] = [
            (
                "udev ACCEL_MOUNT_MATRIX", "udev ACCEL_MOUNT_MATRIX",
                udev_device_get_property_value(device, "ACCEL_MOUNT_MATRIX").map { String(cString: $0) }
            )
        ]
        sources += ["in_accel_mount_matrix", "mount_matrix", "in_mount_matrix"].map {
            ($0, syspath + "/" + $0, attribute($0))
        }
        for source in sources {
            guard let text = source.text else { continue }
            do {
                matrix = try SysfsValue.mountMatrix(text, path: source.path)
                matrixSource = source.name
                break
            } catch {
                matrixProblems.append(error)
            }
        }
        let frequencyAttribute = ["sampling_frequency", "in_accel_sampling_frequency"].first {
            Sysfs.exists(syspath + "/" + $0)
        }
        // The list may be shared by type or not (bmc150: in_accel_sampling_frequency with sampling_frequency_available).
        var frequencyProblems: [IIOError] = []
        var available: [Double] = []
        var samplingFrequency: Double?
        if let frequencyAttribute {
            let list = [frequencyAttribute + "_available", "sampling_frequency_available"].first {
                Sysfs.exists(syspath + "/" + $0)
            }
            if let list, let text = reading(list) {
                do { available = try SysfsValue.availableValues(text.get(), path: syspath + "/" + list) } catch {
                    frequencyProblems.append(error)
                }
            }
            if let text = attribute(frequencyAttribute) {
                do { samplingFrequency = try SysfsValue.number(text, path: syspath + "/" + frequencyAttribute) } catch {
                    frequencyProblems.append(error)
                }
            }
        }
        let number = sysname.split(separator: "e").last.flatMap { Int($0) } ?? 0
        let own = triggers.filter { $0 == "\(name)-dev\(number)" || $0 == "\(name)-trigger" }
        return IIODevice(
            syspath: syspath, sysname: sysname, devnode: devnode,
            devnodeMissing: devnode.map { !Sysfs.exists($0) } ?? false, name: name, label: attribute("label"),
            udevInitialized: udev_device_get_is_initialized(device) != 0, bufferDirectory: bufferDirectory,
            scanElementsDirectory: scanDirectory, scanChannels: channels, channelErrors: channelErrors,
            ignoredChannels: ignoredChannels,
            hasRawAccel: axes.allSatisfy { Sysfs.exists(syspath + "/in_accel_\($0)_raw") }, scale: scale,
            scaleErrors: channels.contains { $0.name.hasPrefix("accel_") } || Sysfs.exists(syspath + "/in_accel_x_raw")
                ? scaleErrors + offsetErrors : [],
            offset: offset,
            mountMatrix: matrix, mountMatrixSource: matrixSource, mountMatrixProblems: matrixProblems,
            frequencyProblems: frequencyProblems, frequencyAttribute: frequencyAttribute,
            samplingFrequency: samplingFrequency,
            availableFrequencies: available, currentTrigger: attribute("trigger/current_trigger"), ownTriggers: own)
    }

    /// The per-axis scale (`in_accel_<axis>_scale`, else the shared `in_accel_scale`), and why an axis has none: a
    /// missing, unreadable or unparseable scale, or one that is not a number above 0, would turn every sample into
    /// 0 g (or mirror or blow it up).
    private static func readScale(
        syspath: String, reading: (String) -> Result<String, IIOError>?
    ) -> ([Double], [IIOError]) {
        var missing: [String] = []
        let (scale, found) = readPerAxis("scale", syspath: syspath, reading: reading) {
            (axis: String, value: Double?, text: String, path: String) throws(IIOError) -> Double in
            guard let value else {
                missing.append("in_accel_\(axis)_scale")
                return 0
            }
            // Above 100 m/s² (10 g) a count, a 2-count swing would already be 20 g: not an accelerometer's scale.
            guard value > 0, value <= 100 else {
                throw IIOError(
                    .invalidValue, path: path,
                    "'\(SysfsValue.printable(text, limit: 40))' is not a usable scale: it must be a number above 0 and at most 100 (m/s² per count)"
                )
            }
            return value
        }
        var errors = found
        if !missing.isEmpty {
            errors.insert(
                IIOError(
                    .unsupported, path: syspath,
                    "no \(missing.joined(separator: ", ")) or in_accel_scale: counts cannot be converted to g"), at: 0)
        }
        return (scale, errors)
    }

    /// The per-axis offset in counts (`in_accel_<axis>_offset`, else the shared `in_accel_offset`, else 0), and why
    /// one that exists cannot be used (unreadable, not a number): taking it as 0 would shift every sample silently.
    private static func readOffset(
        syspath: String, reading: (String) -> Result<String, IIOError>?
    ) -> ([Double], [IIOError]) {
        readPerAxis("offset", syspath: syspath, reading: reading) {
            (_: String, value: Double?, text: String, path: String) throws(IIOError) -> Double in
            guard let value else { return 0 }
            guard value.isFinite else {
                throw IIOError(
                    .invalidValue, path: path, "'\(SysfsValue.printable(text, limit: 40))' is not a finite number")
            }
            return value
        }
    }

    /// Reads `in_accel_<axis>_<attribute>` (else the shared `in_accel_<attribute>`) for x, y and z: `use` gets the
    /// axis, the number (nil when neither file exists), its text and path, and returns the value or throws why it
    /// cannot be used. An axis whose file cannot be read, does not parse or is refused is 0, with its error (each
    /// error once: a shared file serves all three).
    private static func readPerAxis(
        _ attribute: String, syspath: String, reading: (String) -> Result<String, IIOError>?,
        use: (String, Double?, String, String) throws(IIOError) -> Double
    ) -> ([Double], [IIOError]) {
        var values: [Double] = []
        var errors: [IIOError] = []
        for axis in ["x", "y", "z"] {
            let own = "in_accel_\(axis)_\(attribute)"
            let file = Sysfs.exists(syspath + "/" + own) ? own : "in_accel_\(attribute)"
            let path = syspath + "/" + file
            do throws(IIOError) {
                guard let text = try reading(file)?.get() else {
                    values.append(try use(axis, nil, "", path))
                    continue
                }
                values.append(try use(axis, try SysfsValue.number(text, path: path), text, path))
            } catch {
                if !errors.contains(error) { errors.append(error) }
                values.append(0)
            }
        }
        return (values, errors)
    }

    /// What makes the record layout of the channels repd reads unknowable: an accel axis whose `_type` file is
    /// missing while its `_en` or `_index` exists (it would otherwise fall back to polling with no word why), and two
    /// of them (or the timestamp) at one index, or at a negative one.
    private static func layoutProblems(_ channels: [ScanChannel], directory: String) -> [IIOError] {
        var problems: [IIOError] = []
        for axis in ["accel_x", "accel_y", "accel_z"] where !Sysfs.exists(directory + "/in_\(axis)_type") {
            if Sysfs.exists(directory + "/in_\(axis)_en") || Sysfs.exists(directory + "/in_\(axis)_index") {
                problems.append(
                    IIOError(
                        .unsupported, path: directory + "/in_\(axis)_type",
                        "missing, though in_\(axis)_en or in_\(axis)_index exists: the record layout cannot be known"))
            }
        }
        var seen: [Int: String] = [:]
        for channel in channels where ["accel_x", "accel_y", "accel_z", "timestamp"].contains(channel.name) {
            let path = directory + "/in_\(channel.name)_index"
            if channel.index < 0 {
                problems.append(IIOError(.invalidValue, path: path, "\(channel.index) is not an index (0 or more)"))
            } else if let other = seen[channel.index] {
                problems.append(
                    IIOError(
                        .invalidValue, path: path,
                        "\(channel.index) is also in_\(other)_index: two channels at one place, the record layout is ambiguous"
                    ))
            } else {
                seen[channel.index] = channel.name
            }
        }
        return problems
    }

    private static func hasTypeFiles(_ directory: String) -> Bool {
        listDirectory(directory).contains { $0.hasPrefix("in_") && $0.hasSuffix("_type") }
    }

    /// The names in the folder at `path` (without `.` and `..`), sorted; none when it cannot be read.
    public static func listDirectory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

extension String {
    /// Orders `iio:device2` before `iio:device10`.
    func localizedStandardLess(_ other: String) -> Bool {
        let a = self.split(whereSeparator: { $0.isNumber }).joined()
        let b = other.split(whereSeparator: { $0.isNumber }).joined()
        if a != b { return self < other }
        let na = Int(self.filter(\.isNumber)) ?? 0
        let nb = Int(other.filter(\.isNumber)) ?? 0
        return na < nb
    }
}
