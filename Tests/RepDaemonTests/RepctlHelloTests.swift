import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A Unix socket that is not repd's: it accepts every connection and writes `greeting` (nothing, a line that is not
/// JSON, a hello of another protocol) to it, then keeps it open, reading nothing, until the peer is gone.
final class FakePeer: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []
    private var stopped = false

    init(path: String, greeting: String) throws {
        self.path = path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = withUnixAddress(path) { bind(listener, $0, $1) }
        guard listener >= 0, bound == 0, listen(listener, 16) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EIO
            close(listener)
            throw POSIXError(code)
        }
        self.listener = listener
        let bytes = Array(greeting.utf8)
        Thread.detachNewThread { [self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else {
                    close(listener)  // shut down by stop(): closed here, so no other file can take its number first
                    return
                }
                if !bytes.isEmpty { _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) } }
                let keep = lock.withLock {
                    if !stopped { connections.append(connection) }
                    return !stopped
                }
                if !keep { close(connection) }
            }
        }
    }

    /// Stops accepting, closes every connection and removes the socket file (once; later calls do nothing).
    func stop() {
        let open: [Int32]? = lock.withLock {
            if stopped { return nil }
            stopped = true
            return connections
        }
        guard let open else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in open { close(connection) }
        unlink(path)
    }

    deinit { stop() }
}

/// `repctl status`, `history`, `subscribe` and `record` against a socket path that is not repd's: they say what is there, or
/// that no hello came, instead of waiting forever.
@Suite("repctl against a socket that is not repd's")
struct RepctlHelloTests {
    let repctl = productsDirectory + "/repctl"

    /// Runs status, history, subscribe and record side by side against `socket`; each one's exit status and stderr.
    private func runClients(_ socket: String, timeout: Double = 30) throws -> [(
        command: String, status: Int32?, error: String
    )] {
        let recording = scratchDirectory() + "/recording.csv"
        let clients = try [
            ["status"], ["history"], ["subscribe"], ["record", "--out", recording, "--duration", "30", "--quiet"],
        ].map { ($0[0], try DaemonProcess(executable: repctl, arguments: $0 + ["--socket", socket])) }
        let runs = clients.map { ($0.0, $0.1.waitForExit(timeout: timeout), $0.1.standardError) }
        #expect(access(recording, F_OK) != 0, "record wrote nothing")
        return runs
    }

    @Test(
        "a socket that accepts and never says hello: status, history, subscribe and record give up after 10 s (exit 1), asking whether it is repd's socket"
    )
    func silentPeer() throws {
        let peer = try FakePeer(path: scratchDirectory() + "/silent.sock", greeting: "")
        let started = Date()
        for run in try runClients(peer.path) {
            #expect(run.status == 1, "\(run.command): \(run.error)")
            #expect(
                run.error.contains("no hello from \(peer.path) within 10 s: is it repd's socket?"),
                "\(run.command): \(run.error)")
        }
        #expect(Date().timeIntervalSince(started) >= 9.5, "they waited the 10 s")
    }

    @Test(
        "a socket whose first line is not JSON, or not a hello: status, history, subscribe and record exit 1 at once, asking whether it is repd's socket"
    )
    func garbagePeer() throws {
        let dir = scratchDirectory()
        for greeting in ["hello there\n", #"{"type":"pong"}"# + "\n"] {
            let peer = try FakePeer(path: dir + "/garbage.sock", greeting: greeting)
            for run in try runClients(peer.path, timeout: 8) {
                #expect(run.status == 1, "\(run.command): \(run.error)")
                #expect(
                    run.error.contains("no hello from \(peer.path) (its first line is"), "\(run.command): \(run.error)")
                #expect(run.error.contains("is it repd's socket?"), "\(run.command): \(run.error)")
            }
            peer.stop()
        }
    }

    @Test(
        "a hello of protocol 99 (whole, or with only its type and protocol) is refused: status, history, subscribe and record exit 1 naming both versions"
    )
    func otherProtocol() throws {
        let dir = scratchDirectory()
        let whole =
            #"{"type":"hello","protocol":99,"version":"9.0","sensor":{"kind":"demo","name":"demo workout","rate_hz":50},"rate_hz":50,"subscribed":["rep"]}"#
        for greeting in [whole, #"{"type":"hello","protocol":99}"#] {
            let peer = try FakePeer(path: dir + "/future.sock", greeting: greeting + "\n")
            for run in try runClients(peer.path, timeout: 8) {
                #expect(run.status == 1, "\(run.command): \(run.error)")
                #expect(
                    run.error.contains("\(peer.path) speaks protocol 99; this repctl speaks 1"),
                    "\(run.command): \(run.error)")
            }
            peer.stop()
        }
    }

    @Test(
        "a socket path that is a regular file, a folder or a FIFO is named as such; a missing path or a socket nobody listens on says no repd is listening"
    )
    func whatIsAtThePath() throws {
        let dir = scratchDirectory()
        let file = dir + "/file"
        try "not a socket\n".write(toFile: file, atomically: true, encoding: .utf8)
        let folder = dir + "/folder"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let fifo = dir + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let stale = dir + "/stale.sock"
        let bound = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(withUnixAddress(stale) { bind(bound, $0, $1) } == 0)
        close(bound)  // the file stays, nobody listens
        let cases = [
            (file, "\(file) is a regular file, not repd's socket"),
            (folder, "\(folder) is a folder, not repd's socket"),
            (fifo, "\(fifo) is a FIFO (named pipe), not repd's socket"),
            (dir + "/missing.sock", "no repd is listening on \(dir)/missing.sock"),
            (stale, "no repd is listening on \(stale)"),
        ]
        for (path, said) in cases {
            for run in try runClients(path) {
                #expect(run.status == 1, "\(run.command) \(path): \(run.error)")
                #expect(run.error.contains(said), "\(run.command) \(path): \(run.error)")
            }
        }
    }

    @Test(
        "repctl subscribe that had repd's hello retries, with its back-off, a successor on the socket that says none, and prints repd's events once repd is back"
    )
    func subscribeRetriesASilentSuccessor() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        var daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--speed", "10", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let subscriber = try DaemonProcess(executable: repctl, arguments: ["subscribe", "--socket", socketPath])
        #expect(eventually(timeout: 30) { subscriber.standardOutput.contains("connected to repd") })
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        unlink(socketPath)  // were it left behind
        let peer = try FakePeer(path: socketPath, greeting: "")
        #expect(
            eventually(timeout: 30) {
                subscriber.standardError.contains(
                    "no hello from \(socketPath) within 10 s: is it repd's socket? (retrying in")
            }, "\(subscriber.standardError)")
        #expect(subscriber.process.isRunning, "it keeps trying")
        peer.stop()
        let repsBefore = subscriber.standardOutput.components(separatedBy: " · rep ").count
        daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--speed", "10", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(
            eventually(timeout: 40) { subscriber.standardError.contains("reconnected to \(socketPath)") },
            "\(subscriber.standardError)")
        #expect(
            eventually(timeout: 40) { subscriber.standardOutput.components(separatedBy: " · rep ").count > repsBefore },
            "the new repd's reps are printed: \(subscriber.standardOutput.suffix(500))")
        subscriber.signal(SIGINT)
        #expect(subscriber.waitForExit() == 0, "\(subscriber.standardError)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
