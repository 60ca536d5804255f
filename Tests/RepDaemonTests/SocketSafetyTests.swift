import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sends one datagram to the Unix datagram socket at `path` (wakes systemd-socket-activate).
func sendDatagram(to path: String) -> Bool {
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    let sent = withUnixAddress(path) { sendto(fd, "x", 1, 0, $0, $1) }
    return sent == 1
}

/// Connects to 127.0.0.1:`port` over TCP (wakes systemd-socket-activate); returns the descriptor or -1.
func connectTCP(port: UInt16) -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    if result != 0 {
        close(fd)
        return -1
    }
    return fd
}

@Suite("socket activation and socket folder safety (#16)", .serialized)
struct SocketSafetyTests {
    @Test("a regular file passed as fd 3 is refused with a clear message, exit 1")
    func activationWithFile() throws {
        let dir = scratchDirectory()
        let file = dir + "/not-a-socket"
        try "x".write(toFile: file, atomically: true, encoding: .utf8)
        let script = #"exec 3<"$1"; export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" --demo --quiet --socket "$2""#
        let daemon = try DaemonProcess(
            executable: "/bin/sh", arguments: ["-c", script, productsDirectory + "/repd", file, dir + "/events.sock"])
        #expect(daemon.waitForExit(timeout: 10) == 1, "\(daemon.standardError)")
        #expect(
            daemon.standardError.contains("fd 3 passed by systemd (LISTEN_FDS) is not a socket"),
            "\(daemon.standardError)")
    }

    @Test(
        "a datagram socket passed by systemd-socket-activate is refused, exit 1",
        .enabled(if: which("systemd-socket-activate") != nil, "needs systemd-socket-activate (package systemd)"))
    func activationWithDatagramSocket() throws {
        let path = scratchDirectory() + "/dgram.sock"
        let activator = try DaemonProcess(
            executable: which("systemd-socket-activate")!,
            arguments: ["--datagram", "-l", path, productsDirectory + "/repd", "--demo", "--quiet"])
        #expect(eventually { sendDatagram(to: path) }, "the activator listens")
        #expect(activator.waitForExit(timeout: 10) == 1, "\(activator.standardError)")
        #expect(
            activator.standardError.contains("fd 3 passed by systemd (LISTEN_FDS) is not a stream socket"),
            "\(activator.standardError)")
    }

    @Test(
        "a TCP listening socket passed by systemd-socket-activate is refused, exit 1",
        .enabled(if: which("systemd-socket-activate") != nil, "needs systemd-socket-activate (package systemd)"))
    func activationWithTCPSocket() throws {
        let port = UInt16.random(in: 20000...60000)
        let activator = try DaemonProcess(
            executable: which("systemd-socket-activate")!,
            arguments: ["-l", "127.0.0.1:\(port)", productsDirectory + "/repd", "--demo", "--quiet"])
        var fd: Int32 = -1
        #expect(
            eventually {
                fd = connectTCP(port: port); return fd >= 0
            }, "the activator listens on port \(port)")
        defer { if fd >= 0 { close(fd) } }
        #expect(activator.waitForExit(timeout: 10) == 1, "\(activator.standardError)")
        #expect(
            activator.standardError.contains("fd 3 passed by systemd (LISTEN_FDS) is not a Unix socket"),
            "\(activator.standardError)")
    }

    /// Runs repd on the last-resort socket folder `$TMPDIR/repd-UID` (TMPDIR a fresh folder), after `prepare` made
    /// (or not) that folder.
    static func daemonOnPrivateFolder(_ prepare: (String) throws -> Void) throws -> (DaemonProcess, String) {
        let tmp = scratchDirectory()
        let folder = tmp + "/repd-\(getuid())"
        try prepare(folder)
        let daemon = try DaemonProcess(
            arguments: ["--demo", "--quiet", "--socket", folder + "/events.sock"],
            environment: ["TMPDIR": tmp, "XDG_RUNTIME_DIR": "", "RUNTIME_DIRECTORY": ""])
        return (daemon, folder)
    }

    @Test("the last-resort socket folder $TMPDIR/repd-UID is created mode 0700")
    func privateFolderCreated() throws {
        let (daemon, folder) = try Self.daemonOnPrivateFolder { _ in }
        #expect(daemonListens(folder + "/events.sock"))
        var info = stat()
        #expect(stat(folder, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700, "mode \(String(info.st_mode & 0o777, radix: 8))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("a last-resort socket folder that others can enter is refused with a clear message, exit 1")
    func privateFolderOpen() throws {
        let (daemon, folder) = try Self.daemonOnPrivateFolder { folder in
            #expect(mkdir(folder, 0o755) == 0 && chmod(folder, 0o755) == 0)
        }
        #expect(daemon.waitForExit() == 1)
        #expect(
            daemon.standardError.contains("the socket folder \(folder) has mode 755; it must be 700"),
            "\(daemon.standardError)")
    }

    @Test("a last-resort socket folder that is a symbolic link is refused, exit 1")
    func privateFolderSymlink() throws {
        let (daemon, folder) = try Self.daemonOnPrivateFolder { folder in
            let target = folder + "-elsewhere"
            #expect(mkdir(target, 0o700) == 0 && symlink(target, folder) == 0)
        }
        #expect(daemon.waitForExit() == 1)
        #expect(
            daemon.standardError.contains("the socket folder \(folder) is not a directory"), "\(daemon.standardError)")
    }

    @Test(
        "a last-resort socket folder owned by another user is refused, exit 1",
        .enabled(if: getuid() == 0, "needs root to give the folder to another user"))
    func privateFolderForeign() throws {
        let (daemon, folder) = try Self.daemonOnPrivateFolder { folder in
            #expect(mkdir(folder, 0o700) == 0 && chown(folder, 65534, 65534) == 0)
        }
        #expect(daemon.waitForExit() == 1)
        #expect(
            daemon.standardError.contains("the socket folder \(folder) belongs to uid 65534"), "\(daemon.standardError)"
        )
    }
}
