import PlainText

#if canImport(Glibc)
    import Glibc
#endif

/// The broker password, from a file (`uplink.password_file`) so that it never appears on a command line or in the
/// configuration file. The file must not be readable by other users (mode 0600 or 0640): repd refuses it
/// otherwise. One line; a trailing newline is not part of the password.
enum PasswordFile {
    static func read(_ path: String) throws(UplinkError) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw UplinkError(.passwordFile, "uplink.password_file \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o007 == 0 else {
            throw UplinkError(
                .passwordFile,
                "uplink.password_file \(path) has mode \(String(info.st_mode & 0o777, radix: 8)): other users can read it; "
                    + "make it 600 or 640 (chmod o= \(path))")
        }
        let bytes: [UInt8]
        do { bytes = try TextFile.readBytes(path) } catch {
            throw UplinkError(.passwordFile, "uplink.password_file \(path): cannot read it: \(error)")
        }
        var text = String(decoding: bytes, as: UTF8.self)
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        guard !text.isEmpty else { throw UplinkError(.passwordFile, "uplink.password_file \(path) is empty") }
        guard !text.contains("\n") else {
            throw UplinkError(
                .passwordFile, "uplink.password_file \(path) has more than one line (it holds only the password)")
        }
        return text
    }
}
