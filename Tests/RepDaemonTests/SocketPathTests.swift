import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The socket file under repd while it runs: removed (a cleaner, `rm -r` of its folder) or replaced by another.
@Suite("the socket path while repd runs", .serialized)
struct SocketPathTests {
    @Test(
        "a socket file removed with its folder while repd runs is made again: new clients connect, connected ones stay served"
    )
    func removedSocketIsMadeAgain() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/run/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let connected = try #require(LineClient(path: socketPath))
        #expect(connected.next(type: "hello") != nil)
        try FileManager.default.removeItem(atPath: dir + "/run")
        #expect(LineClient(path: socketPath) == nil, "gone: nobody can connect")
        // The check runs every 10 s.
        #expect(
            eventually(timeout: 40) { daemon.standardError.contains("made it again") },
            "\(daemon.standardError.suffix(2000))")
        let newcomer = try #require(LineClient(path: socketPath), "a new client connects again")
        #expect(newcomer.next(type: "hello") != nil)
        connected.send("ping\n")
        #expect(connected.next(type: "pong") != nil, "the client connected before is still served")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 30) == 0, "\(daemon.standardError.suffix(4000))")
        #expect(access(socketPath, F_OK) != 0, "the socket made again is removed at stop")
    }

    @Test("a socket path that another socket took over is logged once and left alone, also when repd stops")
    func replacedSocketIsLeftAlone() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        // Another program's socket in its place (as a second repd would make it).
        #expect(unlink(socketPath) == 0)
        // Another program makes its socket a moment later, as a second repd would (hundreds of ms to start). Made
        // within the same clock tick it could get the freed inode number and the same change time, and be taken
        // for repd's own (SocketServerService.SocketFile says so): a CI run did that twice without this wait.
        usleep(100_000)
        let other = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(other >= 0)
        defer { close(other) }
        #expect(withUnixAddress(socketPath) { bind(other, $0, $1) } == 0, "\(String(cString: strerror(errno)))")
        #expect(listen(other, 4) == 0)
        #expect(
            eventually(timeout: 40) { daemon.standardError.contains("now names another file") },
            "\(daemon.standardError.suffix(2000))")
        #expect(access(socketPath, F_OK) == 0, "the other socket is there before the stop")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 30) == 0, "\(daemon.standardError.suffix(4000))")
        #expect(access(socketPath, F_OK) == 0, "the other socket is still there: \(daemon.standardError.suffix(3000))")
        #expect(
            daemon.standardError.components(separatedBy: "now names another file").count == 2,
            "logged once: \(daemon.standardError.suffix(4000))")
    }

    @Test("the socket repd listens on is closed on exec (FD_CLOEXEC), as it was made: no program started inherits it")
    func listeningSocketClosesOnExec() throws {
        let socketPath = scratchDirectory() + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        defer {
            daemon.signal(SIGTERM)
            _ = daemon.waitForExit(timeout: 30)
        }
        #expect(daemonListens(socketPath))
        // The listening socket's inode: /proc/net/unix's line for the path with __SO_ACCEPTCON (00010000) set.
        let table = try String(contentsOfFile: "/proc/net/unix", encoding: .utf8)
        let fields = table.split(separator: "\n").map { $0.split(separator: " ") }
        let inode = try #require(fields.first { $0.count == 8 && $0[7] == socketPath && $0[3] == "00010000" }?[6])
        let pid = daemon.process.processIdentifier
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")
        let fd = try #require(
            descriptors.first {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)"))
                    == "socket:[\(inode)]"
            })
        let info = try String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)
        let flags = try #require(
            info.split(separator: "\n").first { $0.hasPrefix("flags:") }.flatMap {
                Int($0.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
            })
        #expect(flags & Int(O_CLOEXEC) != 0, "fd \(fd) flags \(String(flags, radix: 8))")
    }
}
