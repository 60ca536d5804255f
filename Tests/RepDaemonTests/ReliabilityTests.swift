import Foundation
import MotionCore
import MotionFixtures
import RepClient
import RepDetection
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes waiting in a socket's receive queue (`FIONREAD`).
func unreadBytes(_ fd: Int32) -> Int32 {
    var count: Int32 = 0
    _ = ioctl(fd, UInt(FIONREAD), &count)
    return count
}

/// Seconds on the monotonic clock since `start`.
func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
}

@Suite("repd reliability (#16)", .serialized)
struct ReliabilityTests {
    @Test("SIGTERM ends repd within a few seconds while a client that stopped reading is under its queue limit")
    func shutdownWithStalledClient() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let config = dir + "/repd.toml"
        // A queue limit far above what the test produces, so the client is never disconnected for it.
        try "[socket]\nclient_queue_kib = 65536\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: [
            "--config", config, "--demo", "--speed", "50", "--loop", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let stalled = try #require(LineClient(path: socketPath))
        var small: Int32 = 4096
        setsockopt(stalled.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        stalled.send("subscribe samples\n")
        // Stalled: the kernel queue towards the client is full, so repd holds the rest in its own queue. Seen from
        // here as a receive queue that stops growing while samples keep flowing.
        var history: [Int32] = []
        let full = eventually(timeout: 30) {
            usleep(100_000)
            history.append(unreadBytes(stalled.fd))
            return history.count > 10 && history.last! > 0 && history.suffix(10).allSatisfy { $0 == history.last! }
        }
        #expect(full, "the client's receive queue never stopped growing: \(history.suffix(12))")

        let start = ContinuousClock.now
        daemon.signal(SIGTERM)
        // A shutdown that waits for the client never ends; a prompt one takes well under a second (printed): the
        // bound leaves a busy machine room.
        let status = daemon.waitForExit(timeout: 30)
        let took = seconds(since: start)
        print("shutdown with a stalled client took \(took) s")
        #expect(
            status == 0,
            "exit status \(String(describing: status)) after \(took) s; \(daemon.standardError.suffix(4000))")
        #expect(took < 15, "shutdown took \(took) s")
        #expect(access(socketPath, F_OK) != 0, "the socket file is removed")
        #expect(!daemon.standardError.contains("stopped reading"), "the client stayed under its queue limit")
    }

    @Test(
        "a looping replay faster than the detector: status shows the ring's capacity and the batches it dropped, and SIGTERM still ends repd"
    )
    func overloadedReplay() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        // Every batch of every pass is due at once: the provider's queue never let go (SIGTERM was ignored), and
        // status said capacity 0, nothing dropped, while the log counted the dropped batches.
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--speed", "10000000", "--socket", socketPath, "--journal", "",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        #expect(
            eventually(timeout: 30) { daemon.standardError.contains("the detector falls behind") },
            "the ring overflows: \(daemon.standardError.suffix(2000))")
        // What status says comes from the detector's side after each batch it takes: soon, not at the same moment.
        var ring: JSONValue?
        let reported = eventually(timeout: 15) {
            client.send("status\n")
            ring = client.next(type: "status")?["ring"]
            return (ring?["dropped_batches"]?.int ?? 0) > 0
        }
        #expect(reported, "status reports the dropped batches: \(String(describing: ring))")
        #expect((ring?["capacity"]?.int ?? 0) > 0, "\(String(describing: ring))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 30) == 0, "\(daemon.standardError.suffix(4000))")
    }

    @Test("control characters a client sends are escaped in the log: no forged journald priority, no escape codes")
    func forgedLogPriority() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        // JOURNAL_STREAM makes repd prefix each stderr line with its priority, as journald reads it.
        let daemon = try DaemonProcess(
            arguments: ["--demo", "--socket", socketPath, "--quiet"], environment: ["JOURNAL_STREAM": "8:1234"])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        #expect(client.next(type: "hello") != nil)
        client.send("{\"cmd\":\"x\\n<0>forged emergency\"}\n")
        #expect(client.next(type: "error") != nil)
        client.send("frob\u{1B}[2J\u{7F}nicate\n")
        #expect(client.next(type: "error") != nil)
        client.send("ping\n")
        #expect(client.next(type: "pong") != nil)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let log = daemon.standardError
        let lines = log.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        let unprefixed = lines.filter { line in !["<4>", "<5>", "<6>", "<7>"].contains { line.hasPrefix($0) } }
        #expect(unprefixed.isEmpty, "lines that are not repd's own info/notice/warning/debug lines: \(unprefixed)")
        #expect(!log.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }, "\(log)")
        #expect(log.contains(#"x\n<0>forged emergency"#), "\(log)")
        #expect(log.contains(#"frob\x1b[2J\x7fnicate"#), "\(log)")
    }

    @Test("control characters in a configuration value are escaped in repd's error message")
    func forgedPriorityInConfiguration() throws {
        let dir = scratchDirectory()
        let config = dir + "/repd.toml"
        try "[sensor]\nprovider = \"demo\\n<0>forged\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(
            arguments: ["--config", config, "--check-config"], environment: ["JOURNAL_STREAM": "8:1234"])
        #expect(daemon.waitForExit() == 78)
        #expect(!daemon.standardError.contains("\n<0>"), "\(daemon.standardError)")
        #expect(
            daemon.standardError.contains(#"'demo\n<0>forged' is not one of iio, fixture, demo"#),
            "\(daemon.standardError)")
    }

    @Test("an open set ends when no sample arrives for rest_to_end_set_s (the recording stops mid-set)")
    func setEndsWhenSamplesStop() throws {
        let dir = scratchDirectory()
        let workout = try WorkoutFixture(directory: dir, repsPerSet: [30], rest: 10, lead: 4)
        let cut = workout.reps[9].timestamp + 0.3
        let path = dir + "/cut.csv"
        try FixtureFileWriter.write(workout.samples.filter { $0.timestamp <= cut }, to: path)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--fixture", path, "--speed", "4", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        var reps = 0
        var finishedAt: Double?
        var setEnd: SetEvent?
        var setEndAt: Double?
        while setEnd == nil, let message = client.nextServerLine(timeout: 20) {
            switch message.event?.body {
            case .workout(.rep)?: reps += 1
            case .sensor(.finished, _)?: finishedAt = message.event?.wall
            case .workout(.setEnded(let end))?:
                setEnd = end
                setEndAt = message.event?.wall
            default: break
            }
        }
        // The daemon's own publishing times (`wall`), not when this test read the lines.
        let finished = try #require(finishedAt, "the recording ended")
        let waited = try #require(setEndAt, "a set_end arrived") - finished
        print("set_end \(waited) s after the recording ended")
        #expect(reps == 10)
        let end = try #require(setEnd, "a set_end arrived")
        #expect(end.setNumber == 1)
        #expect(end.repCount == reps)
        #expect(
            waited > 7 && waited < 20,
            "set_end came \(waited) s after the recording ended (rest_to_end_set_s 8; not before, and not never)")
        #expect(eventually(timeout: 15) { daemon.standardError.contains("no samples for 8 s: set 1 ended") })
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
