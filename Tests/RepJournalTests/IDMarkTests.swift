import CSQLite
import Foundation
import PlainText
import Testing

@testable import RepJournal

/// A backup of the journal put back must not make repd hand out ids again under the same identity (consumers
/// de-duplicate by station + journal + id and would drop the new events): the id mark beside the file (`PATH.ids`).
@Suite("Ids after a backup is put back (the id mark)")
struct IDMarkTests {
    private func append(_ journal: EventJournal, _ count: Int) throws -> [Int64] {
        try (0..<count).map { n in try journal.append(type: "rep", json: "{}", wall: Double(n)) }
    }

    /// The file's bytes (the journal closed: no -wal left).
    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    /// The crash of the run that has the journal at `path` open: what the disk holds while it has not closed (its
    /// log not checkpointed), copied into a folder of its own with the id mark, as the next start finds it.
    private func crashCopy(of path: String) throws -> String {
        let crashed = scratchDirectory() + "/events.db"
        for suffix in ["", "-wal", "-shm", ".ids"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: crashed + suffix)
        }
        #expect(try bytes(crashed + "-wal").count > 0, "the crashed run's log")
        return crashed
    }

    @Test("a backup of a closed journal put back with mv: ids go on after the newest handed out, the identity stays")
    func backupMovedBack() throws {
        let path = scratchDirectory() + "/events.db"
        let first = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(try append(first, 5) == Array(1...5))
        let identity = first.identity
        first.close()
        try bytes(path).write(to: URL(fileURLWithPath: path + ".backup"))
        let second = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(second.skippedIDs == nil)
        #expect(try append(second, 7) == Array(6...12))
        second.close()
        #expect(rename(path + ".backup", path) == 0)

        let restored = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(restored.identity == identity)
        #expect(
            restored.skippedIDs?.from == 5 && restored.skippedIDs?.to == 12,
            "\(String(describing: restored.skippedIDs))")
        #expect(restored.skipReason == .fileBehindIDMark)
        #expect(try append(restored, 1) == [13], "no id of the events after the backup is handed out again")
        #expect(try restored.events(after: 0, limit: 100).map(\.id) == Array(1...5) + [13])
        restored.close()
    }

    @Test("a backup copied over the journal in place (the same inode) is seen too")
    func backupCopiedInPlace() throws {
        let path = scratchDirectory() + "/events.db"
        let first = try EventJournal(path: path, station: "a", idBlock: 10)
        _ = try append(first, 3)
        first.close()
        let backup = try bytes(path)
        let second = try EventJournal(path: path, station: "a", idBlock: 10)
        _ = try append(second, 4)
        second.close()
        let inode = try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: backup)
        try handle.close()
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64 == inode)

        let restored = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(restored.skippedIDs?.from == 3 && restored.skippedIDs?.to == 7)
        #expect(try append(restored, 1) == [8])
        restored.close()
    }

    @Test(
        "a backup taken while repd ran (its reservation open, this boot) put back after repd closed: ids go on after the newest handed out"
    )
    func backupOfAnOpenJournal() throws {
        let path = scratchDirectory() + "/events.db"
        let running = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 1000)
        _ = try append(running, 21)
        // SQLite's online backup, as an administrator's sqlite3 .backup makes it: the reservation (1000, open) too.
        let backupPath = path + ".backup"
        try sqliteBackup(from: path, to: backupPath)
        _ = try append(running, 27)
        running.close()
        #expect(rename(backupPath, path) == 0)
        for suffix in ["-wal", "-shm"] { unlink(path + suffix) }

        let restored = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 1000)
        #expect(try restored.newestID == 48)
        #expect(restored.skippedIDs?.from == 21 && restored.skippedIDs?.to == 48)
        #expect(try append(restored, 1) == [49])
        restored.close()
    }

    @Test(
        "after a crash, a backup put back with mv does not get the crashed run's write-ahead log applied: it is moved aside, the backup opens as it was"
    )
    func staleLogOfACrashedRun() throws {
        let path = scratchDirectory() + "/events.db"
        let first = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(try append(first, 3) == [1, 2, 3])
        first.close()
        let backup = try bytes(path)
        let running = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(try append(running, 4) == [4, 5, 6, 7])
        let crashed = try crashCopy(of: path)
        // The backup put back with mv (another inode), the log and shared memory left as the crash left them.
        try backup.write(to: URL(fileURLWithPath: crashed + ".backup"))
        #expect(rename(crashed + ".backup", crashed) == 0)

        // A log moved aside by an earlier such start is kept: the new one gets a name of its own.
        try "an earlier one".write(toFile: crashed + "-wal.stale", atomically: false, encoding: .utf8)

        let restored = try EventJournal(path: crashed, station: "a", idBlock: 10)
        #expect(restored.movedAsideLog?.contains("-wal.stale.2") == true, "\(restored.movedAsideLog ?? "nil")")
        #expect(try String(contentsOfFile: crashed + "-wal.stale", encoding: .utf8) == "an earlier one")
        #expect(try Data(contentsOf: URL(fileURLWithPath: crashed + "-wal.stale.2")).count > 0)
        #expect(try restored.events(after: 0, limit: 100).map(\.id) == [1, 2, 3], "the backup as it was")
        #expect(try append(restored, 1) == [14], "after the block the crashed run reserved (through 13)")
        restored.close()
        running.close()
    }

    @Test(
        "after a crash, the journal's own write-ahead log is applied even when its file system's device number changed (a reboot of btrfs or an overlay): its committed events are kept"
    )
    func crashedRunOnARenumberedDevice() throws {
        let path = scratchDirectory() + "/events.db"
        let running = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(try append(running, 4) == [1, 2, 3, 4])
        // The crash, and the mark written for this very file but under another device number.
        let crashed = try crashCopy(of: path)
        let file = try #require(FileIdentity(crashed))
        let marks = try String(contentsOfFile: crashed + ".ids", encoding: .utf8).split(separator: "\n")
        let words = try #require(marks.first).split(separator: " ")
        #expect(words.count == 5 && words[2] == "open", "\(marks)")
        let renumbered = [words[0], words[1], "open", "\(file.device + 1)", "\(file.inode)"].joined(separator: " ")
        try (renumbered + "\n").write(toFile: crashed + ".ids", atomically: true, encoding: .utf8)

        let reopened = try EventJournal(path: crashed, station: "a", idBlock: 10)
        #expect(reopened.movedAsideLog == nil, "\(reopened.movedAsideLog ?? "")")
        #expect(try reopened.events(after: 0, limit: 100).map(\.id) == [1, 2, 3, 4], "the crashed run's events")
        // The mark names this file too (`followIDMark`, 77a7e92): in the same boot ids go on without a gap, rather
        // than after the mark's reserved block (11) as for a file put in its place.
        #expect(reopened.skippedIDs == nil, "\(String(describing: reopened.skippedIDs))")
        #expect(try append(reopened, 1) == [5])
        reopened.close()
        running.close()
    }

    @Test("reopening the same journal after a clean close or a crash of repd alone goes on without a gap")
    func noGapWithoutABackup() throws {
        let path = scratchDirectory() + "/events.db"
        let first = try EventJournal(path: path, station: "a", bootID: "boot-1", idBlock: 10)
        _ = try append(first, 12)
        first.close()
        let second = try EventJournal(path: path, station: "a", bootID: "boot-2", idBlock: 10)
        #expect(second.skippedIDs == nil)
        #expect(try append(second, 3) == [13, 14, 15])
        // A crash of repd alone: the next open (same boot) sees the file it wrote, its reservation open.
        let crashed = try EventJournal(path: path, station: "a", bootID: "boot-2", idBlock: 10)
        #expect(crashed.skippedIDs == nil)
        #expect(try append(crashed, 1) == [16])
        crashed.close()
        second.close()
    }

    @Test("a mark file that does not read is ignored, and one that cannot be written is reported, appends go on")
    func unreadableAndUnwritableMark() throws {
        let folder = scratchDirectory()
        let path = folder + "/events.db"
        try "not a mark\n\u{0}\u{1}garbage 12 clean 1 2\n".write(
            toFile: path + ".ids", atomically: true, encoding: .utf8)
        let journal = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(journal.skippedIDs == nil)
        #expect(try append(journal, 1) == [1])
        #expect(journal.idMarkProblem == nil)
        let marks = IDMarkFile(journalPath: path).read()
        #expect(marks.map(\.identity) == [journal.identity] && marks.first?.mark.reserved == 10)
        // A folder in the place of the mark's new file: the rename cannot happen.
        journal.close()
        #expect(mkdir(path + ".ids.new", 0o755) == 0)
        let again = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(try append(again, 10) == Array(2...11))
        #expect(again.idMarkProblem?.contains("events.db.ids.new") == true, "\(again.idMarkProblem ?? "nil")")
        again.close()
    }

    @Test("a FIFO in the mark file's place is not waited on: the journal opens at once, the mark is written anew")
    func fifoAsMarkFile() throws {
        let path = scratchDirectory() + "/events.db"
        #expect(mkfifo(path + ".ids", 0o600) == 0)
        // The read runs on a queue of its own: when it waits on the FIFO, the test opens the FIFO for writing, which
        // ends that wait, and fails instead of hanging.
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "mark-read").async {
            _ = IDMarkFile(journalPath: path).read()
            done.signal()
        }
        // A read that waits on the FIFO waits for ever: 30 s tells it from a queue a busy machine was slow to run.
        let waited = done.wait(timeout: .now() + 30) == .timedOut
        if waited {
            let fd = open(path + ".ids", O_RDWR | O_NONBLOCK)
            if fd >= 0 { close(fd) }
            done.wait()
        }
        try #require(!waited, "the mark's read waited on the FIFO for a writer")  // so would the journal's open
        let journal = try EventJournal(path: path, station: "a", idBlock: 10)
        #expect(journal.skippedIDs == nil)
        #expect(try append(journal, 1) == [1])
        #expect(journal.idMarkProblem == nil)
        #expect(IDMarkFile(journalPath: path).read().first?.mark.reserved == 10)
        journal.close()
    }

    @Test("the mark keeps the last 8 identities, the newest first")
    func markKeepsEightIdentities() throws {
        let marks = IDMarkFile(journalPath: scratchDirectory() + "/events.db")
        for n in 0..<10 {
            let identity = String(repeating: String(n), count: 32)
            #expect(marks.write(.init(reserved: Int64(n), clean: true, device: 1, inode: 2), for: identity) == nil)
        }
        let read = marks.read()
        #expect(read.count == IDMarkFile.capacity)
        #expect(read.first?.identity == String(repeating: "9", count: 32) && read.first?.mark.reserved == 9)
        #expect(read.last?.identity == String(repeating: "2", count: 32))
    }
}

/// SQLite's online backup of the file at `source` into `destination` (`sqlite3_backup_*`, as `sqlite3 .backup`
/// makes it), on a connection of its own beside the journal's.
private func sqliteBackup(from source: String, to destination: String) throws {
    var from: OpaquePointer?
    var to: OpaquePointer?
    defer {
        sqlite3_close(from)
        sqlite3_close(to)
    }
    try #require(sqlite3_open_v2(source, &from, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
    try #require(sqlite3_open_v2(destination, &to, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
    let backup = try #require(sqlite3_backup_init(to, "main", from, "main"))
    let stepped = sqlite3_backup_step(backup, -1)
    let finished = sqlite3_backup_finish(backup)
    #expect(stepped == SQLITE_DONE && finished == SQLITE_OK)
}
