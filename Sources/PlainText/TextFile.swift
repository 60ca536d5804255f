import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a file could not be read as text: the system's error, a file that is not a regular file, or one too large.
public enum TextFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system refused (`open`, `fstat` or `read`): its error.
    case system(Errno)
    /// Not a regular file: a FIFO, a device, a folder, a socket (what it is: `TextFile.kind(of:)`).
    case notRegularFile(kind: String)
    /// More than `limit` bytes.
    case tooLarge(limit: Int)

    /// What is wrong, without the path ("No such file or directory", "a FIFO, not a regular file").
    public var description: String {
        switch self {
        case .system(let code): "\(code)"
        case .notRegularFile(let kind): "\(kind), not a regular file"
        case .tooLarge(let limit): "larger than \(limit) bytes"
        }
    }
}

/// Whole small text files (configurations, manifests, plots), read and written without Foundation.
public enum TextFile {
    /// `bytes` as UTF-8 text, or the line (from 1) of the first byte that does not decode, for an error that says
    /// where: the configuration's and the manifests' readers refuse such a file.
    public static func utf8Text(_ bytes: [UInt8]) -> Result<String, InvalidUTF8> {
        if let text = String(validating: bytes, as: UTF8.self) { return .success(text) }
        // Only now find where: the line of the first byte that does not decode.
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var line = 1
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            if scalar == "\n" { line += 1 }
        }
        return .failure(InvalidUTF8(line: line))
    }

    /// Where text that is not UTF-8 first goes wrong.
    public struct InvalidUTF8: Error, Sendable, Equatable {
        /// The line (from 1) of the first byte that does not decode.
        public var line: Int
    }

    /// The file's text (invalid UTF-8 repaired), or why it cannot be read.
    public static func read(_ path: String) throws(TextFileError) -> String {
        String(decoding: try readBytes(path), as: UTF8.self)
    }

    /// The most `readBytes` reads by default: these are small files, and a path that names a device or a stream
    /// (`--config /dev/zero`) must not take all memory.
    public static let defaultLimit = 16 << 20

    /// The file's bytes, or why it cannot be read: `.tooLarge` when it holds more than `limit` bytes, and
    /// `.notRegularFile` for anything but a regular file (`openRegularFile(_:)`).
    public static func readBytes(_ path: String, limit: Int = defaultLimit) throws(TextFileError) -> [UInt8] {
        let fd = try openRegularFile(path)
        defer { try? fd.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n: Int
            do { n = try buffer.withUnsafeMutableBytes { try fd.read(into: $0) } } catch {
                throw .system(systemError(error))
            }
            if n == 0 { break }
            guard bytes.count + n <= limit else { throw .tooLarge(limit: limit) }
            bytes += buffer[..<n]
        }
        return bytes
    }

    /// Opens the file at `path` for reading, only if it is a regular file: a FIFO (whose `open` would wait for a
    /// writer and whose reads for its data: forever, with none), a device (`/dev/zero` never ends), a folder or a
    /// socket is refused with what it is. The open does not wait (`O_NONBLOCK`, cleared again for the reads), and a
    /// terminal does not become the process's controlling one (`O_NOCTTY`).
    public static func openRegularFile(_ path: String) throws(TextFileError) -> FileDescriptor {
        // Looked at before it is opened too: opening a device can do something (a watchdog device arms itself, a
        // serial line raises DTR). The fstat below covers a file swapped in between.
        var before = stat()
        if stat(path, &before) == 0, before.st_mode & S_IFMT != S_IFREG {
            throw .notRegularFile(kind: kind(of: before.st_mode))
        }
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(
                FilePath(path), .readOnly,
                options: [.closeOnExec, .nonBlocking, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)])
        } catch { throw .system(systemError(error)) }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else {
            let error = Errno(rawValue: errno)
            try? fd.close()
            throw .system(error)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            try? fd.close()
            throw .notRegularFile(kind: kind(of: info.st_mode))
        }
        let flags = fcntl(fd.rawValue, F_GETFL)
        if flags >= 0 { _ = fcntl(fd.rawValue, F_SETFL, flags & ~O_NONBLOCK) }
        return fd
    }

    /// What a file of mode `mode` is, in words ("a regular file", "a directory", "a FIFO", …).
    public static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "a file of an unknown kind"
        }
    }

    /// Replaces the file's content with `text`.
    public static func write(_ text: String, to path: String) throws(Errno) {
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch { throw systemError(error) }
        defer { try? fd.close() }
        do { _ = try Array(text.utf8).withUnsafeBytes { try fd.writeAll($0) } } catch { throw systemError(error) }
    }

    /// Replaces the file at `path` with `text` so that a crash or a power cut leaves the old text or the new, never a
    /// part of it: writes `PATH.new`, `fsync`s it, renames it over `path` and `fsync`s the folder (a file system that
    /// cannot sync a folder is left so). Throws the file that failed (`PATH.new` or `PATH`) and the system's error;
    /// `PATH.new` is removed then.
    public static func replaceDurably(_ text: String, at path: String) throws(PathError) {
        let temporary = path + ".new"
        do {
            let fd = try FileDescriptor.open(
                FilePath(temporary), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
            try fd.closeAfter {
                _ = try Array(text.utf8).withUnsafeBytes { try fd.writeAll($0) }
                guard fsync(fd.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
        } catch {
            unlink(temporary)
            throw PathError(path: temporary, error: systemError(error))
        }
        guard rename(temporary, path) == 0 else {
            let error = Errno(rawValue: errno)
            unlink(temporary)
            throw PathError(path: path, error: error)
        }
        if let folder = try? FileDescriptor.open(
            FilePath(PathText.folder(of: path)), .readOnly, options: [.directory, .closeOnExec])
        {
            _ = fsync(folder.rawValue)
            try? folder.close()
        }
    }

    /// A file and what the system said about it.
    public struct PathError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The file.
        public var path: String
        /// What the system said (`errno`).
        public var error: Errno

        /// "PATH: the system's words".
        public var description: String { "\(path): \(error)" }
    }

    /// SystemPackage's calls throw `Errno` only, untyped.
    private static func systemError(_ error: any Error) -> Errno { error as? Errno ?? .ioError }
}
