import PlainText

#if canImport(Glibc)
    import Glibc
#endif

/// The broker password, from a file (`uplink.password_file`) so that it never appears on a command line or in the
/// configuration file. The file must not be readable by other users (mode 0600 or 0640): repd refuses it
/// otherwise. One line; a line end after it (`\n` or Windows' `\r\n`) and a UTF-8 byte order mark before it (as
/// Notepad writes) are not part of the password.
enum PasswordFile {
    /// What is wrong with a password file.
    enum Problem: Error, Equatable {
        /// It cannot be found or read: the system's error.
        case unreadable(Int32)
        /// Other users may read it: its mode.
        case readableByOthers(UInt32)
        /// Nothing in it (or only a line end).
        case empty
        /// More than one line.
        case severalLines
        /// Not a regular file (a FIFO, a device, a folder): what it is. A FIFO's read would wait for a writer.
        case notRegularFile(String)

        /// The path and what is wrong with it ("/etc/repd/pw is empty").
        func reason(_ path: String) -> String {
            switch self {
            case .unreadable(let code): "\(path): \(String(cString: strerror(code)))"
            case .readableByOthers(let mode):
                "\(path) has mode \(String(mode, radix: 8)): other users can read it; make it 600 or 640 (chmod o= \(path))"
            case .empty: "\(path) is empty"
            case .severalLines: "\(path) has more than one line (it holds only the password)"
            case .notRegularFile(let kind): "\(path) is \(kind), not a regular file (it holds only the password)"
            }
        }
    }

    /// The password in the file at `path`.
    static func read(_ path: String) throws(UplinkError) -> String {
        switch password(path) {
        case .success(let password): return password
        case .failure(let problem): throw UplinkError(.passwordFile, "uplink.password_file " + problem.reason(path))
        }
    }

    /// What is wrong with the file at `path`; nil when it holds a usable password.
    static func problem(_ path: String) -> Problem? {
        if case .failure(let problem) = password(path) { return problem }
        return nil
    }

    private static func password(_ path: String) -> Result<String, Problem> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(.unreadable(errno)) }
        guard info.st_mode & 0o007 == 0 else { return .failure(.readableByOthers(UInt32(info.st_mode & 0o777))) }
        var bytes: [UInt8]
        do { bytes = try TextFile.readBytes(path, limit: 1 << 16) } catch {
            switch error {
            case .system(let code): return .failure(.unreadable(code.rawValue))
            case .tooLarge: return .failure(.unreadable(EFBIG))
            case .notRegularFile(let kind): return .failure(.notRegularFile(kind))
            }
        }
        // Bytes, not characters: "\r\n" is one Swift Character, neither "\n" nor "\r".
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { return .failure(.empty) }
        guard !bytes.contains(0x0A), !bytes.contains(0x0D) else { return .failure(.severalLines) }
        return .success(String(decoding: bytes, as: UTF8.self))
    }
}
