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
}
