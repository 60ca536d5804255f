import Foundation
import RepClient
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The reference client for app developers, examples/python/repd_events.py, against a real repd: what it prints and
/// what it keeps in its state file across a busy gap, a restart of repd and a restart of itself.
@Suite(
    "the Python example client", .serialized,
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "needs /usr/bin/python3"))
struct PythonExampleClientTests {
    let script = repositoryRoot + "/examples/python/repd_events.py"

    /// The ids of the JSON lines the client printed, in order, and their types.
    private func printed(_ client: DaemonProcess) -> [(id: Int, type: String)] {
        client.standardOutput.split(separator: "\n").compactMap { line in
            guard let parsed = try? ServerLine.parse(Array(line.utf8)), let id = parsed.eventID else { return nil }
            return (Int(id), parsed.type)
        }
    }

    private func state(_ path: String) -> (journal: String, lastID: Int)? {
        guard let data = FileManager.default.contents(atPath: path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let journal = object["journal"] as? String, let lastID = object["last_id"] as? Int
        else { return nil }
        return (journal, lastID)
    }

    /// A scratch folder holding a journal of `events` prepared events, and its socket and state file paths.
    private struct Station {
        let journalPath: String
        let socketPath: String
        let statePath: String
        let fixturePath: String

        init(events: Int, repsPerSet: [Int]) throws {
            let dir = scratchDirectory()
            journalPath = dir + "/events.db"
            socketPath = dir + "/events.sock"
            statePath = dir + "/client-state.json"
            try prepareJournal(path: journalPath, count: events)
            fixturePath = try WorkoutFixture(directory: dir, repsPerSet: repsPerSet, rest: 6, lead: 3).path
        }

        /// repd's arguments: the fixture looped at 20 times real time (events keep coming however long a client
        /// takes to start: a busy machine, a sanitizer build), on this journal and socket.
        var repdArguments: [String] {
            [
                "--fixture", fixturePath, "--speed", "20", "--loop", "--socket", socketPath, "--journal", journalPath,
                "--quiet",
            ]
        }
    }

    private func newestID(_ socketPath: String) -> Int? {
        guard let client = LineClient(path: socketPath), let hello = client.nextServerLine()?.hello else { return nil }
        return hello.newestID.map(Int.init)
    }

    @Test(
        "a state from another journal file replays this one from its start (a busy gap of 3000 events), then live events; across a restart of repd and of the client every journaled id is printed once, in order"
    )
    func resumesAcrossGapsAndRestarts() throws {
        let count = 3000
        let station = try Station(events: count, repsPerSet: [6, 6, 6, 6])
        let (socketPath, statePath, arguments) = (station.socketPath, station.statePath, station.repdArguments)
        // Ids from another file: the client must not skip this file's first 99 999 events for them.
        try #"{"journal": "0123456789abcdef0123456789abcdef", "last_id": 99999}"#.write(
            toFile: statePath, atomically: true, encoding: .utf8)
        var daemon = try DaemonProcess(arguments: arguments)
        #expect(daemonListens(socketPath))
        var client = try DaemonProcess(
            executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath, "--state", statePath])
        defer { client.stop() }

