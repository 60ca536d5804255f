import Foundation
import RepClient
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A journal row damaged on the disk (a cut-off or otherwise broken JSON text) is answered as
/// `{"type":"damaged",...}` with its id, by `history`, a replay and the uplink alike: repd trapped on it before. A
/// journal file replaced while repd runs is not damaged by what repd leaves behind.
@Suite(
    "damaged and replaced journal files", .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs python3 to damage a row"))
struct DamagedJournalTests {
    @Test(
        "history and subscribe since over a row whose JSON is cut off: valid lines, the row as damaged with its id, and repd serves on"
    )
    func damagedRow() throws {
        let dir = scratchDirectory()
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [5], lead: 10)
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let first = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "20", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let watcher = try #require(LineClient(path: socketPath))
        watcher.send("subscribe since=0\n")
        #expect(watcher.next(type: "set_end", timeout: 30) != nil)
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        // Row 4 (a rep) cut off mid-member, as a torn write or a bad sector leaves it.
        try runTool(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"update events set json = '{\\\"type\\\":\\\"rep\\\",\\\"set\\\":1,\\\"rep' where id = 4\"); c.commit()",
                journalPath,
            ])

        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        client.send("history after=2 limit=4\n")
        let history = try #require(client.next(type: "history", timeout: 10), "a valid history reply")
        guard case .array(let events)? = history["events"] else {
            Issue.record("no events in \(history)")
            return
        }
        try #require(events.map { $0["id"]?.int } == [3, 4, 5, 6])
        #expect(events[1]["type"]?.stringValue == "damaged" && events[1]["of"]?.stringValue == "rep", "\(events[1])")
        #expect(events[2]["type"]?.stringValue != "damaged")
        // A replay over it: every line parses, the row's id comes as damaged, the rest as they were.
        client.send("subscribe since=2\n")
        var replayed: [(Int, String)] = []
        var subscribed = false  // live events of the looping demo may come before the reply: not the replay
        while let line = client.nextLine(timeout: 10) {
            let message = try JSONParser.parse(line)
            if message["type"]?.stringValue == "subscribed" { subscribed = true }
            if subscribed, let id = message["id"]?.int, let type = message["type"]?.stringValue {
                replayed.append((id, type))
            }
            if replayed.contains(where: { $0.0 >= 6 }) { break }
        }
        #expect(replayed.prefix(4).map(\.0) == [3, 4, 5, 6], "\(replayed)")
        #expect(replayed.first { $0.0 == 4 }?.1 == "damaged", "\(replayed)")
        client.send("ping\n")
        #expect(client.next(type: "pong", timeout: 10) != nil, "repd still serves")
        // repctl reads such a reply, and says what the row is.
        let printed = try runTool(
            productsDirectory + "/repctl", ["history", "--socket", socketPath, "--since", "2", "--before", "7"])
        #expect(printed.contains("an event (rep) damaged in repd's journal"), "\(printed)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.standardError.suffix(2000))")
        #expect(!daemon.standardError.contains("Precondition failed"))
    }

    @Test(
        "another repd's journal moved over the journal with mv while repd runs: repd goes over to it at once and reads it whole (the old file's write-ahead log is not applied to it), and so does a restart"
    )
    func replacedWhileRunning() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let backup = dir + "/backup.db"
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [4], lead: 10)
        let maker = try DaemonProcess(arguments: [
            "--fixture", fixture.path, "--speed", "20", "--socket", socketPath, "--journal", backup, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let makerClient = try #require(LineClient(path: socketPath))
        let backupIdentity = try #require(makerClient.next { $0.hello }?.journal)
        #expect(makerClient.next(timeout: 30, { $0.sensorState == .finished ? true : nil }) != nil)
        maker.signal(SIGTERM)
        #expect(maker.waitForExit() == 0)

        let running = try DaemonProcess(arguments: [
            "--demo", "--loop", "--speed", "50", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let watcher = try #require(LineClient(path: socketPath))
        watcher.send("subscribe since=0\n")
        #expect(watcher.next(type: "rep", timeout: 30) != nil)
        #expect(rename(backup, journalPath) == 0)
        #expect(watcher.closes(within: 30), "told bye: its ids came from the other file")
        // Whole while repd runs: the backup's events as it holds them, then the new ones after them.
        func readWhole(_ what: String) throws {
            let client = try #require(LineClient(path: socketPath))
            let hello = try #require(client.next { $0.hello })
            #expect(hello.journal == backupIdentity, "\(what): the file put there")
            client.send("history after=0 limit=200\n")
            let history = try #require(client.next(type: "history", timeout: 10))
            guard case .array(let events)? = history["events"] else {
                Issue.record("\(what): no events in \(history)")
                return
            }
            let ids = events.compactMap { $0["id"]?.int }
            #expect(!ids.isEmpty && ids == Array(1...ids.count), "\(what): \(ids)")
            #expect(events.allSatisfy { $0["type"]?.stringValue != "damaged" }, "\(what): \(events)")
            #expect(events.filter { $0["type"]?.stringValue == "rep" }.count >= 4, "\(what): the backup's 4 reps")
        }
        let status = try #require(LineClient(path: socketPath))
        status.send("status\n")
        #expect(status.next { $0.status }?.journal?.writing == true)
        try readWhole("while repd runs")
        running.signal(SIGTERM)
        #expect(running.waitForExit() == 0)
        #expect(running.standardError.contains("was replaced by another file while repd runs"))

        let restarted = try DaemonProcess(arguments: [
            "--demo", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        try readWhole("after a restart")
        restarted.signal(SIGTERM)
        #expect(restarted.waitForExit() == 0)
        #expect(!restarted.standardError.contains("malformed"), "\(restarted.standardError.suffix(2000))")
    }

    @Test(
        "another program's database named as the journal is refused as not a repd journal (repd added its tables to it), and counting goes on without ids"
    )
    func foreignDatabase() throws {
        let dir = scratchDirectory()
        let other = dir + "/app.db"
        try runTool(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('create table customers (name text)'); c.commit()",
                other,
            ])
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--speed", "20", "--socket", socketPath, "--journal", other, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        #expect(client.next(type: "rep", timeout: 30).map { $0["id"] == nil } == true, "a rep, without an id")
        #expect(
            daemon.standardError.contains(
                "journal: cannot open \(other): not a repd journal: it holds the tables customers (another program's database?)"
            ), "\(daemon.standardError.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let names = try runTool(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3, sys; print(','.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute(\"select name from sqlite_master where type = 'table' order by name\")))",
                other,
            ])
        #expect(names.trimmingCharacters(in: .whitespacesAndNewlines) == "customers", "untouched: \(names)")
    }

    @Test(
        "a journal file that is not a database at start, moved aside while repd runs, is opened with no restart: status says writing, later events carry ids, and the moved file is left as it was"
    )
    func damagedAtStartMovedAside() throws {
        let dir = scratchDirectory()
        let journalPath = dir + "/events.db"
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        try garbage.write(to: URL(fileURLWithPath: journalPath))
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--speed", "20", "--loop", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        defer {
            daemon.signal(SIGTERM)
            _ = daemon.waitForExit()
        }
        #expect(daemonListens(socketPath), "\(daemon.standardError)")
        let client = try #require(LineClient(path: socketPath))
        client.send("status\n")
        let before = client.next(type: "status")
        #expect(before?["journal"]?["writing"] == .bool(false), "\(String(describing: before))")
        #expect(
            before?["journal"]?["error"]?.stringValue?.contains("repd opens it once that is fixed") == true,
            "\(String(describing: before))")

        try FileManager.default.moveItem(atPath: journalPath, toPath: journalPath + ".bad")
        // Tries come 1, 2, 4 … s apart.
        let (opened, status) = client.statusOnceJournalWrites(timeout: 30)
        #expect(opened, "\(String(describing: status))\n\(daemon.standardError.suffix(3000))")
        #expect(status?["journal"]?["error"] == nil, "\(String(describing: status))")
        let journaled = client.next(timeout: 30) { line -> Int64? in
            guard case .event(let event) = line, event.type == "rep" else { return nil }
            return event.id
        }
        #expect(journaled != nil, "no rep with an id within 30 s")
        let next = try #require(LineClient(path: socketPath))
        let hello = next.next(type: "hello")
        #expect(hello?["journal"]?.stringValue?.count == 32, "\(String(describing: hello))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: journalPath + ".bad")) == garbage, "left as it was")
    }
}
