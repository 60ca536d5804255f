import Foundation
import MotionFixtures
import PlainText
import RepClient
import RepJournal
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A journal file deleted or replaced while repd runs: repd goes over to the file at the journal's path, as a restart
/// would, tells its clients `bye`, and loses nothing (before 2026-12-07 it wrote on into a file nobody could open,
/// lost at its next start, until it was restarted).
@Suite("the journal file deleted or replaced while repd runs", .serialized)
struct JournalFollowTests {
    /// A repd replaying the demo workout in a loop at 50 times its speed (a rep every 60 ms or so) into `journal`.
    private func loopingDaemon(_ dir: String, journal: String) throws -> (DaemonProcess, String) {
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--speed", "50", "--socket", socketPath, "--journal", journal,
        ])
        #expect(daemonListens(socketPath))
        return (daemon, socketPath)
    }

    /// The lines `client` reads until one carries an id of at least `id` (included); nil when none does in 30 s.
    private func lines(_ client: LineClient, untilID id: Int64) -> [String]? {
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(30)
        while let line = client.nextLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            lines.append(line)
            if let got = (try? ServerLine.parse(line))?.eventID, got >= id { return lines }
        }
        return nil
    }

    /// A rep line's `total`, nil for other lines.
    private func repTotal(_ line: String) -> Int? {
        guard let message = try? JSONParser.parse(line), message["type"]?.stringValue == "rep" else { return nil }
        return message["total"]?.int
    }

    @Test(
        "rm events.db while repd runs: repd starts a new journal there with the next event, says bye to its clients after the last event of the old file, and a resuming subscriber (repctl subscribe) prints every rep once, none missing"
    )
    func deletedJournalStartsANewOne() throws {
        let dir = scratchDirectory()
        let journal = dir + "/events.db"
        let (daemon, socketPath) = try loopingDaemon(dir, journal: journal)
        let printer = try DaemonProcess(
            executable: productsDirectory + "/repctl", arguments: ["subscribe", "--socket", socketPath, "--json"])
        let client = try #require(LineClient(path: socketPath))
        let before = try #require(client.next { $0.hello }?.journal)
        client.send("subscribe since=0\n")
        let early = try #require(lines(client, untilID: 5))
        // repctl subscribe is connected to the old file (it printed a rep of it) before the file goes: started slowly
        // (under ThreadSanitizer in CI) it once connected only after, never saw the change, and said nothing of it.
        func printed() -> [Int] { printer.standardOutput.split(separator: "\n").compactMap { repTotal(String($0)) } }
        #expect(eventually(timeout: 30) { !printed().isEmpty }, "\(printer.standardError)")
        #expect(unlink(journal) == 0)  // as `rm` does: the -wal and -shm beside it stay

        // The client gets the old file's events, then bye, then the end of the connection: no line after bye.
        let late = try #require(client.linesUntilClose(within: 30), "repd closes the connection")
        let messages = late.compactMap { try? ServerLine.parse($0) }
        let byeAt = try #require(messages.firstIndex { if case .bye = $0 { true } else { false } }, "\(late)")
        if case .bye(let reason) = messages[byeAt] { #expect(reason == "journal replaced") }
        #expect(byeAt == messages.count - 1, "nothing after bye: \(late.suffix(3))")
        let oldTotals = (early + late).compactMap(repTotal)

        // A new file at the path, with a new identity and ids from 1, whose first rep follows the old file's last.
        let after = try #require(LineClient(path: socketPath))
        let hello = try #require(after.next { $0.hello })
        let identity = try #require(hello.journal)
        #expect(identity != before)
        after.send("history after=0 limit=200\n")
        let history = try #require(after.next(type: "history", timeout: 10))
        guard case .array(let events)? = history["events"] else {
            Issue.record("no events in \(history)")
            return
        }
        #expect(events.first?["id"]?.int == 1, "\(events.prefix(2))")
        let newTotals = events.compactMap { $0["type"]?.stringValue == "rep" ? $0["total"]?.int : nil }
        let lastOld = try #require(oldTotals.last)
        #expect(newTotals.first == lastOld + 1, "old file up to rep \(lastOld), new file from \(newTotals.prefix(3))")
        after.send("status\n")
        let status = try #require(after.next { $0.status }?.journal)
        #expect(status.writing && status.error == nil, "\(status)")

        // repctl subscribe reconnected, saw another journal, and printed the new file from its start.
        #expect(eventually(timeout: 30) { (printed().last ?? 0) >= lastOld + 10 }, "\(printer.standardError)")
        printer.signal(SIGINT)
        _ = printer.waitForExit()
        let printed = printed()
        let first = try #require(printed.first)
        #expect(printed == Array(first..<(first + printed.count)), "every rep once, in order: \(printed)")
        #expect(printer.standardError.contains("repd went away; reconnecting"), "\(printer.standardError)")

        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.standardError.suffix(3000))")
        #expect(
            daemon.standardError.contains("journal: \(journal) was deleted while repd runs (at event id"),
            "\(daemon.standardError.suffix(3000))")
        #expect(daemon.standardError.contains("clients are told bye"))
        // The new file is the journal a restart opens: its identity, its events.
        let reopened = try EventJournal(path: journal, station: "test", handsOutIDs: false)
        defer { reopened.close() }
        #expect(reopened.identity == identity)
        #expect(try reopened.newestID >= Int64(events.count))
    }

    @Test(
        "a backup of the journal put back with mv while repd runs: repd goes over to it at once, with its identity; new ids come after every id handed out, so none is sent twice"
    )
    func backupPutBackIsTaken() throws {
        let python = try #require(which("python3"))
        let dir = scratchDirectory()
        let journal = dir + "/events.db"
        let backup = dir + "/backup.db"
        let (daemon, socketPath) = try loopingDaemon(dir, journal: journal)
        let client = try #require(LineClient(path: socketPath))
        let identity = try #require(client.next { $0.hello }?.journal)
        client.send("subscribe since=0\n")
        #expect(lines(client, untilID: 5) != nil)
        // SQLite's online backup, as `sqlite3 events.db ".backup backup.db"` makes one.
        let saved = try runTool(
            python,
            [
                "-c",
                "import sqlite3, sys\nsource = sqlite3.connect(sys.argv[1])\ntarget = sqlite3.connect(sys.argv[2])\n"
                    + "source.backup(target)\nprint(target.execute('SELECT max(id) FROM events').fetchone()[0])\n",
                journal, backup,
            ])
        let backupNewest = try #require(Int(saved.trimmingCharacters(in: .whitespacesAndNewlines)))
        let early = try #require(lines(client, untilID: Int64(backupNewest) + 5))
        #expect(rename(backup, journal) == 0)
        let late = try #require(client.linesUntilClose(within: 30), "repd closes the connection")
        let sentIDs: [Int64] = (early + late).compactMap { line in (try? ServerLine.parse(line))?.eventID }
        let lastSent = try #require(sentIDs.last)

        let after = try #require(LineClient(path: socketPath))
        let hello = try #require(after.next { $0.hello })
        #expect(hello.journal == identity, "the backup is the same journal")
        after.send("subscribe since=\(lastSent)\n")
        let next = try #require(after.next(timeout: 30) { $0.eventID })
        #expect(next > lastSent, "ids go on after \(lastSent), the newest sent: \(next)")
        after.send("status\n")
        let status = try #require(after.next { $0.status }?.journal)
        #expect(status.writing, "\(status)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(daemon.standardError.contains("was replaced by another file while repd runs"))
        #expect(
            daemon.standardError.contains("an older copy of the file was put back"),
            "\(daemon.standardError.suffix(3000))")
    }

    @Test(
        "the journal's folder removed while repd runs: repd writes on into the old file and status says why, logged once; once the folder is back, repd starts a new journal there"
    )
    func folderGoneThenBack() throws {
        let root = scratchDirectory()
        let folder = root + "/state"
        #expect(mkdir(folder, 0o755) == 0)
        let journal = folder + "/events.db"
        let (daemon, socketPath) = try loopingDaemon(root, journal: journal)
        let client = try #require(LineClient(path: socketPath))
        client.send("subscribe since=0\n")
        #expect(client.next(timeout: 30) { ($0.eventID ?? 0) >= 3 ? true : nil } != nil)
        // Moved away first: an event between deleting its files and removing it would start a new journal in it.
        let gone = root + "/state.gone"
        #expect(rename(folder, gone) == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: gone) { unlink(gone + "/" + name) }
        #expect(rmdir(gone) == 0, "\(String(cString: strerror(errno)))")
        var status: ServerMessage.JournalStatus?
        func ask() -> ServerMessage.JournalStatus? {
            status = statusNow(socketPath)?.journal
            return status
        }
        #expect(
            eventually(timeout: 10) { ask()?.error?.contains("its folder \(folder) is gone too") == true },
            "\(String(describing: status))")
        #expect(status?.writing == false)
        #expect(mkdir(folder, 0o755) == 0)
        #expect(eventually(timeout: 10) { ask()?.writing == true }, "\(String(describing: status))")
        #expect(access(journal, F_OK) == 0, "a new journal in the folder")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let logged = daemon.standardError.split(separator: "\n").filter { $0.contains("is gone too") }
        #expect(logged.count == 1, "logged once: \(logged)")
    }

    @Test(
        "repctl record goes on across a journal file deleted while it records: it connects again after repd's bye, says so, and the file holds samples from before and after the pause, in order"
    )
    func recordGoesOnAcrossAJournalChange() throws {
        let dir = scratchDirectory()
        let journal = dir + "/events.db"
        let (daemon, socketPath) = try loopingDaemon(dir, journal: journal)
        let out = dir + "/recorded.csv"
        let recorder = try DaemonProcess(
            executable: productsDirectory + "/repctl", arguments: ["record", "--socket", socketPath, "--out", out])
        // The progress line's sample count, once it shows some.
        func recorded() -> Int? {
            let last = recorder.standardError.components(separatedBy: "\r").last ?? ""
            guard let field = last.components(separatedBy: " · ").first(where: { $0.hasSuffix(" samples") }) else {
                return nil
            }
            return Int(field.dropLast(" samples".count)).flatMap { $0 > 0 ? $0 : nil }
        }
        // Some samples before the change (the first progress line may show only a few).
        #expect(eventually(timeout: 30) { (recorded() ?? 0) >= 100 }, "\(recorder.standardError)")
        #expect(unlink(journal) == 0)
        let note = "repctl: repd went over to a new journal file (the old one was deleted or replaced); connected again"
        #expect(eventually(timeout: 30) { recorder.standardError.contains(note) }, "\(recorder.standardError)")
        // Samples after the reconnection: the progress line's count grows by 200 after the note.
        let atNote = try #require(recorded())
        #expect(eventually(timeout: 30) { (recorded() ?? 0) > atNote + 200 }, "\(recorder.standardError)")
        recorder.signal(SIGINT)
        #expect(recorder.waitForExit(timeout: 30) == 0, "\(recorder.standardError.suffix(2000))")
        let said = recorder.standardOutput
        let prefix =
            "stopped (Ctrl-C) (repd's journal file was replaced once meanwhile: repctl connected again and recorded "
            + "on; the samples pause for up to "
        let pause = try #require(
            said.components(separatedBy: prefix).dropFirst().first?.split(separator: " ").first.flatMap { Double($0) },
            "\(said)")
        let times = try FixtureFileReader.read(path: out).map(\.timestamp)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "timestamps in order")
        // The pause it names is in the file (to its printed millisecond), with samples on both sides of it.
        let named = times.indices.dropLast().filter { abs(times[$0 + 1] - times[$0] - pause) < 0.0006 }
        #expect(
            named.contains { $0 >= 10 && times.count - $0 > 10 },
            "a pause of \(pause) s after samples \(named) of \(times.count)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.standardError.suffix(3000))")
        #expect(daemon.standardError.contains("clients are told bye"), "\(daemon.standardError.suffix(3000))")
    }
}
