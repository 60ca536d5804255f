import CUdev

/// Hotplug events of the `iio` subsystem from libudev's monitor (udevd's "udev" netlink group; umockdev emulates
/// it). Without udevd no events arrive, so callers also rescan on a timer.
final class UdevMonitor {
    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    /// The descriptor to poll for events.
    let fd: Int32

    init?() {
        guard let udev = udev_new() else { return nil }
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else {
            udev_unref(udev)
            return nil
        }
        udev_monitor_filter_add_match_subsystem_devtype(monitor, "iio", nil)
        guard udev_monitor_enable_receiving(monitor) >= 0 else {
            udev_monitor_unref(monitor)
            udev_unref(udev)
            return nil
        }
        self.udev = udev
        self.monitor = monitor
        fd = udev_monitor_get_fd(monitor)
    }

    deinit {
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// Every pending event as (action, syspath).
    func drain() -> [(action: String, syspath: String)] {
        var events: [(String, String)] = []
        while let device = udev_monitor_receive_device(monitor) {
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? ""
            let syspath = udev_device_get_syspath(device).map { String(cString: $0) } ?? ""
            events.append((action, syspath))
            udev_device_unref(device)
        }
        return events
    }
}
