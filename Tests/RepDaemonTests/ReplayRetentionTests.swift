import Foundation
import RepClient
import RepJournal
import Testing

@Suite("a resume older than what the journal keeps")
struct ReplayRetentionTests {
    @Test(
        "subscribe since=N below the oldest event held says which events are gone before the replay, which starts at the oldest held; since=0 and a since just below the oldest replay without it"
    )
    func sinceOlderThanRetention() throws {
        // What retention leaves of 200 events: the newest 50 (151…200).
        let (daemon, socketPath) = try daemonOnPrunedJournal(count: 200, kept: 50)
        defer { daemon.stop() }
        func resume(since: Int) throws -> (errors: [String], first: Int64?) {
            try firstReplayed(socketPath, "subscribe set,rep since=\(since)")
        }

        let old = try resume(since: 10)
        #expect(
            old.errors == [
                "since=10: events 11…150 are not in the journal (removed by retention, or never written: ids skipped after a crash); the journal holds events from id 151 on"
            ], "\(old.errors)")
        #expect(old.first == 151)
        let one = try resume(since: 149)
        #expect(
            one.errors.count == 1 && one.errors[0].hasPrefix("since=149: event 150 is not in the journal"),
            "\(one.errors)")
        for since in [0, 150] {
            let whole = try resume(since: since)
            #expect(whole.errors.isEmpty, "since=\(since): \(whole.errors)")
            #expect(whole.first == 151, "since=\(since)")
        }
    }

    @Test(
        "with a type filter, the error names the journal's oldest event, not a replay start the filter skips: subscribe rep since=10 over a journal whose oldest event is a set_start"
    )
    func sinceOlderThanRetentionWithATypeFilter() throws {
        // The newest 56 of 200 (145…200): 145 is a set_start, 146 the first rep.
        let (daemon, socketPath) = try daemonOnPrunedJournal(count: 200, kept: 56)
        defer { daemon.stop() }
        let (errors, first) = try firstReplayed(socketPath, "subscribe rep since=10")
        #expect(first == 146)
        #expect(
            errors == [
                "since=10: events 11…144 are not in the journal (removed by retention, or never written: ids skipped after a crash); the journal holds events from id 145 on"
            ], "\(errors)")
    }
}

/// repd on the demo, serving a journal of `count` events (`prepareJournal`) of which retention left the newest `kept`.
func daemonOnPrunedJournal(count: Int, kept: Int) throws -> (daemon: DaemonProcess, socketPath: String) {
    let dir = scratchDirectory()
    let journalPath = dir + "/events.db"
    let socketPath = dir + "/events.sock"
    try prepareJournal(path: journalPath, count: count)
    let journal = try EventJournal(path: journalPath, station: "rack-1", handsOutIDs: false)
    _ = try journal.prune(olderThan: nil, maxRows: kept, maxBytes: nil)
    journal.close()
    let daemon = try DaemonProcess(arguments: [
        "--demo", "--socket", socketPath, "--journal", journalPath, "--quiet",
    ])
    #expect(daemonListens(socketPath), "\(daemon.standardError)")
    return (daemon, socketPath)
}

/// The `error` lines before the first replayed event, and its id, after `command` (a `subscribe … since=N`).
private func firstReplayed(_ socketPath: String, _ command: String) throws -> (errors: [String], first: Int64?) {
    let client = try #require(LineClient(path: socketPath))
    client.send(command + "\n")
    var errors: [String] = []
    var subscribed = false
    let first = client.next(timeout: 10) { line -> Int64? in
        switch line {
        case .subscribed:
            subscribed = true
            return nil
        case _ where !subscribed: return nil  // a live event of the default types, before the replay
        case .error(let message):
            errors.append(message)
            return nil
        case .event(let event): return event.id
        default: return nil
        }
    }
    return (errors, first)
}
