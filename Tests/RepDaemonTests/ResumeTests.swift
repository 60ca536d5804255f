import Foundation
import MotionCore
import RepClient
import RepJournal
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One line a `StreamReader` received: when, its type, and its `id` and `wall` when it has them.
struct ReceivedLine: Sendable {
    var text: String
    var arrival: Double
    var type: String
    var id: Int?
    var wall: Double?
}

/// Reads a client socket on its own thread, `chunk` bytes at a time, a read every `pause` seconds at most (0: as fast
/// as it can; the time the reader spends on a chunk counts toward the pause, so that a slow build, such as one under
/// a sanitizer, does not make it a slower reader than the test means it to be), and keeps what each line says, read with RepClient's `ServerLine` (the reader repctl and repd-web
/// use), so the test does not depend on the order repd writes the members in.
final class StreamReader: @unchecked Sendable {
    let fd: Int32
    private let lock = NSLock()
    private var received: [ReceivedLine] = []
    private var ended = false
    private var stopping = false
    private var thread: Thread?

    init(fd: Int32, chunk: Int = 65536, pause: Double = 0) {
        self.fd = fd
        let thread = Thread { [self] in run(chunk: chunk, pause: pause) }
        self.thread = thread
        thread.start()
    }

    /// The newest id received after `subscribed` (cheap to poll: the test's own CPU must not compete with repd's).
    private var newestID = 0
    private var subscribed = false

    var lines: [ReceivedLine] { lock.withLock { received } }
    var newestIDSinceSubscribed: Int { lock.withLock { newestID } }
    var atEnd: Bool { lock.withLock { ended } }
    func stop() { lock.withLock { stopping = true } }

    private func run(chunk: Int, pause: Double) {
        var partial: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while !lock.withLock({ stopping }) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 100) > 0 else { continue }
            let n = read(fd, &buffer, chunk)
            if n <= 0 { break }
            // The wall clock stamps arrivals (they are compared with the events' wall times); the pause is timed on
            // the monotonic clock, which a step of the wall clock cannot stretch into a long sleep.
            let arrival = Date().timeIntervalSince1970
            let readAt = DispatchTime.now().uptimeNanoseconds
            partial.append(contentsOf: buffer[..<n])
            var lines: [ReceivedLine] = []
            var start = 0
            while let newline = partial[start...].firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(Self.describe(partial[start..<newline], arrival: arrival))
                start = newline + 1
            }
            partial.removeFirst(start)
            lock.withLock {
                for line in lines {
                    if line.type == "subscribed" { subscribed = true }
                    if subscribed, let id = line.id { newestID = max(newestID, id) }
                }
                received += lines
            }
            let spent = Double(DispatchTime.now().uptimeNanoseconds - readAt) / 1e9
            let rest = pause - spent
            if rest > 0 { usleep(useconds_t(rest * 1e6)) }
        }
        lock.withLock { ended = true }
    }

    /// A line that cannot be read keeps its text, with an empty type.
    private static func describe(_ bytes: ArraySlice<UInt8>, arrival: Double) -> ReceivedLine {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = try? ServerLine.parse(bytes) else {
            return ReceivedLine(text: text, arrival: arrival, type: "", id: nil, wall: nil)
        }
        let wall: Double?
        if case .event(let event) = line { wall = event.wall } else { wall = nil }
        return ReceivedLine(text: text, arrival: arrival, type: line.type, id: line.eventID.map(Int.init), wall: wall)
    }
}

/// A connected client socket (no reading of its own); nil when nothing listens.
private func connectClient(_ path: String, receiveBuffer: Int32? = nil) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    if var size = receiveBuffer {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    guard withUnixAddress(path, { connect(fd, $0, $1) }) == 0 else {
        close(fd)
        return nil
    }
    return fd
}

private func sendLine(_ fd: Int32, _ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
}

/// A journal of `count` events written straight through RepJournal (sets of ten reps), as a busy station leaves it.
func prepareJournal(path: String, count: Int) throws {
    let journal = try EventJournal(path: path, station: "rack-1", idBlock: Int64(count) + 1)
    // Recent enough that retention (30 days by default) keeps them all.
    let wall0 = Date().timeIntervalSince1970 - Double(count) * 2
    for index in 0..<count {
        let set = index / 12 + 1
        let wall = wall0 + Double(index) * 2
        switch index % 12 {
        case 0:
            _ = try journal.append(
                type: "set_start", json: "{\"type\":\"set_start\",\"set\":\(set),\"t\":\(index),\"wall\":\(wall)}",
                wall: wall)
        case 11:
            _ = try journal.append(
                type: "set_end",
                json: "{\"type\":\"set_end\",\"set\":\(set),\"reps\":10,\"t\":\(index),\"wall\":\(wall)}", wall: wall)
        default:
            let rep = index % 12
            _ = try journal.append(
                type: "rep",
                json:
                    "{\"type\":\"rep\",\"set\":\(set),\"rep\":\(rep),\"total\":\(index),\"t\":\(index),\"wall\":\(wall),\"duration\":2.1,\"amplitude\":0.61}",
                wall: wall)
        }
    }
    journal.close()
}

