import Foundation
import MotionCore
import MotionFixtures
import MotionSimulation
import RepClient
import RepDetection
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A generated workout fixture with a still lead-in, and the rep events the detector finds in it.
struct WorkoutFixture {
    let path: String
    let reps: [RepEvent]
    let samples: [MotionSample]

    init(directory: String, repsPerSet: [Int] = [5, 6, 7], rest: Double = 12, lead: Double = 40, rate: Double = 50)
        throws
    {
        var generator = WorkoutGenerator()
        generator.repsPerSet = repsPerSet
        generator.sets = repsPerSet.count
        generator.restSeconds = rest
        generator.leadSeconds = lead
        generator.sampleRate = rate
        samples = generator.generate().samples
        path = directory + "/workout.csv"
        try FixtureFileWriter.write(samples, to: path)
        let service = RepDetectionService()
        var events = service.processBatch(samples)
        events += service.finish()
        reps = events.compactMap { if case .rep(let r) = $0 { r } else { nil } }
    }
}

@Suite("repd end to end", .serialized)
struct DaemonEndToEndTests {
    @Test("several clients each receive every rep, in order, with the right counts")
    func severalClients() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir)
        #expect(fixture.reps.count == 18)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "20", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let clients = (0..<3).compactMap { _ in LineClient(path: socketPath) }
        #expect(clients.count == 3)
        for client in clients {
            let hello = client.nextServerLine()?.hello
            #expect(hello?.protocolVersion == 1)
            #expect(hello?.sensor.kind == "fixture")
        }
        for (index, client) in clients.enumerated() {
            var received: [RepEvent] = []
            while received.count < fixture.reps.count, let rep = client.next(timeout: 15, { $0.rep }) {
                received.append(rep)
            }
            #expect(received.count == fixture.reps.count, "client \(index)")
            for (rep, expected) in zip(received, fixture.reps) {
                #expect(rep.setNumber == expected.setNumber)
                #expect(rep.repInSet == expected.repInSet)
                #expect(rep.totalReps == expected.totalReps)
                #expect(rep.timestamp == expected.timestamp)
            }
        }
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test("a client that never reads is disconnected while the others keep receiving every event")
    func stalledClient() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [8, 8], rest: 15, lead: 30, rate: 200)
        let config = dir + "/repd.toml"
        try "[socket]\nclient_queue_kib = 16\n".write(toFile: config, atomically: true, encoding: .utf8)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--config", config, "--fixture", fixture.path, "--speed", "10", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        // Shrink the stalled client's kernel receive buffer so its queue fills quickly.
        let stalled = try #require(LineClient(path: socketPath))
        var small: Int32 = 4096
        setsockopt(stalled.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        stalled.send("subscribe rep,set,sensor,samples\n")
        let healthy = try #require(LineClient(path: socketPath))

        var reps: [(ServerEvent, Double)] = []
        while reps.count < fixture.reps.count, let rep = healthy.next(timeout: 20, { $0.repEvent }) {
            reps.append((rep, Date().timeIntervalSince1970))
        }
        // Every rep reached the healthy client (each within the 20 s a read waits) while the other client stalled; how
        // long after the daemon published it is reported, not judged (a busy machine decides it; repd-bench measures
        // the fan-out's latency with a stalled client against a baseline).
        #expect(reps.count == fixture.reps.count)
        let lags = reps.map { $0.1 - $0.0.wall }
        print("a stalled client beside: the healthy client's lags \(lags.map { Int(($0 * 1000).rounded()) }) ms")
        #expect(eventually(timeout: 5) { daemon.standardError.contains("stopped reading") })
        // The stalled client finds its connection closed once it reads what was queued (closed, not only quiet: the
        // fixture has ended, so an open connection would be quiet too).
        #expect(stalled.closes(within: 30))
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test("garbage, unknown commands and oversized lines get error replies; status answers; others never notice")
    func badInput() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        let bystander = try #require(LineClient(path: socketPath))
        #expect(client.next(type: "hello") != nil)
        #expect(bystander.next(type: "hello") != nil)

        client.send("hello?\n")
        #expect(client.next { $0.errorMessage }?.contains("unknown command") == true)
        client.send("{\"cmd\":\"status\",\"extra\":1}\n")
        #expect(client.next { $0.errorMessage }?.contains("unknown field") == true)
        client.send("{\"cmd\":\n")
        #expect(client.next { $0.errorMessage }?.contains("malformed JSON") == true)
        client.send(String(decoding: [0xFF, 0xFE, 0x00, 0x41, 0x0A], as: UTF8.self))
        #expect(client.next(type: "error") != nil)

        client.send("{\"cmd\":\"status\"}\n")
        let status = try #require(client.next { $0.status })
        #expect(status.clients == 2)
        #expect(status.ringCapacity == 16384)
        #expect(status.sensor.kind == "demo")
        #expect(status.uptime >= 0)

        client.send("subscribe rep,set\n")
        let subscribed: Set<EventKind>? = client.next { if case .subscribed(let kinds, _) = $0 { kinds } else { nil } }
        #expect(subscribed == [.rep, .set])
        client.send("subscribe reps\n")
        #expect(client.next { $0.errorMessage }?.contains("unknown event type") == true)

        client.send(String(repeating: "x", count: 5000))
        #expect(client.next { $0.errorMessage }?.contains("longer than 4096") == true)
        #expect(client.closes(within: 10), "the connection closes after an oversized line")

        bystander.send("ping\n")
        #expect(bystander.next(type: "pong") != nil)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test("a client sending bad lines in a loop gets an error for each, but only its first 5 are logged")
    func badLinesAreNotAllLogged() throws {
        let socketPath = scratchDirectory() + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--journal", ""])
        #expect(daemonListens(socketPath))
        do {  // the client's connection closes at the end of this block
            let client = try #require(LineClient(path: socketPath))
            client.send(String(repeating: "bogus\n", count: 200))
            var errors = 0
            while errors < 200, client.next(type: "error") != nil { errors += 1 }
            #expect(errors == 200, "each bad line gets its error")
            client.send("ping\n")
            #expect(client.next(type: "pong") != nil)
        }
        #expect(eventually { daemon.standardError.contains("disconnected after 200 bad lines") })
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let logged = daemon.standardError.split(separator: "\n").filter { $0.contains("sent a bad line") }
        #expect(logged.count == 5, "\(logged.count) bad lines logged")
        #expect(daemon.standardError.contains("its further bad lines are not logged"))
    }

    @Test("SIGTERM during a set: the set is closed and announced, clients get bye, the socket goes, exit 0")
    func sigtermDuringSet() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [30], rest: 10, lead: 4)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--fixture", fixture.path, "--speed", "4", "--socket", socketPath])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        var reps = 0
        while reps < 4, client.next(type: "rep", timeout: 20) != nil { reps += 1 }
        #expect(reps == 4)
        daemon.signal(SIGTERM)
        var sawSetEnd = false
        var sawBye = false
        while let message = client.nextServerLine(timeout: 10) {
            if case .workout(.setEnded)? = message.event?.body { sawSetEnd = true }
            if message.isBye { sawBye = true }
        }
        #expect(sawSetEnd)
        #expect(sawBye)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
        #expect(access(socketPath, F_OK) != 0, "the socket file is removed")
        #expect(daemon.standardOutput.contains("ended"), "the terminal printout announces the set's end too")
    }

    @Test("SIGHUP is logged with how to apply a change, and repd goes on counting and serving")
    func sighupIsLoggedAndIgnored() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [30], rest: 10, lead: 4)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "4", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        #expect(client.next(type: "rep", timeout: 20) != nil)
        // The trap is set up by a service of its own: wait for its first log line, sending SIGHUP until it comes.
        #expect(
            eventually(timeout: 10) {
                daemon.signal(SIGHUP)
                return daemon.standardError.contains("SIGHUP: repd reads its configuration only when it starts")
            }, "\(daemon.standardError.suffix(4000))")
        #expect(daemon.process.isRunning, "SIGHUP did not end repd")
        var reps = 0
        while reps < 3, client.next(type: "rep", timeout: 20) != nil { reps += 1 }
        #expect(reps == 3, "the client keeps getting reps after SIGHUP")
        daemon.signal(SIGTERM)
        var sawBye = false
        while !sawBye, let message = client.nextServerLine(timeout: 10) { sawBye = message.isBye }
        #expect(sawBye)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test(
        "a file that is not a socket at the socket path is refused by --check-config and a start alike (exit 78), and left as it was"
    )
    func nonSocketAtSocketPath() throws {
        let dir = scratchDirectory()
        let file = dir + "/precious.txt"
        try "important data\n".write(toFile: file, atomically: true, encoding: .utf8)
        let link = dir + "/link.sock"
        #expect(symlink(file, link) == 0)
        for (path, kind) in [(file, "a regular file"), (link, "a symbolic link"), (dir, "a directory")] {
            let expected = "command line: --socket: '\(path)' exists and is \(kind), not a socket"
            let check = try DaemonProcess(arguments: ["--demo", "--socket", path, "--journal", "", "--check-config"])
            #expect(check.waitForExit() == 78)
            #expect(check.standardError.contains(expected), "\(check.standardError.suffix(2000))")
            let daemon = try DaemonProcess(arguments: ["--demo", "--socket", path, "--quiet", "--journal", ""])
            #expect(daemon.waitForExit() == 78)
            #expect(daemon.standardError.contains(expected), "\(daemon.standardError.suffix(2000))")
        }
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "important data\n")
        var info = stat()
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link is still there")
    }

    @Test("an empty --config is refused as the flag's fault (exit 64), not as a file named ''")
    func emptyConfigFlag() throws {
        let daemon = try DaemonProcess(arguments: ["--config", "", "--check-config"])
        #expect(daemon.waitForExit() == 64)
        #expect(daemon.standardError.contains("--config needs a file (it was empty)"), "\(daemon.standardError)")
    }

    @Test("a live socket blocks a second instance; a stale socket file is replaced")
    func secondInstance() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        // A stale socket: bound, then abandoned without unlink.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = withUnixAddress(socketPath) { bind(stale, $0, $1) }
        close(stale)
        #expect(access(socketPath, F_OK) == 0)

        let first = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"])
        #expect(eventually { LineClient(path: socketPath) != nil }, "the stale file was replaced and the socket serves")
        let second = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"])
        #expect(second.waitForExit() == 1)
        #expect(second.standardError.contains("another repd is already serving \(socketPath)"))
        #expect(first.process.isRunning)
        let client = try #require(LineClient(path: socketPath))
        #expect(client.next(type: "hello") != nil)
        first.signal(SIGINT)
        #expect(first.waitForExit() == 0, "\(String(first.standardError.suffix(12000)))")
    }

    @Test("a broken configuration exits 78 naming the key and line")
    func brokenConfiguration() throws {
        let dir = scratchDirectory()
        let config = dir + "/repd.toml"
        try "[sensor]\nprovider = \"demo\"\n\n[socket]\nmax_clients = 0\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config, "--check-config"])
        #expect(daemon.waitForExit() == 78)
        #expect(daemon.standardError.contains("\(config):5: socket.max_clients: 0 is not in 1…100000"))
        let good = try DaemonProcess(arguments: [
            "--config", documentedConfiguration, "--check-config",
        ])
        #expect(good.waitForExit() == 0, "\(String(good.standardError.suffix(12000)))")
    }

    @Test("a socket group missing on this system: --check-config and the daemon both exit 78 before anything starts")
    func missingSocketGroup() throws {
        let dir = scratchDirectory()
        let config = dir + "/repd.toml"
        try "[sensor]\nprovider = \"demo\"\n\n[socket]\ngroup = \"no-such-group-here\"\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let expected = "\(config):5: socket.group: no group 'no-such-group-here' on this system"
        let check = try DaemonProcess(arguments: ["--config", config, "--check-config"])
        #expect(check.waitForExit() == 78)
        #expect(check.standardError.contains(expected), "\(check.standardError)")
        let socketPath = dir + "/events.sock"
        let journal = dir + "/events.db"
        let daemon = try DaemonProcess(arguments: ["--config", config, "--socket", socketPath, "--journal", journal])
        #expect(daemon.waitForExit() == 78)
        #expect(daemon.standardError.contains(expected), "\(daemon.standardError)")
        #expect(access(socketPath, F_OK) != 0 && access(journal, F_OK) != 0, "no socket file, no journal left behind")
    }

    @Test(
        "--check-config and a start agree: a fixture provider without a file, a recording that cannot be replayed, and an uplink whose journal --journal '' turned off are refused by both with the file and line, or the flag",
        arguments: [
            ("[sensor]\nprovider = \"fixture\"\n", [String](), ":2: sensor.provider: \"fixture\" replays a recording"),
            ("", ["--fixture", "BAD"], "command line: --fixture: cannot replay it: BAD:3: ax: 'abc' is not a number"),
            (
                "[sensor]\nprovider = \"demo\"\n[uplink]\nenabled = true\nhost = \"127.0.0.1\"\n", ["--journal", ""],
                "command line: --journal: the uplink is enabled (uplink.enabled) and publishes the journal's events"
            ),
        ])
    func checkAgreesWithStart(file: String, flags: [String], expected: String) throws {
        let dir = scratchDirectory()
        let config = dir + "/repd.toml"
        try file.write(toFile: config, atomically: true, encoding: .utf8)
        let bad = dir + "/bad.csv"
        try "t,ax,ay,az\n0,0,0,1\n0.02,abc,0,1\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let arguments = ["--config", config] + flags.map { $0 == "BAD" ? bad : $0 }
        let wanted = expected.replacingOccurrences(of: "BAD", with: bad)
        let check = try DaemonProcess(arguments: arguments + ["--check-config"])
        #expect(check.waitForExit() == 78)
        #expect(check.standardError.contains(wanted), "\(check.standardError)")
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: arguments + ["--socket", socketPath])
        #expect(daemon.waitForExit() == 78)
        #expect(daemon.standardError.contains(wanted), "\(daemon.standardError)")
        #expect(access(socketPath, F_OK) != 0, "nothing started")
    }

    @Test("--version prints the build's version, the one hello and status carry")
    func version() throws {
        let printed = try DaemonProcess(arguments: ["--version"])
        #expect(printed.waitForExit() == 0)
        #expect(printed.standardOutput == repdVersion + "\n")
        #expect(
            repdVersion == baseVersion, "a plain swift build is given no version (scripts/package checks a given one)")
        let socketPath = scratchDirectory() + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        #expect(client.next(timeout: 15, { $0.hello })?.version == repdVersion)
        client.send("status\n")
        #expect(client.next(type: "status")?["version"]?.stringValue == repdVersion)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test(
        "--check-config names the placement and the exercise gate's state, and warns when a file keeps the gate on a bar"
    )
    func checkConfigNamesTheGate() throws {
        let dir = scratchDirectory()
        let bar = dir + "/bar.toml"
        try "[detector]\nplacement = \"bar\"\n".write(toFile: bar, atomically: true, encoding: .utf8)
        let off = try DaemonProcess(arguments: ["--config", bar, "--check-config"])
        #expect(off.waitForExit() == 0, "\(off.standardError)")
        #expect(off.standardOutput.contains("placement bar, exercise gate off"), "\(off.standardOutput)")
        #expect(!off.standardOutput.contains("warning"), "\(off.standardOutput)")

        // A repd.toml of before the bar's default changed sets the gate's threshold; given placement = "bar" it keeps
        // the gate on, and repd says so.
        let old = dir + "/old.toml"
        try "[detector]\nplacement = \"bar\"\nminimum_exercise_likelihood = 0.2\n".write(
            toFile: old, atomically: true, encoding: .utf8)
        let on = try DaemonProcess(arguments: ["--config", old, "--check-config"])
        #expect(on.waitForExit() == 0, "\(on.standardError)")
        #expect(
            on.standardOutput.contains("placement bar, exercise gate on (minimum_exercise_likelihood 0.2)"),
            "\(on.standardOutput)")
        #expect(on.standardOutput.contains("repd: warning: placement = \"bar\" with minimum_exercise_likelihood"))

        let wrist = try DaemonProcess(arguments: [
            "--config", documentedConfiguration, "--check-config",
        ])
        #expect(wrist.waitForExit() == 0, "\(wrist.standardError)")
        #expect(
            wrist.standardOutput.contains("placement wrist, exercise gate on (minimum_exercise_likelihood 0.2)"),
            "\(wrist.standardOutput)")
    }
}
