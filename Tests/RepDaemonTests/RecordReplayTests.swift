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

/// Reads rep events from a daemon until `count` arrived or the timeout passed.
func collectReps(_ client: LineClient, count: Int, timeout: Double = 30) -> [RepEvent] {
    var reps: [RepEvent] = []
    let deadline = Date().addingTimeInterval(timeout)
    while reps.count < count, Date() < deadline,
        let message = client.nextServerLine(timeout: max(0.1, deadline.timeIntervalSinceNow))
    {
        if case .event(let event) = message, case .workout(.rep(let rep)) = event.body { reps.append(rep) }
    }
    return reps
}

@Suite("repctl record, replay, subscribe, status", .serialized)
struct RecordReplayTests {
    let repctl = productsDirectory + "/repctl"

    @Test(
        "recording from the daemon and replaying the recording gives the same reps, each within one grid step of its time"
    )
    func roundTrip() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [6, 8], rest: 10, lead: 8)
        let socketPath = dir + "/live.sock"
        let daemon = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "8", "--socket", socketPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let watcher = try #require(LineClient(path: socketPath))
        let duration = (fixture.samples.last!.timestamp - fixture.samples.first!.timestamp) / 8
        let recording = dir + "/recorded.csv"
        let recorder = try DaemonProcess(
            executable: repctl,
            arguments: ["record", "--socket", socketPath, "--out", recording, "--duration", "\(duration)s", "--quiet"])
        let live = collectReps(watcher, count: fixture.reps.count)
        #expect(recorder.waitForExit(timeout: duration + 20) == 0, "\(recorder.standardError)")
        #expect(live.count == fixture.reps.count)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")

        let recorded = try FixtureFileReader.read(path: recording)
        #expect(recorded.count > fixture.samples.count * 9 / 10, "the recording holds (nearly) the whole replay")
        let replaySocket = dir + "/replay.sock"
        let replay = try DaemonProcess(arguments: [
            "--fixture", recording, "--speed", "10", "--socket", replaySocket, "--quiet",
        ])
        #expect(daemonListens(replaySocket))
        let client = try #require(LineClient(path: replaySocket))
        let replayed = collectReps(client, count: live.count)
        #expect(replayed.count == live.count)
        // The detector places reps on its 25 Hz grid (40 ms); the recording starts a little after the live stream,
        // so its filters start from another sample and a rep may land one grid step away.
        let step = 0.04 + 1e-9
        for (a, b) in zip(live, replayed) {
            #expect(a.totalReps == b.totalReps)
            #expect(abs(a.timestamp - b.timestamp) <= step, "same rep time within one grid step")
        }
        replay.signal(SIGTERM)
        #expect(replay.waitForExit() == 0, "\(String(replay.standardError.suffix(12000)))")
    }

    @Test("Ctrl-C during record leaves a complete, valid CSV and no partial file")
    func interruptedRecording() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"])
        #expect(daemonListens(socketPath))
        let out = dir + "/interrupted.csv"
        let recorder = try DaemonProcess(
            executable: repctl, arguments: ["record", "--socket", socketPath, "--out", out])
        #expect(
            eventually {
                let last = recorder.standardError.components(separatedBy: "\r").last ?? ""
                return last.contains("samples ·") && !last.contains(" 0 samples ·")
            })
        recorder.signal(SIGINT)
        #expect(recorder.waitForExit() == 0, "\(String(recorder.standardError.suffix(12000)))")
        #expect(recorder.standardOutput.contains("stopped (Ctrl-C)"))
        let samples = try FixtureFileReader.read(path: out)
        #expect(samples.count > 10)
        #expect(access(out + ".partial", F_OK) != 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test("repctl subscribe survives a daemon restart and says so")
    func subscribeSurvivesRestart() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        var daemon = try DaemonProcess(arguments: ["--demo", "--speed", "10", "--socket", socketPath, "--quiet"])
        #expect(daemonListens(socketPath))
        let subscriber = try DaemonProcess(executable: repctl, arguments: ["subscribe", "--socket", socketPath])
        #expect(eventually { subscriber.standardOutput.contains("· rep ") })
        // The demo's name says its kind: once, not "demo: demo workout".
        #expect(subscriber.standardOutput.contains("(demo workout)\n"), "\(subscriber.standardOutput)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
        #expect(eventually { subscriber.standardError.contains("repd went away; reconnecting") })
        let before = subscriber.standardOutput.components(separatedBy: "connected to repd").count
        daemon = try DaemonProcess(arguments: ["--demo", "--speed", "10", "--socket", socketPath, "--quiet"])
        #expect(eventually { subscriber.standardError.contains("reconnected to \(socketPath)") })
        #expect(eventually { subscriber.standardOutput.components(separatedBy: "connected to repd").count > before })
        let repsBefore = subscriber.standardOutput.components(separatedBy: " · rep ").count
        #expect(
            eventually(timeout: 40) { subscriber.standardOutput.components(separatedBy: " · rep ").count > repsBefore },
            "reps from the new daemon arrive")
        subscriber.signal(SIGINT)
        #expect(subscriber.waitForExit() == 0, "\(String(subscriber.standardError.suffix(12000)))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test("repctl status reads the daemon; without a daemon it says none listens and how to start one")
    func status() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let missing = try DaemonProcess(executable: repctl, arguments: ["status", "--socket", socketPath])
        #expect(missing.waitForExit() == 1)
        #expect(missing.standardError.contains("no repd is listening on \(socketPath)"))
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"])
        #expect(daemonListens(socketPath))
        let status = try DaemonProcess(executable: repctl, arguments: ["status", "--socket", socketPath])
        #expect(status.waitForExit() == 0, "\(String(status.standardError.suffix(12000)))")
        #expect(status.standardOutput.contains("sensor   demo workout: connected, 50.0 Hz"), "\(status.standardOutput)")
        #expect(status.standardOutput.contains("ring     capacity 16384, dropped 0 batches"))
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }
}