/// The p99 of `values` (nil when empty).
private func p99(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
}

/// repd's resident memory (`VmRSS`), in KiB.
private func residentKiB(_ pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}

/// The ids of the journaled lines from `subscribed` on.
private func idsFromSubscribed(_ lines: [ReceivedLine]) -> [Int] {
    lines.drop { $0.type != "subscribed" }.compactMap(\.id)
}

@Suite("resuming after any gap (#27)", .serialized)
struct ResumeTests {
    @Test(
        "since=0 over 20 000 journaled events: a fast and a slow reader get every event once, in order, and stay; one that stops reading is dropped alone"
    )
    func largeReplay() throws {
        let dir = scratchDirectory()
        let journalPath = dir + "/events.db"
        let socketPath = dir + "/events.sock"
        let count = 20_000
        let prepared = Date()
        try prepareJournal(path: journalPath, count: count)
        let preparation = Date().timeIntervalSince(prepared)
        // Twelve sets of ten reps at twenty times real time: live reps (about eight a second) through the test.
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: Array(repeating: 10, count: 12), rest: 6, lead: 3)
        let daemon = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "20", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let pid = daemon.process.processIdentifier

        // The live client measures publish → read for each rep (`wall` to its arrival), as repd-bench's fanout.
        let live = StreamReader(fd: try #require(connectClient(socketPath)))
        sendLine(live.fd, "subscribe rep,set,sensor")
        func repLatencies(from: Double, to: Double) -> [Double] {
            live.lines.filter { $0.type == "rep" && $0.arrival >= from && $0.arrival < to }.compactMap { line in
                line.wall.map { line.arrival - $0 }
            }
        }
        // Six seconds without replay first (a measuring window, not a wait), then as long as the replays go on.
        #expect(eventually(timeout: 30) { live.lines.contains { $0.type == "rep" } })
        let baselineStart = Date().timeIntervalSince1970
        usleep(6_000_000)
        let baselineEnd = Date().timeIntervalSince1970
        let rssBefore = residentKiB(pid) ?? 0

        let replayStart = Date().timeIntervalSince1970
        let fast = StreamReader(fd: try #require(connectClient(socketPath)))
        let slow = StreamReader(fd: try #require(connectClient(socketPath)), chunk: 4096, pause: 0.01)
        let stopped = try #require(connectClient(socketPath, receiveBuffer: 4096))
        for fd in [fast.fd, slow.fd, stopped] { sendLine(fd, "subscribe since=0") }
        var rssPeak = rssBefore
        func caughtUp(_ reader: StreamReader) -> Bool { reader.newestIDSinceSubscribed > count }
        let replayed = eventually(timeout: 90) {
            rssPeak = max(rssPeak, residentKiB(pid) ?? 0)
            return caughtUp(fast) && caughtUp(slow)
        }
        let replayEnd = Date().timeIntervalSince1970
        #expect(
            replayed,
            "both got past id \(count): fast \(idsFromSubscribed(fast.lines).last ?? 0), slow \(idsFromSubscribed(slow.lines).last ?? 0) \(daemon.standardError.suffix(3000))"
        )
        let fastDone = fast.lines.first { ($0.id ?? 0) > count }?.arrival ?? .nan

        // The client that stopped reading is dropped, and only it.
        #expect(
            eventually(timeout: 30) { daemon.standardError.contains("stopped reading") },
            "\(daemon.standardError.suffix(3000))")
        let stoppedReader = StreamReader(fd: stopped)
        #expect(eventually(timeout: 10) { stoppedReader.atEnd }, "its connection was closed")
        let partial = idsFromSubscribed(stoppedReader.lines)
        #expect(
            partial.count < count && partial == Array(1..<(partial.count + 1)),
            "what it got came in order: \(partial.count)")

