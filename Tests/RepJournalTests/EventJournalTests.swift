import Foundation
import TestScratch
import Testing

@testable import RepJournal

/// A fresh folder for one test.
func scratchDirectory() -> String {
    Scratch.directory("journal")
}

@Suite("The event journal (SQLite)")
struct EventJournalTests {
    @Test("ids increase from 1, and events come back after an id in order, a page at a time")
    func appendAndQuery() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "bench")
        #expect(try journal.newestID == 0)
        for n in 1...5 {
            #expect(
                try journal.append(type: "rep", json: "{\"type\":\"rep\",\"rep\":\(n)}", wall: Double(n)) == Int64(n))
        }
        #expect(try journal.newestID == 5)
        let page = try journal.events(after: 2, limit: 2)
        #expect(page.map(\.id) == [3, 4])
        #expect(
            page[0] == JournalEntry(id: 3, station: "bench", type: "rep", wall: 3, json: "{\"type\":\"rep\",\"rep\":3}")
        )
        #expect(try journal.events(after: 4, limit: 100).map(\.id) == [5])
        #expect(try journal.events(after: 5, limit: 100).isEmpty)
    }

    @Test(
        "the page cache stays under its bound (EventJournal.pageCacheKiB) after 4 MB of events were appended and read back"
    )
    func pageCacheIsBounded() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "bench")
        let padding = String(repeating: "x", count: 400)
        for n in 1...10_000 {
            _ = try journal.append(
                type: "rep", json: "{\"type\":\"rep\",\"rep\":\(n),\"p\":\"\(padding)\"}", wall: Double(n))
        }
        var read = 0
        var after: Int64 = 0
        while case let page = try journal.events(after: after, limit: 1000), let last = page.last {
            read += page.count
            after = last.id
        }
        #expect(read == 10_000)
        _ = try journal.events(matching: JournalQuery(types: ["rep"], limit: 50, latest: true))
        // SQLite's default (2000 KiB) held about 2 MB here; each cached page also carries a few hundred bytes of
        // SQLite's own header, hence the 25 % margin.
        let bound = EventJournal.pageCacheKiB * 1024 * 5 / 4
        #expect(journal.pageCacheBytes > 0 && journal.pageCacheBytes <= bound, "\(journal.pageCacheBytes) bytes")
    }

    @Test(
        "ids survive reopening the file and are never reused, also after every row was pruned",
        arguments: EventJournal.Synchronous.allCases)
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

    /// The files as a power cut leaves them while the journal is open: a crash-consistent copy of the database and
    /// its WAL (every commit so far was written to the kernel, none of it necessarily to the disk).
    private func powerCutCopy(of path: String) throws -> String {
        let copy = scratchDirectory() + "/events.db"
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        return copy
    }

    @Test(
        "after a power cut took back the last commits, ids go on after the durable reservation: none handed out before is reused"
    )
    func idsAfterPowerCut() throws {
        let path = scratchDirectory() + "/events.db"
        let before = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 10)
        for n in 1...12 { #expect(try before.append(type: "rep", json: "{}", wall: Double(n)) == Int64(n)) }
        let onDisk = try powerCutCopy(of: path)  // what the disk kept: ids 1…12
        for n in 13...14 { #expect(try before.append(type: "rep", json: "{}", wall: Double(n)) == Int64(n)) }
        // ids 13 and 14 reached clients, then the power went: the next boot opens what the disk kept.
        let after = try EventJournal(path: onDisk, station: "a", bootID: "boot-2", idBlock: 10)
        #expect(after.skippedIDs?.from == 12)
        #expect(after.skippedIDs?.to == 20, "the block reserved when id 11 was handed out ends at 20")
        #expect(try after.newestID == 20)
        #expect(try after.append(type: "rep", json: "{}", wall: 15) == 21)
        #expect(try after.events(after: 0, limit: 100).map(\.id) == Array(1...12) + [21])
        before.close()
    }

    @Test("a crash of repd alone (same boot) and a clean close (any boot) go on without a gap")
    func idsWithoutGap() throws {
        let path = scratchDirectory() + "/events.db"
        let journal = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 10)
        for n in 1...3 { _ = try journal.append(type: "rep", json: "{}", wall: Double(n)) }
        let crashed = try powerCutCopy(of: path)
        let sameBoot = try EventJournal(path: crashed, station: "a", bootID: "boot-1", idBlock: 10)
        #expect(sameBoot.skippedIDs == nil)
        #expect(try sameBoot.append(type: "rep", json: "{}", wall: 4) == 4)
        sameBoot.close()
        journal.close()
        let reopened = try EventJournal(path: path, station: "a", bootID: "boot-2", idBlock: 10)
        #expect(reopened.skippedIDs == nil)
        #expect(try reopened.append(type: "rep", json: "{}", wall: 4) == 4)
        reopened.close()
        // Opened after that clean close, then a power cut before any new event: still no gap on the next boot.
        let idle = try EventJournal(path: path, station: "a", bootID: "boot-3", idBlock: 10)
        let cut = try powerCutCopy(of: path)
        let afterCut = try EventJournal(path: cut, station: "a", bootID: "boot-4", idBlock: 10)
        #expect(afterCut.skippedIDs == nil)
        #expect(try afterCut.append(type: "rep", json: "{}", wall: 5) == 5)
        idle.close()
    }

    @Test(
        "a boot id that cannot be read (a ProcSubset=pid sandbox) counts as another boot: after an unclean end ids go on after the reservation"
    )
    func unknownBootIsAnotherBoot() throws {
        let path = scratchDirectory() + "/events.db"
        let before = try EventJournal(path: path, station: "a", bootID: "unknown", idBlock: 10)
        for n in 1...3 { _ = try before.append(type: "rep", json: "{}", wall: Double(n)) }
        let onDisk = try powerCutCopy(of: path)
        let after = try EventJournal(path: onDisk, station: "a", bootID: "unknown", idBlock: 10)
        #expect(after.skippedIDs?.to == 10)
        #expect(try after.append(type: "rep", json: "{}", wall: 4) == 11)
        before.close()
    }

    @Test("a reading connection (the uplink's) neither marks the file closed nor hands out ids")
    func readingConnection() throws {
        let path = scratchDirectory() + "/events.db"
        let recorder = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 10)
        for n in 1...3 { _ = try recorder.append(type: "rep", json: "{}", wall: Double(n)) }
        do {
            let reader = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 10, handsOutIDs: false)
            #expect(try reader.events(after: 0, limit: 10).count == 3)
            #expect(throws: JournalError.self) { try reader.append(type: "rep", json: "{}", wall: 9) }
            reader.close()
        }
        // The recorder is still open (its block reserved up to 10): a power cut now must still skip the block.
        let onDisk = try powerCutCopy(of: path)
        let after = try EventJournal(path: onDisk, station: "a", bootID: "boot-2", idBlock: 10)
        #expect(after.skippedIDs?.to == 10, "the reader's close did not mark the file closed")
        recorder.close()
    }

    @Test("max_events keeps that many events also when ids have gaps")
    func retentionWithGaps() throws {
        let path = scratchDirectory() + "/events.db"
        let first = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 100)
        for n in 1...5 { _ = try first.append(type: "rep", json: "{}", wall: Double(n)) }
        let copy = try powerCutCopy(of: path)  // an unclean end, then another boot: ids go on after 100
        first.close()
        let second = try EventJournal(path: copy, station: "a", bootID: "boot-2", idBlock: 100)
        for n in 6...10 { _ = try second.append(type: "rep", json: "{}", wall: Double(n)) }
        #expect(try second.prune(olderThan: nil, maxRows: 7) == 3)
        #expect(try second.events(after: 0, limit: 100).map(\.id) == [4, 5, 101, 102, 103, 104, 105])
    }

    @Test("the boot id is the kernel's (/proc/sys/kernel/random/boot_id), the same at every call")
    func bootID() throws {
        let id = EventJournal.currentBootID()
        #expect(id.count == 36, "\(id)")
        let kernel = try String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)
        #expect(id == kernel.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(id == EventJournal.currentBootID())
    }

    @Test("a history query selects by id, time and type, and latest gives the newest matching, oldest first")
    func historyQuery() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "a")
        let types = ["set_start", "rep", "rep", "set_end", "sensor"]
        for n in 1...20 { _ = try journal.append(type: types[(n - 1) % 5], json: "{}", wall: Double(100 + n)) }
        #expect(try journal.events(matching: JournalQuery(after: 3, before: 8, limit: 100)).map(\.id) == [4, 5, 6, 7])
        #expect(try journal.events(matching: JournalQuery(from: 110, to: 113, limit: 100)).map(\.id) == [10, 11, 12])
        #expect(try journal.events(matching: JournalQuery(types: ["rep"], limit: 3)).map(\.id) == [2, 3, 7])
        #expect(
            try journal.events(matching: JournalQuery(types: ["rep"], limit: 3, latest: true)).map(\.id) == [
                13, 17, 18,
            ])
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

    @Test("retention by size deletes the oldest events until they fit, and the file stops growing at about the limit")
    func retentionBySize() throws {
        let path = scratchDirectory() + "/events.db"
        let journal = try EventJournal(path: path, station: "a")
        let line = "{\"type\":\"rep\",\"pad\":\"" + String(repeating: "x", count: 400) + "\"}"
        let limit: Int64 = 256 << 10
        var deleted = 0
        for round in 0..<4 {
            for n in 0..<500 { _ = try journal.append(type: "rep", json: line, wall: Double(round * 500 + n)) }
            deleted += try journal.prune(olderThan: nil, maxRows: nil, maxBytes: limit)
            #expect(try journal.usedBytes <= limit, "round \(round)")
        }
        #expect(deleted > 2000 - 600, "about 600 rows of 400 bytes fit in 256 KiB: \(deleted) deleted")
        let kept = try journal.events(after: 0, limit: 10_000)
        #expect(kept.last?.id == 2000, "the newest are kept")
        #expect(kept.map(\.id) == Array((kept.first?.id ?? 0)...2000), "and only the oldest were deleted")
        // Freed pages are reused: after a checkpoint the file holds the limit plus the 500 events (about 230 KiB)
        // written between two prunes, not the 2000 events (about 900 KiB) written in all.
        journal.close()
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(size < Int(limit) + 300 << 10, "\(size) bytes")
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

    @Test(
        "a journal that cannot be opened says what the file system says: a folder in its place, a folder that does not exist"
    )
    func cannotOpenSaysWhy() throws {
        let folder = Scratch.directory("journal-folder")
        // do/catch rather than #expect(throws:)'s result: Swift Testing 6.0 (Debian trixie's Swift) returns nothing.
        func openingError(_ path: String) -> JournalError? {
            do {
                _ = try EventJournal(path: path, station: "a")
                return nil
            } catch { return error }
        }
        let inPlace = openingError(folder)
        #expect(inPlace?.message == "unable to open database file (it is a folder, not a file)")
        let missing = openingError(folder + "/nowhere/events.db")
        #expect(
            missing?.message == "unable to open database file (its folder \(folder)/nowhere: No such file or directory)"
        )
    }

    @Test("the file is in WAL mode")
    func walMode() throws {
        let dir = scratchDirectory()
        let journal = try EventJournal(path: dir + "/events.db", station: "a")
        _ = try journal.append(type: "rep", json: "{}", wall: 1)
        #expect(FileManager.default.fileExists(atPath: dir + "/events.db-wal"))
    }
}
