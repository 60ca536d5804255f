#if canImport(Glibc)
    import Glibc
#endif

/// systemd socket activation (`sd_listen_fds(3)`): the listening socket passed as fd 3 when `LISTEN_PID` is this
/// process and `LISTEN_FDS` ≥ 1.
public enum SocketActivation {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// The passed listening socket, or nil when none was passed. Clears the variables so child processes do not
    /// see them. Throws when fd 3 is not what repd.socket passes: a listening `AF_UNIX` stream socket.
    public static func takeListeningSocket() throws(SocketError) -> Int32? {
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
            let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count >= 1
        else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        try check(firstDescriptor)
        _ = fcntl(firstDescriptor, F_SETFD, FD_CLOEXEC)
        return firstDescriptor
    }

    /// Checks that `fd` is a listening `AF_UNIX` stream socket (`SO_TYPE`, `SO_ACCEPTCONN`, `getsockname`).
    static func check(_ fd: Int32) throws(SocketError) {
        let passed = "fd \(fd) passed by systemd (LISTEN_FDS)"
        let fix = "repd.socket must have ListenStream=/path/to/socket"
        func option(_ name: Int32) throws(SocketError) -> Int32 {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 else {
                throw SocketError(
                    description: "\(passed) is not a socket (\(String(cString: strerror(errno)))); \(fix)")
            }
            return value
        }
        guard try option(SO_TYPE) == Int32(SOCK_STREAM.rawValue) else {
            throw SocketError(description: "\(passed) is not a stream socket; \(fix)")
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0, address.ss_family == sa_family_t(AF_UNIX) else {
            throw SocketError(description: "\(passed) is not a Unix socket (family \(address.ss_family)); \(fix)")
        }
        guard try option(SO_ACCEPTCONN) != 0 else {
            throw SocketError(description: "\(passed) is not listening; \(fix)")
        }
    }
}
