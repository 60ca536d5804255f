import Foundation
import RepClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `repctl subscribe` and `repctl status` as scripts meet them: a pipe that closes, an id from another journal file,
/// no repd, a repd that refuses the connection.
@Suite("repctl subscribe and status in scripts")
struct RepctlSubscribeTests {
    let repctl = productsDirectory + "/repctl"

    /// repd on the demo workout, looped at `speed` times real time, without a journal; listening when it returns.
    private func loopingDemo(speed: Int) throws -> (DaemonProcess, String) {
        let socketPath = scratchDirectory() + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--speed", "\(speed)", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        return (daemon, socketPath)
    }

    @Test(
        "repctl subscribe | head -1 ends once head has gone (status 141), instead of running on against a closed pipe")
    func endsWhenItsOutputCloses() throws {
        let (daemon, socketPath) = try loopingDemo(speed: 10)
        let pipeline = try DaemonProcess(
            executable: "/bin/bash",
            arguments: ["-c", "set -o pipefail; '\(repctl)' subscribe --socket '\(socketPath)' --json | head -1"])
        // hello goes to head at once; the next event (the demo at 10x sends one within seconds) finds the pipe closed.
        let status = pipeline.waitForExit(timeout: 30)
        #expect(status == 141, "\(String(describing: status)): \(pipeline.standardError)")
        #expect(pipeline.standardOutput.hasPrefix(#"{"type":"hello""#), "\(pipeline.standardOutput)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "repctl subscribe | head -1 ends within seconds on a station with nothing more to say (the closed pipe is seen without a write), and a full disk is an error, not 141"
    )
    func endsWhenItsOutputClosesWhileIdle() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [2], lead: 2)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "20", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        client.send("subscribe sensor\n")
        #expect(client.next(timeout: 30, { $0.sensorState == .finished ? true : nil }) != nil, "the recording ended")
        let pipeline = try DaemonProcess(
            executable: "/bin/bash",
            arguments: ["-c", "set -o pipefail; '\(repctl)' subscribe --socket '\(socketPath)' --events rep | head -1"])
        let status = pipeline.waitForExit(timeout: 20)
        #expect(status == 141, "\(String(describing: status)): \(pipeline.standardError)")
        #expect(pipeline.standardOutput.hasPrefix("connected to repd"), "\(pipeline.standardOutput)")

        let full = try DaemonProcess(
            executable: "/bin/bash", arguments: ["-c", "'\(repctl)' subscribe --socket '\(socketPath)' > /dev/full"])
        #expect(full.waitForExit(timeout: 20) == 1)
        #expect(
            full.standardError.contains("cannot write to standard output: No space left on device"),
            "\(full.standardError)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "repctl subscribe --since above the journal's newest id (an id of a replaced file) prints this journal from its start, then live events"
    )
    func sinceAboveNewestPrintsTheJournal() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [4], lead: 5)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "10", "--socket", socketPath, "--journal", dir + "/events.db",
            "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let subscriber = try DaemonProcess(
            executable: repctl, arguments: ["subscribe", "--socket", socketPath, "--since", "99999999", "--json"])
        func printed() -> [ServerLine] {
            subscriber.standardOutput.split(separator: "\n").compactMap { try? ServerLine.parse(String($0)) }
        }
        #expect(
            eventually(timeout: 30) { printed().filter { $0.rep != nil }.count == 4 },
            "\(subscriber.standardOutput)\n\(subscriber.standardError)")
        subscriber.signal(SIGINT)
        #expect(subscriber.waitForExit() == 0)
        let ids = printed().compactMap { $0.eventID.map(Int.init) }
        #expect(ids == Array(1...max(1, ids.count)), "from the journal's first id, each once: \(ids)")
        #expect(
            subscriber.standardError.contains(
                "--since 99999999 is above the newest event id in repd's journal"),
            "\(subscriber.standardError)")
        #expect(!subscriber.standardOutput.contains(#""type":"error""#), "repctl did not ask repd for it")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "repctl subscribe ends cleanly on SIGHUP (the terminal closed), but keeps running under nohup, which ignores it",
        .enabled(if: access("/usr/bin/nohup", X_OK) == 0 && access("/usr/bin/env", X_OK) == 0, "needs nohup and env"))
    func hangupUnlessNohup() throws {
        let (daemon, socketPath) = try loopingDemo(speed: 4)
        // The test runner's children may inherit SIGHUP ignored: start the plain one with it at its default.
        let plain = try DaemonProcess(
            executable: "/usr/bin/env",
            arguments: ["--default-signal=HUP", repctl, "subscribe", "--socket", socketPath])
        let underNohup = try DaemonProcess(
            executable: "/usr/bin/nohup", arguments: [repctl, "subscribe", "--socket", socketPath])
        #expect(
            eventually(timeout: 20) {
                plain.standardOutput.contains(" · rep ") && underNohup.standardOutput.contains(" · rep ")
            })
        plain.signal(SIGHUP)
        underNohup.signal(SIGHUP)
        #expect(plain.waitForExit() == 0, "SIGHUP ends it like Ctrl-C: \(plain.standardError)")
        let printed = underNohup.standardOutput.count
        #expect(eventually(timeout: 15) { underNohup.standardOutput.count > printed }, "still printing after SIGHUP")
        underNohup.signal(SIGINT)
        #expect(underNohup.waitForExit() == 0, "\(underNohup.standardError)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("repctl subscribe --json with no repd says why on stderr and exits 1 (stdout stays empty)")
    func noDaemonIsSaidInJSONMode() throws {
        let dir = scratchDirectory()
        let subscriber = try DaemonProcess(
            executable: repctl, arguments: ["subscribe", "--socket", dir + "/none.sock", "--json"])
        #expect(subscriber.waitForExit() == 1)
        #expect(
            subscriber.standardError.contains("no repd is listening on \(dir)/none.sock"), "\(subscriber.standardError)"
        )
        #expect(subscriber.standardOutput.isEmpty)
    }

    @Test("repctl subscribe --events '' is refused before connecting (exit 64)")
    func emptyEventListIsRefused() throws {
        let subscriber = try DaemonProcess(executable: repctl, arguments: ["subscribe", "--events", ""])
        #expect(subscriber.waitForExit() == 64)
        #expect(
            subscriber.standardError.contains("--events needs at least one event type"), "\(subscriber.standardError)")
    }

    @Test(
        "repd refusing a client (max_clients): repctl status prints repd's reason, and repctl subscribe backs off (0.5, 1, 2, 4 s) until a slot frees, then prints events"
    )
    func refusedClientsBackOff() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let config = dir + "/repd.toml"
        try "[socket]\nmax_clients = 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: [
            "--config", config, "--demo", "--loop", "--speed", "10", "--socket", socketPath, "--journal", "",
            "--quiet",
        ])
        #expect(daemonListens(socketPath))
        var holder = LineClient(path: socketPath)  // the one slot
        #expect(holder?.next { $0.hello } != nil)

        let status = try DaemonProcess(executable: repctl, arguments: ["status", "--socket", socketPath])
        #expect(status.waitForExit() == 1)
        #expect(
            status.standardError.contains("repd answered: too many clients (1); try again later"),
            "\(status.standardError)")

        let started = Date()
        let subscriber = try DaemonProcess(executable: repctl, arguments: ["subscribe", "--socket", socketPath])
        // Refused at 0, 0.5, 1.5 and 3.5 s: the waits it announces double, and the fourth refusal comes no sooner
        // than the first three waits allow (a busy machine only makes it later; a retry every 0.5 s would be there
        // after 1.5 s).
        #expect(
            eventually(timeout: 30) { subscriber.standardError.contains("retrying in 4.0 s") },
            "\(subscriber.standardError)")
        let fourthRefusal = Date().timeIntervalSince(started)
        let announced = subscriber.standardError.components(
            separatedBy: "repd answered: too many clients (1); try again later; retrying in "
        )
        .dropFirst().map { $0.prefix { $0 != " " } }
        #expect(announced.prefix(4) == ["0.5", "1.0", "2.0", "4.0"], "\(subscriber.standardError)")
        #expect(fourthRefusal >= 3.5, "the fourth refusal after \(fourthRefusal) s")
        #expect(!subscriber.standardError.contains("repd went away"), "never connected: \(subscriber.standardError)")
        holder = nil  // the slot frees
        #expect(
            eventually(timeout: 30) { subscriber.standardOutput.contains("· rep ") },
            "\(subscriber.standardOutput)\n\(subscriber.standardError)")
        subscriber.signal(SIGINT)
        #expect(subscriber.waitForExit() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