        // The whole prepared journal, then live reps of this run.
        #expect(
            eventually(timeout: 60) { printed(client).contains { $0.id > count && $0.type == "rep" } },
            "\(client.standardError.suffix(2000))")
        #expect(client.standardError.contains("another file"), "\(client.standardError)")

        // repd restarts mid-workout: the client reconnects and resumes.
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let beforeRestart = printed(client).last?.id ?? 0
        daemon = try DaemonProcess(arguments: arguments)
        defer { daemon.stop() }
        #expect(daemonListens(socketPath))
        #expect(
            eventually(timeout: 60) { (printed(client).last?.id ?? 0) > beforeRestart + 3 },
            "events of the second run: \(client.standardError.suffix(2000))")

        // The client stops (SIGTERM: exit 0) and misses some events; started again on its state, it resumes.
        client.signal(SIGTERM)
        #expect(client.waitForExit() == 0, "\(client.standardError)")
        let firstRun = printed(client)
        let saved = try #require(state(statePath))
        #expect(saved.lastID == firstRun.last?.id, "the state holds the last id printed")
        let missedFrom = (newestID(socketPath) ?? 0) + 1
        #expect(eventually(timeout: 60) { (newestID(socketPath) ?? 0) >= missedFrom + 3 }, "repd went on meanwhile")
        client = try DaemonProcess(
            executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath, "--state", statePath])
        #expect(
            eventually(timeout: 60) { (printed(client).last?.id ?? 0) >= missedFrom + 3 },
            "\(client.standardError.suffix(2000))")
        client.signal(SIGTERM)
        #expect(client.waitForExit() == 0, "\(client.standardError)")

        // Every journaled id, from the first of the file to the last printed, once and in order, over both runs of
        // the client (a clean stop of repd skips no id).
        let ids = (firstRun + printed(client)).map(\.id)
        #expect(ids.first == 1 && ids == Array(1...max(1, ids.last ?? 1)), "ids \(ids.prefix(5)) … \(ids.suffix(5))")
        #expect(ids.count > count + 10)
        #expect(state(statePath)?.lastID == ids.last)
        #expect(state(statePath)?.journal == newHello(socketPath)?.journal)
    }

    private func newHello(_ socketPath: String) -> ServerLine.Hello? {
        LineClient(path: socketPath)?.nextServerLine()?.hello
    }

    @Test(
        "a state ahead of its own journal (a backup of the file put back) goes on from the journal's newest id instead of skipping what comes; an event type repd does not know is a usage error"
    )
    func stateAheadOfItsJournal() throws {
        let station = try Station(events: 50, repsPerSet: [6, 6])
        let (socketPath, statePath) = (station.socketPath, station.statePath)
        let daemon = try DaemonProcess(arguments: station.repdArguments)
        defer { daemon.stop() }
        #expect(daemonListens(socketPath))
        let hello = try #require(newHello(socketPath))
        let journal = try #require(hello.journal)
        try #"{"journal": "\#(journal)", "last_id": 5000}"#.write(toFile: statePath, atomically: true, encoding: .utf8)
        let client = try DaemonProcess(
            executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath, "--state", statePath])
        defer { client.stop() }
        #expect(
            eventually(timeout: 60) { printed(client).count >= 4 }, "live events: \(client.standardError.suffix(2000))")
        #expect(client.standardError.contains("backup"), "\(client.standardError)")
        let ids = printed(client).map(\.id)
        let first = try #require(ids.first)
        // The first printed is the first event after the journal's newest when the client said hello: the prepared
        // 50, or a few more if repd journaled some meanwhile.
        #expect(first > 50 && first < 5000 && ids == Array(first..<(first + ids.count)), "\(ids)")

        let mistyped = try DaemonProcess(
            executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath, "--events", "rep,sets"])
        #expect(mistyped.waitForExit(timeout: 30) == 2)
        #expect(mistyped.standardError.contains("'sets' is not an event type"), "\(mistyped.standardError)")
    }

    @Test(
        "the journal deleted while the client follows it (rm events.db): repd's bye is said as such, the client follows the new file from its start, its state names the new file, and every rep is printed once"
    )
    func followsANewJournalFile() throws {
        let station = try Station(events: 0, repsPerSet: [6, 6])
        let (socketPath, statePath) = (station.socketPath, station.statePath)
        let daemon = try DaemonProcess(arguments: station.repdArguments)
        defer { daemon.stop() }
        #expect(daemonListens(socketPath))
        let before = try #require(newHello(socketPath)?.journal)
        let client = try DaemonProcess(
            executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath, "--state", statePath])
        defer { client.stop() }
        func totals() -> [Int] {
            client.standardOutput.split(separator: "\n").compactMap { line in
                guard let message = try? JSONParser.parse(String(line)), message["type"]?.stringValue == "rep" else {
                    return nil
                }
                return message["total"]?.int
            }
        }
        #expect(eventually(timeout: 60) { totals().count >= 3 }, "\(client.standardError.suffix(2000))")
        #expect(unlink(station.journalPath) == 0)
        let atChange = totals().last ?? 0
        #expect(
            eventually(timeout: 60) { (totals().last ?? 0) >= atChange + 6 }, "\(client.standardError.suffix(2000))")
        let reps = totals()
        let first = try #require(reps.first)
        #expect(reps == Array(first..<(first + reps.count)), "every rep once, in order: \(reps)")
        #expect(client.standardError.contains("repd went over to another journal file"), "\(client.standardError)")
        // The new file from its start: where the ids start over, they start at 1.
        let ids = printed(client).map(\.id)
        let restart = try #require(ids.indices.dropFirst().first { ids[$0] <= ids[$0 - 1] }, "\(ids)")
        #expect(ids[restart] == 1, "\(ids)")
        let after = try #require(newHello(socketPath)?.journal)
        #expect(after != before)
        #expect(eventually(timeout: 10) { state(statePath)?.journal == after }, "the state follows the new file")
    }

    @Test("a peer that speaks another protocol makes the client exit 1 saying so; a state file it did not write too")
    func refusesWhatItCannotUse() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/peer.sock"
        let peer = try DaemonProcess(
            executable: "/usr/bin/python3",
            arguments: [
                "-c",
                """
                import socket, sys
                s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
                c, _ = s.accept(); c.sendall(b'{"type":"hello","protocol":99}\\n'); c.recv(100)
                """,
                socketPath,
            ])
        defer { peer.stop() }
        #expect(eventually(timeout: 20) { access(socketPath, F_OK) == 0 })
        let client = try DaemonProcess(executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath])
        #expect(client.waitForExit(timeout: 30) == 1)
        #expect(client.standardError.contains("speaks protocol 99"), "\(client.standardError)")

        let statePath = dir + "/state.json"
        try "[1, 2]".write(toFile: statePath, atomically: true, encoding: .utf8)
        let misread = try DaemonProcess(
            executable: "/usr/bin/python3", arguments: [script, "--socket", socketPath, "--state", statePath])
        #expect(misread.waitForExit(timeout: 30) == 1)
        #expect(misread.standardError.contains("not a state this program wrote"), "\(misread.standardError)")
    }
}
