/// An IIO device as found in sysfs and udev: what it is, its channels, and how to capture from it.
public struct IIODevice: Sendable, Equatable {
    /// `/sys/devices/...`
    public var syspath: String
    /// `iio:deviceN`
    public var sysname: String
    /// `/dev/iio:deviceN`, nil when the device has no node.
    public var devnode: String?
    /// Whether udev names a device node that is not there (a container that sees sysfs but not the device): the
    /// device is then polled.
    public var devnodeMissing = false
    /// The `name` attribute.
    public var name: String
    /// The `label` attribute, if any.
    public var label: String?
    /// Whether udevd has processed it (false without udevd: then there are no udev properties).
    public var udevInitialized: Bool
    /// The folder with `enable`, `length`, `watermark`: `buffer0` (5.11+) or `buffer`; nil without a buffer.
    public var bufferDirectory: String?
    /// The folder with the `in_*_en/_index/_type` files: `buffer0` or `scan_elements`.
    public var scanElementsDirectory: String?
    /// Every buffered channel the device offers.
    public var scanChannels: [ScanChannel]
    /// Why accel x/y/z or timestamp scan elements could not be read (their `_type` or `_index`): buffered capture
    /// refuses to start with the first.
    public var channelErrors: [IIOError] = []
    /// Other scan elements left out, and why (repd does not read them).
    public var ignoredChannels: [IIOError] = []
    /// Whether `in_accel_{x,y,z}_raw` exist (polling is possible).
    public var hasRawAccel: Bool
    /// m/s² per count for x, y, z (per-channel or the shared `in_accel_scale`); 0 for an axis in `scaleErrors`.
    public var scale: [Double]
    /// Why counts cannot be converted to g: a scale that is missing or does not parse. Capture refuses to start.
    public var scaleErrors: [IIOError] = []
    /// Counts added before scaling, per axis (default 0).
    public var offset: [Double]
    /// The mount matrix, and where it came from (`udev ACCEL_MOUNT_MATRIX` or the sysfs attribute), if any.
    public var mountMatrix: [[Double]]?
    /// Where the mount matrix came from.
    public var mountMatrixSource: String?
    /// Mount matrices that did not parse (udev property or sysfs file, and why); the next source was used instead.
    public var mountMatrixProblems: [IIOError] = []
    /// A sampling frequency, or list of them, that does not parse (the file and why): the rate asked for is written
    /// as it is, and the listing says the rate is unknown.
    public var frequencyProblems: [IIOError] = []
    /// The sampling frequency attribute's file name (`sampling_frequency` or `in_accel_sampling_frequency`).
    public var frequencyAttribute: String?
    /// The current sampling frequency, Hz.
    public var samplingFrequency: Double?
    /// The available sampling frequencies, Hz.
    public var availableFrequencies: [Double]
    /// The current trigger's name ("" for none); nil when the device has no trigger folder.
    public var currentTrigger: String?
    /// Names of triggers that belong to this device (`<name>-dev<N>`, `<name>-trigger`).
    public var ownTriggers: [String]

    /// Whether this is an accelerometer repd can use: accel x, y, z buffered or raw.
    public var isAccelerometer: Bool {
        hasBufferedAccel || hasRawAccel
    }

    /// Whether x, y and z can be captured through the buffer.
    public var hasBufferedAccel: Bool {
        devnode != nil && !devnodeMissing
            && ["accel_x", "accel_y", "accel_z"].allSatisfy { name in scanChannels.contains { $0.name == name } }
    }

    /// How repd would read it.
    public var captureMode: String {
        hasBufferedAccel && bufferDirectory != nil ? "buffered" : (hasRawAccel ? "polling" : "none")
    }

    /// The full path of an attribute.
    public func path(_ attribute: String) -> String { syspath + "/" + attribute }

    /// The path of a scan element file, e.g. `scanElementPath("accel_x", "en")`.
    public func scanElementPath(_ channel: String, _ suffix: String) -> String? {
        scanElementsDirectory.map { syspath + "/" + $0 + "/in_" + channel + "_" + suffix }
    }

    /// Whether `query` names this device: its name, label, sysname, syspath or devnode.
    public func matches(_ query: String) -> Bool {
        query == name || query == label || query == sysname || query == syspath || query == devnode
            || "/sys/bus/iio/devices/" + sysname == query
    }
}
