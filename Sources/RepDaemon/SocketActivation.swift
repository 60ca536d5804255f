#if canImport(Glibc)
import Glibc
#endif

/// systemd socket activation (`sd_listen_fds(3)`): the listening socket passed as fd 3 when `LISTEN_PID` is this
/// process and `LISTEN_FDS` ≥ 1.
public enum SocketActivation {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// The passed listening socket, or nil. Clears the variables so child processes do not see them.
    public static func takeListeningSocket() -> Int32? {
        guard let pid = getenv("LISTEN_PID").flatMap({ Int32(String(cString: $0)) }), pid == getpid(),
            let count = getenv("LISTEN_FDS").flatMap({ Int(String(cString: $0)) }), count >= 1
        else { return nil }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        _ = fcntl(firstDescriptor, F_SETFD, FD_CLOEXEC)
        return firstDescriptor
    }
}