        // The others stay connected, and from `subscribed` on got every id once, in order, replayed and then live.
        for reader in [fast, slow] {
            sendLine(reader.fd, "ping")
            #expect(eventually(timeout: 10) { reader.lines.contains { $0.type == "pong" } }, "still connected")
            let ids = idsFromSubscribed(reader.lines)
            #expect(ids.count > count, "the live events after the journal's end came too")
            #expect(ids == Array(1...max(1, ids.count)), "every id once, in order")
        }
        // A replayed line is the line that went out live, byte for byte.
        let liveLines = Dictionary(live.lines.compactMap { line in line.id.map { ($0, line.text) } }) { a, _ in a }
        let replayedLines = fast.lines.drop { $0.type != "subscribed" }.filter { ($0.id ?? 0) > count }
        #expect(
            !replayedLines.isEmpty
                && replayedLines.allSatisfy { liveLines[$0.id!] == nil || liveLines[$0.id!] == $0.text })
        #expect(
            replayedLines.contains { liveLines[$0.id!] != nil },
            "some lines both clients got, to compare byte for byte")
        let liveIDs = live.lines.compactMap(\.id)
        #expect(
            !liveIDs.isEmpty && liveIDs == Array(liveIDs[0]...(liveIDs.last ?? 0)) && liveIDs[0] > count,
            "the live client missed nothing")
        #expect(
            !daemon.standardError.contains("disconnecting it")
                || daemon.standardError.split(separator: "\n").filter { $0.contains("disconnecting it") }.count == 1)

        // Latency and memory: reported; the latency is judged only when the machine was quiet enough to tell.
        let base = repLatencies(from: baselineStart, to: baselineEnd)
        let during = repLatencies(from: replayStart, to: replayEnd)
        let baseP99 = p99(base) ?? .nan
        let duringP99 = p99(during) ?? .nan
        print(
            """
            resume: \(count) events journaled in \(String(format: "%.2f", preparation)) s; since=0 replayed to the fast \
            reader in \(String(format: "%.2f", fastDone - replayStart)) s, to the 4 KiB/10 ms reader in \
            \(String(format: "%.2f", replayEnd - replayStart)) s; the stopped reader got \(partial.count) before it was dropped
            resume: live rep latency (wall → read) p99 \(String(format: "%.2f", baseP99 * 1000)) ms over \(base.count) reps \
            without replay, \(String(format: "%.2f", duringP99 * 1000)) ms over \(during.count) reps during it
            resume: without \(base.sorted().map { String(format: "%.1f", $0 * 1000) }), during \(during.sorted().map { String(format: "%.1f", $0 * 1000) })
            resume: repd RSS \(rssBefore) KiB before the replays, peak \(rssPeak) KiB during them
            """)
        // What bounds the queues is shown above: the reader that stopped is dropped, the others get every event. This
        // guards against gross growth only (measured 1.4 MiB over 30 MiB): 32 MiB is ten times what one whole copy
        // of the replayed lines would hold (about 3.4 MB), so it cannot tell a replay read page by page from one
        // read whole. AddressSanitizer keeps freed memory in its quarantine (256 MiB by default), so there RSS says
        // nothing.
        if ProcessInfo.processInfo.environment["REPD_SANITIZER"] == nil {
            #expect(rssPeak - rssBefore < 32 * 1024, "no gross growth: \(rssBefore) → \(rssPeak) KiB")
        } else {
            print("resume: RSS not judged under a sanitizer (REPD_SANITIZER)")
        }
        // The latency is printed, not judged: on this 2-core VM the debug repd, the test's four readers and the
        // scheduler moved the p99 over 40-50 reps between 1.9 and 12.5 ms from run to run, with or without the replay
        // (a CI run on a quiet machine failed a "2x or 10 ms" check at 12.5 ms). The README's figures were measured
        // with a release repd; a timing claim belongs to a benchmark, not to a test that fails when the machine is busy.
        var load = [Double](repeating: 0, count: 1)
        _ = getloadavg(&load, 1)
        print(
            "resume: latency measured, not judged (sanitizer \(ProcessInfo.processInfo.environment["REPD_SANITIZER"] ?? "none"), load average \(load[0]), \(base.count)/\(during.count) reps)"
        )
        live.stop()
        fast.stop()
        slow.stop()
        stoppedReader.stop()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.standardError.suffix(3000))")
        for fd in [live.fd, fast.fd, slow.fd, stopped] { close(fd) }
    }

    @Test(
        "a second repd on the same journal and socket exits 1 with the existing message and leaves the journal untouched"
    )
    func secondInstanceLeavesJournal() throws {
        let dir = scratchDirectory()
        let journalPath = dir + "/events.db"
        let socketPath = dir + "/events.sock"
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [5], rest: 2, lead: 2)
        let first = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "20", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        client.send("subscribe sensor\n")
        #expect(
            eventually(timeout: 30) { client.next(timeout: 1, { $0.sensorState }) == .finished })
        func newest() throws -> (id: Int64, count: Int) {
            let reader = try EventJournal(path: journalPath, station: "test", handsOutIDs: false)
            defer { reader.close() }
            return (try reader.newestID, try reader.events(after: 0, limit: 100_000).count)
        }
        let before = try newest()
        #expect(before.id > 0)

        let second = try DaemonProcess(arguments: [
            "--demo", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(second.waitForExit() == 1)
        #expect(
            second.standardError.contains("another repd is already serving \(socketPath)"), "\(second.standardError)")
        // The same journal with another socket: the journal's lock keeps it out.
        let third = try DaemonProcess(arguments: [
            "--demo", "--socket", dir + "/other.sock", "--journal", journalPath, "--quiet",
        ])
        #expect(third.waitForExit() == 1)
        #expect(
            third.standardError.contains("another repd is already using the journal \(journalPath)"),
            "\(third.standardError)")
        let after = try newest()
        #expect(after.id == before.id && after.count == before.count, "journal untouched: \(before) → \(after)")
        #expect(first.process.isRunning)
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
    }
}
