import SystemPackage

/// Whole small text files (configurations, manifests, plots), read and written without Foundation.
public enum TextFile {
    /// The file's text (invalid UTF-8 repaired), or the system's error.
    public static func read(_ path: String) throws(Errno) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// The most `readBytes` reads by default: these are small files, and a path that names a device or a stream
    /// (`--config /dev/zero`) must not take all memory.
    public static let defaultLimit = 16 << 20

    /// The file's bytes, or the system's error: `Errno.fileTooLarge` when it holds more than `limit` bytes.
    public static func readBytes(_ path: String, limit: Int = defaultLimit) throws(Errno) -> [UInt8] {
        let fd: FileDescriptor
        do { fd = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec]) } catch {
            throw error as! Errno
        }
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n: Int
            do { n = try buffer.withUnsafeMutableBytes { try fd.read(into: $0) } } catch { throw error as! Errno }
            if n == 0 { break }
            guard bytes.count + n <= limit else { throw Errno.fileTooLarge }
            bytes += buffer[..<n]
        }
        return bytes
    }

    /// Replaces the file's content with `text`.
    public static func write(_ text: String, to path: String) throws(Errno) {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch { throw error as! Errno }
        defer { try? fd.close() }
        do { _ = try Array(text.utf8).withUnsafeBytes { try fd.writeAll($0) } } catch { throw error as! Errno }
    }
}
