import Foundation
import RepClient
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A journal row damaged on the disk (a cut-off or otherwise broken JSON text) is answered as
/// `{"type":"damaged",...}` with its id, by `history`, a replay and the uplink alike: repd trapped on it before.
@Suite(
    "a damaged journal row", .serialized,
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
        let damage = Process()
        damage.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        damage.arguments = [
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"update events set json = '{\\\"type\\\":\\\"rep\\\",\\\"set\\\":1,\\\"rep' where id = 4\"); c.commit()",
            journalPath,
        ]
        try damage.run()
        damage.waitUntilExit()
        #expect(damage.terminationStatus == 0)

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
        #expect(events.map { $0["id"]?.int } == [3, 4, 5, 6])
        #expect(events[1]["type"]?.stringValue == "damaged" && events[1]["of"]?.stringValue == "rep", "\(events[1])")
        #expect(events[2]["type"]?.stringValue != "damaged")
        // A replay over it: every line parses, the row's id comes as damaged, the rest as they were.
        client.send("subscribe since=2\n")
        var replayed: [(Int, String)] = []
        while let line = client.nextLine(timeout: 10) {
            let message = try JSONParser.parse(line)
            if let id = message["id"]?.int, let type = message["type"]?.stringValue { replayed.append((id, type)) }
            if replayed.contains(where: { $0.0 >= 6 }) { break }
        }
        #expect(replayed.prefix(4).map(\.0) == [3, 4, 5, 6], "\(replayed)")
        #expect(replayed.first { $0.0 == 4 }?.1 == "damaged", "\(replayed)")
        client.send("ping\n")
        #expect(client.next(type: "pong", timeout: 10) != nil, "repd still serves")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.standardError.suffix(2000))")
        #expect(!daemon.standardError.contains("Precondition failed"))
    }
}