@Suite("fixture files reach the disk")
struct FixtureDurabilityTests {
    @Test(
        "the fixture writer fsyncs the file before renaming it, and its folder after (strace of repctl generate)",
        .enabled(if: which("strace") != nil, "needs strace (scripts/install-deps test installs it)"))
    func fsyncBeforeRename() throws {
        let dir = scratchDirectory()
        let trace = dir + "/trace"
        let out = dir + "/sine.csv"
        // LeakSanitizer cannot run under ptrace (the ASan CI pass)
        let run = try DaemonProcess(
            executable: which("strace")!,
            arguments: [
                "-f", "-o", trace, "-e", "trace=openat,fsync,fdatasync,rename,renameat,renameat2",
                productsDirectory + "/repctl", "generate", "sine", "--out", out,
            ], environment: ["ASAN_OPTIONS": "detect_leaks=0"])
        #expect(run.waitForExit() == 0, "\(run.standardError)")
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        // The descriptor openat returned for the .partial file, and for the folder opened after the rename.
        func descriptor(_ line: String) -> String? {
            line.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let open = try #require(lines.firstIndex { $0.contains("openat(") && $0.contains("sine.csv.partial") })
        let rename = try #require(lines.firstIndex { $0.contains("rename") && $0.contains("sine.csv.partial") })
        let fileFD = try #require(descriptor(lines[open]))
        #expect(lines[open..<rename].contains { $0.contains("fsync(\(fileFD))") }, "\(lines[open...])")
        let folderOpen = lines[rename...].firstIndex { $0.contains("openat(") && $0.contains("\"\(dir)\"") }
        let folderFD = try #require(
            folderOpen.flatMap { descriptor(lines[$0]) }, "the folder is opened after the rename: \(lines[rename...])")
        #expect(lines[rename...].contains { $0.contains("fsync(\(folderFD))") }, "\(lines[rename...])")
    }
}
