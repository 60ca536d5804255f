import Foundation
import Testing

@testable import RepJournal

/// A fresh folder for one test.
func scratchDirectory() -> String {
    let path = "/tmp/repd-j-" + String(UUID().uuidString.prefix(8))
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite("The event journal (SQLite)")
struct EventJournalTests {
    @Test("ids increase from 1, and events come back after an id in order, a page at a time")
    func appendAndQuery() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "bench")
        #expect(try journal.newestID == 0)
        for n in 1...5 {
            #expect(try journal.append(type: "rep", json: "{\"type\":\"rep\",\"rep\":\(n)}", wall: Double(n)) == Int64(n))
        }
        #expect(try journal.newestID == 5)
        let page = try journal.events(after: 2, limit: 2)
        #expect(page.map(\.id) == [3, 4])
        #expect(page[0] == JournalEntry(id: 3, station: "bench", type: "rep", wall: 3, json: "{\"type\":\"rep\",\"rep\":3}"))
        #expect(try journal.events(after: 4, limit: 100).map(\.id) == [5])
        #expect(try journal.events(after: 5, limit: 100).isEmpty)
    }

    @Test("ids survive reopening the file and are never reused, also after every row was pruned", arguments: EventJournal.Synchronous.allCases)
    func idsAreNeverReused(synchronous: EventJournal.Synchronous) throws {
        let path = scratchDirectory() + "/events.db"
        do {
            let journal = try EventJournal(path: path, station: "a", synchronous: synchronous)
            for _ in 0..<3 { _ = try journal.append(type: "sensor", json: "{}", wall: 1) }
            #expect(try journal.prune(olderThan: 2, maxRows: nil) == 3)
            #expect(try journal.oldestID == nil)
        }
        let journal = try EventJournal(path: path, station: "a", synchronous: synchronous)
        #expect(try journal.newestID == 3)
        #expect(try journal.append(type: "rep", json: "{}", wall: 5) == 4)
    }

    @Test("a history query selects by id, time and type, and latest gives the newest matching, oldest first")
    func historyQuery() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "a")
        let types = ["set_start", "rep", "rep", "set_end", "sensor"]
        for n in 1...20 { _ = try journal.append(type: types[(n - 1) % 5], json: "{}", wall: Double(100 + n)) }
        #expect(try journal.events(matching: JournalQuery(after: 3, before: 8, limit: 100)).map(\.id) == [4, 5, 6, 7])
        #expect(try journal.events(matching: JournalQuery(from: 110, to: 113, limit: 100)).map(\.id) == [10, 11, 12])
        #expect(try journal.events(matching: JournalQuery(types: ["rep"], limit: 3)).map(\.id) == [2, 3, 7])
        #expect(try journal.events(matching: JournalQuery(types: ["rep"], limit: 3, latest: true)).map(\.id) == [13, 17, 18])
        #expect(try journal.events(matching: JournalQuery(types: ["set_end", "sensor"], limit: 100)).count == 8)
        #expect(try journal.events(matching: JournalQuery(types: ["x' OR 1=1 --"], limit: 100)).isEmpty)
        #expect(try journal.events(matching: JournalQuery(after: 20, limit: 100)).isEmpty)
    }

    @Test("retention keeps the newest max_rows and drops events older than the cut-off")
    func retention() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "a")
        for n in 1...10 { _ = try journal.append(type: "rep", json: "{}", wall: Double(n)) }
        #expect(try journal.prune(olderThan: nil, maxRows: 6) == 4)
        #expect(try journal.oldestID == 5)
        #expect(try journal.prune(olderThan: 8, maxRows: 100) == 3)
        #expect(try journal.events(after: 0, limit: 100).map(\.id) == [8, 9, 10])
    }

    @Test("a file that is not a database is refused with its path and SQLite's message, not a crash")
    func corruptFile() throws {
        let path = scratchDirectory() + "/events.db"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        do {
            _ = try EventJournal(path: path, station: "a")
            Issue.record("a corrupt file was accepted")
        } catch {
            #expect(error.path == path)
            #expect(error.message.contains("not a database"), "\(error)")
            #expect(error.description.contains(path))
        }
    }

    @Test("a file that cannot be created is refused with its path")
    func cannotCreate() {
        #expect(throws: JournalError.self) { try EventJournal(path: "/dev/null/events.db", station: "a") }
        do { _ = try EventJournal(path: "/dev/null/events.db", station: "a") } catch {
            #expect(error.description.hasPrefix("journal /dev/null/events.db: open failed: unable to open"), "\(error)")
        }
    }

    @Test("the file is in WAL mode")
    func walMode() throws {
        let dir = scratchDirectory()
        let journal = try EventJournal(path: dir + "/events.db", station: "a")
        _ = try journal.append(type: "rep", json: "{}", wall: 1)
        #expect(FileManager.default.fileExists(atPath: dir + "/events.db-wal"))
    }
}
