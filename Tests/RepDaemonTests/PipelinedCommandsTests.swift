import Foundation
import RepClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A connected client socket whose blocking sends give up after `sendTimeout` seconds (`SO_SNDTIMEO`), so that a
/// repd that never reads again fails the test instead of hanging it; nil when nothing listens.
private func pipeliningClient(_ path: String, sendTimeout: Int = 120) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var timeout = timeval(tv_sec: sendTimeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    guard withUnixAddress(path, { connect(fd, $0, $1) }) == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// Sends all of `text` in as few writes as the socket takes (one `send` for what fits); false when a send fails (a
/// closed connection, or the send timeout passed).
private func sendAll(_ fd: Int32, _ text: String) -> Bool {
    let bytes = Array(text.utf8)
    var sent = 0
    while sent < bytes.count {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
        if n < 0 && errno == EINTR { continue }
        guard n > 0 else { return false }
        sent += n
    }
    return true
}

/// The types of the replies a reader received (`status`, `pong`, `error`), in order: live events and `hello` left out.
private func replies(_ reader: StreamReader) -> [String] {
    reader.lines.map(\.type).filter { $0 == "status" || $0 == "pong" || $0 == "error" }
}

/// How many `pong` lines a reader received.
private func pongs(_ reader: StreamReader) -> Int {
    reader.lines.lazy.filter { $0.type == "pong" }.count
}

/// A process's resident memory (`VmRSS`), in KiB.
private func residentMemoryKiB(_ pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}

/// Ends a reader's thread, then closes its socket.
private func finish(_ reader: StreamReader) {
    reader.stop()
    _ = eventually(timeout: 10) { reader.atEnd }
    close(reader.fd)
}

@Suite("commands sent in a row (pipelining)", .serialized)
struct PipelinedCommandsTests {
    /// repd on the demo workout without a journal, each client's queue 16 KiB; waits until it listens.
    private func demoWithSmallQueue() throws -> (DaemonProcess, String) {
        let dir = scratchDirectory()
        let config = dir + "/repd.toml"
        try "[socket]\nclient_queue_kib = 16\n".write(toFile: config, atomically: true, encoding: .utf8)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--config", config, "--demo", "--journal", "", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        return (daemon, socketPath)
    }

    @Test(
        "1000 status lines in one write, read as they come: each is answered, in order, and the connection stays open"
    )
    func thousandStatusLines() throws {
        // A 16 KiB queue: the replies (over 500 KiB) pass it many times over, whatever the machine's speed. repd wrote
        // them all at once and dropped the client when one passed the limit (with the default 256 KiB: 168 replies,
        // then a reset without an `error` line), although it read all the while.
        let (daemon, socketPath) = try demoWithSmallQueue()
        // Reads 4 KiB at a time, a read a millisecond at most: steadily, slower than repd writes.
        let reader = StreamReader(fd: try #require(pipeliningClient(socketPath)), chunk: 4096, pause: 0.001)
        defer { finish(reader) }
        #expect(sendAll(reader.fd, String(repeating: "status\n", count: 1000) + "ping\n"))
        let expected = Array(repeating: "status", count: 1000) + ["pong"]
        let answered = eventually(timeout: 120) { reader.atEnd || replies(reader).count >= expected.count }
        let got = replies(reader)
        let inOrder = got == expected
        #expect(answered && inOrder, "\(got.count) replies, ending \(got.suffix(3)); closed: \(reader.atEnd)")

        // Still connected: the next command is answered too.
        #expect(sendAll(reader.fd, "ping\n"))
        #expect(eventually(timeout: 60) { reader.atEnd || pongs(reader) == 2 })
        let open = !reader.atEnd
        #expect(open && pongs(reader) == 2, "the connection stays open")
        #expect(!daemon.standardError.contains("stopped reading"), "\(daemon.standardError.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("100 000 ping lines in one write, read as they come: each gets its pong, in order")
    func hundredThousandPings() throws {
        // A 16 KiB queue (a thousand pongs) and a steady reader: one read of repd's (up to 64 KiB, 13 000 lines)
        // asks for more than the queue and the socket hold. repd answered them all at once and dropped the client.
        let (daemon, socketPath) = try demoWithSmallQueue()
        let reader = StreamReader(fd: try #require(pipeliningClient(socketPath)), chunk: 4096, pause: 0.001)
        defer { finish(reader) }
        // 500 000 bytes: more than the socket holds, so this send returns only as repd reads (it reads while its
        // queue for this client drains, and stops reading while it is full).
        #expect(sendAll(reader.fd, String(repeating: "ping\n", count: 100_000) + "status\n"))
        // (The status reply comes last: looking at the newest lines is enough, and cheap.)
        let answered = eventually(timeout: 180) {
            reader.atEnd || reader.lines.suffix(20).contains { $0.type == "status" }
        }
        let got = replies(reader)
        #expect(answered, "\(got.count) replies; closed: \(reader.atEnd)")
        let inOrder = got.count == 100_001 && got.last == "status" && got.dropLast().allSatisfy { $0 == "pong" }
        #expect(inOrder, "\(got.count) replies, ending \(got.suffix(3)); errors: \(got.filter { $0 == "error" }.count)")
        let open = !reader.atEnd
        #expect(open, "the connection stays open")
        #expect(!daemon.standardError.contains("stopped reading"), "\(daemon.standardError.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "a client that sends commands without end and reads nothing is held (repd stops reading it), then dropped; repd's memory stays bounded and a subscriber keeps receiving events",
        // Without a journal, `history` and `subscribe since=` are answered with an error the hub writes itself.
        arguments: ["status", "history", "subscribe since=0"])
    func writerThatNeverReads(command: String) throws {
        let socketPath = scratchDirectory() + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--speed", "20", "--loop", "--journal", "", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let pid = daemon.process.processIdentifier
        let subscriber = try #require(LineClient(path: socketPath))
        #expect(subscriber.next(type: "hello") != nil)
        #expect(subscriber.next(type: "rep", timeout: 60) != nil, "events flow before")
        let memoryBefore = try #require(residentMemoryKiB(pid))

        // Sends `command` lines (each asks for about 1 KiB, or 100 bytes) without waiting, and reads nothing, until its
        // socket has been full for 2 s (held: repd reads no more of it), repd closes it, or 64 MiB went out (not held).
        let flooder = try #require(pipeliningClient(socketPath))
        defer { close(flooder) }
        let chunk = Array(String(repeating: command + "\n", count: 1024).utf8)
        let cap = 64 << 20
        var sent = 0
        var outcome = "not held"
        while sent < cap {
            let n = chunk.withUnsafeBytes {
                send(flooder, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if n > 0 {
                sent += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            guard n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) else {
                outcome = "closed by repd"
                break
            }
            var pfd = pollfd(fd: flooder, events: Int16(POLLOUT), revents: 0)
            if poll(&pfd, 1, 2000) == 0 {
                outcome = "held"
                break
            }
        }
        print("a client that never reads (\(command)): \(outcome) after \(sent) bytes of commands")
        #expect(sent < 16 << 20, "repd stops reading a client whose replies it cannot send: \(sent) bytes went out")
        // Held, not dropped at once: a repd that closed the client as soon as its queue filled also read little.
        #expect(outcome == "held", "the client is held before it is dropped: \(outcome) after \(sent) bytes")

        // Meanwhile the subscriber gets events: the loop is not held up by the client.
        let heldAt = Date().timeIntervalSince1970
        var fresh = 0
        while fresh < 2, let rep = subscriber.next(timeout: 60, { $0.repEvent }) {
            if rep.wall >= heldAt { fresh += 1 }
        }
        #expect(fresh == 2, "events published while the client was held reached the subscriber")

        // The client is dropped as one that stopped reading (its queue did not drain for the stall limit).
        #expect(
            eventually(timeout: 90) { daemon.standardError.contains("stopped reading") },
            "\(daemon.standardError.suffix(2000))")
        var buffer = [UInt8](repeating: 0, count: 65536)
        let closed = eventually(timeout: 60) {
            let n = recv(flooder, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        }
        #expect(closed, "repd closed the connection")
        let memoryAfter = try #require(residentMemoryKiB(pid))
        print("repd's resident memory: \(memoryBefore) KiB before, \(memoryAfter) KiB after")
        // A sanitizer's shadow memory and quarantine grow with what repd allocates and frees (ThreadSanitizer: 33-40
        // MiB here on CI), so there RSS says nothing about a bound; the rest of the test still runs.
        if ProcessInfo.processInfo.environment["REPD_SANITIZER"] == nil {
            #expect(memoryAfter - memoryBefore < 32 * 1024, "\(memoryBefore) KiB before, \(memoryAfter) KiB after")
        } else {
            print("pipelined: RSS not judged under a sanitizer (REPD_SANITIZER)")
        }

        subscriber.send("ping\n")
        #expect(subscriber.next(type: "pong", timeout: 60) != nil, "the subscriber is still served")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
