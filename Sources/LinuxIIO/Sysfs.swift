#if canImport(Glibc)
    import Glibc
#endif

/// Reads and writes sysfs attribute files, with errors that name the file and say how to fix permissions.
public enum Sysfs {
    /// What a user can do about EACCES on IIO files.
    static let permissionHint =
        "permission denied; run repd as a member of group 'repd' with systemd/60-repd.rules installed (udev gives the group the device node and its buffer, scan element, trigger, sampling frequency and timestamp clock attributes), or as root"

    /// Whether `path` exists.
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The attribute's text (with its trailing newline).
    public static func read(_ path: String) throws(IIOError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error(path, verb: "cannot read") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n: Int
            switch retryingInterrupts({ Glibc.read(fd, &buffer, buffer.count) }) {
            case .success(let count): n = count
            case .wouldBlock: throw error(path, verb: "cannot read", code: EAGAIN)
            case .failure(let failure): throw error(path, verb: "cannot read", code: failure.rawValue)
            }
            if n == 0 { break }
            bytes.append(contentsOf: buffer[..<n])
            if bytes.count > 1 << 20 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The attribute's text, or nil if it does not exist or cannot be read.
    public static func readIfPresent(_ path: String) -> String? {
        guard exists(path) else { return nil }
        return try? read(path)
    }

    /// Writes `value` (a newline is added) to the attribute.
    public static func write(_ value: String, to path: String) throws(IIOError) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)  // O_TRUNC as `echo >` does; sysfs ignores it
        guard fd >= 0 else { throw error(path, verb: "cannot write '\(value)' to") }
        defer { close(fd) }
        let bytes = Array((value + "\n").utf8)
        let written = retryingInterrupts { bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } }
        switch written {
        case .success(let n) where n == bytes.count: return
        case .success, .wouldBlock: throw error(path, verb: "cannot write '\(value)' to", code: EIO)
        case .failure(let failure): throw error(path, verb: "cannot write '\(value)' to", code: failure.rawValue)
        }
    }

    static func error(_ path: String, verb: String, code: Int32 = errno) -> IIOError {
        switch code {
        case EACCES, EPERM: return IIOError(.permissionDenied, path: path, "\(verb) it: \(permissionHint)")
        case ENOENT: return IIOError(.notFound, path: path, "\(verb) it: it does not exist")
        case ENODEV, ENXIO: return IIOError(.deviceLost, path: path, "\(verb) it: the device is gone")
        default: return IIOError(.io, path: path, "\(verb) it: \(String(cString: strerror(code)))")
        }
    }
}
