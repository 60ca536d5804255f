import CSQLite
import PlainText
import RepSettings
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One journaled event.
public struct JournalEntry: Sendable, Equatable {
    /// The event's id: increases with every event and is never reused, also across restarts and pruning.
    public var id: Int64
    /// The station (host) that recorded it.
    public var station: String
    /// The protocol message type: `set_start`, `rep`, `set_end`, `sensor`.
    public var type: String
    /// The Unix time (seconds) at which it was published.
    public var wall: Double
    /// The message's JSON object as published, without `id` and `station`.
    public var json: String

    /// Creates an entry.
    public init(id: Int64, station: String, type: String, wall: Double, json: String) {
        self.id = id
        self.station = station
        self.type = type
        self.wall = wall
        self.json = json
    }
}

/// A journal operation that failed: which file, what was being done, and SQLite's own code and message (a corrupt
/// file reads "file is not a database", a full disk "database or disk is full").
public struct JournalError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The database file.
    public var path: String
    /// What was being done (`open`, `append`, `query`, `prune`, ...).
    public var operation: String
    /// SQLite's extended result code (`SQLITE_NOTADB` = 26, `SQLITE_FULL` = 13, `SQLITE_CANTOPEN` = 14, ...).
    public var code: Int32
    /// SQLite's message.
    public var message: String

    /// Creates the error.
    public init(path: String, operation: String, code: Int32, message: String) {
        self.path = path
        self.operation = operation
        self.code = code
        self.message = message
    }

    /// One line: the file, the operation, SQLite's message and its code.
    public var description: String { "journal \(path): \(operation) failed: \(message) (SQLite code \(code))" }
}

/// The on-board event store: a SQLite file in WAL mode holding every published workout and sensor event, so a
/// client that was away can ask for what it missed (`subscribe since=ID`).
///
/// Not thread-safe: one owner at a time (the daemon keeps it behind a lock). Ids come from
/// `INTEGER PRIMARY KEY AUTOINCREMENT`, so SQLite never hands out an id twice, even after the newest rows were
/// pruned or the file was reopened.
///
/// **Ids after a power cut.** With `synchronous = normal` a power cut can take back the last commits, and with them
/// SQLite's memory of the ids it handed out, although those events already reached clients and the broker. So ids are
/// handed out from durable blocks: before the first id of a block is used, the block's end is committed with an
/// fsync (one per `idBlock` events). A clean `close()` records that every id up to the newest was kept. When the file
/// is next opened after a run that did not close it **on an earlier boot** (a power cut, or a crash followed by a
/// reboot), ids go on after the reserved block's end: a gap of at most `idBlock`, never an id handed out twice. After
/// a crash of repd alone (same boot) the kernel still had every commit, and ids go on without a gap.
///
/// **Ids after a backup is put back.** Every reservation is also written outside the file (`IDMarkFile`: `PATH.ids`),
/// so a file that went back in time (a backup restored with `mv` or `cp`: its own older reservation, the same
/// identity) is seen at open, and ids go on after the newest one this identity handed out there (`skipReason`
/// `.fileBehindIDMark`): its events after the backup are gone, their ids are never reused.
public final class EventJournal {
    /// How hard each commit waits for the disk (`PRAGMA synchronous`): the `journal.synchronous` setting itself.
    /// With `normal`, in WAL mode a commit is durable once the WAL is checkpointed and a power cut can lose the last
    /// commits (never corrupt the file; a crash of repd alone loses nothing); with `full`, every commit is fsync'ed
    /// before `append` returns.
    public typealias Synchronous = JournalSettings.Synchronous

    /// The database file.
    public let path: String
    /// The station written with every event.
    public let station: String
    /// How many ids one durable reservation covers (see the type's comment).
    public let idBlock: Int64
    /// This boot's identity (`/proc/sys/kernel/random/boot_id`), written with each reservation.
    public let bootID: String
    /// Whether this connection hands out ids (the daemon's recorder). A second connection to the same file (the
    /// uplink's) reads events and keeps the uplink's progress only: it neither moves ids on after a power cut nor
    /// marks the file closed, and `append` is refused.
    public let handsOutIDs: Bool
    /// When opening found a run that did not close the file on an earlier boot: the ids skipped so that none handed
    /// out before a power cut is handed out again (`from` the newest id the file still had, `to` the reserved block's
    /// end). Nil when ids go on without a gap.
    public private(set) var skippedIDs: (from: Int64, to: Int64)?
    /// Why opening skipped ids (`skippedIDs`); nil when it did not.
    public private(set) var skipReason: SkipReason?
    /// Why the id mark beside the file (`PATH.ids`, see the type's comment) could not be written the last time it
    /// was due, nil when it was. Appends go on without it; a backup put back is then seen only up to the last mark
    /// written.
    public private(set) var idMarkProblem: String?
    /// The id mark beside the file.
    private let idMarks: IDMarkFile
    /// What opening moved aside: a write-ahead log left by a run that did not close another file at this path
    /// (`moveAsideStaleLog`); nil when nothing was.
    public private(set) var movedAsideLog: String?

    /// Why opening skipped ids.
    public enum SkipReason: Sendable, Equatable {
        /// The last run did not close the file on an earlier boot (a power cut): ids go on after its reserved block.
        case notClosedBeforeBoot
        /// The file holds fewer ids than its identity handed out at this path (`PATH.ids`): a backup put back, or a
        /// copy of the file from before its last events.
        case fileBehindIDMark
    }
    private let synchronous: Synchronous
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?
    /// The newest id handed out (`sqlite_sequence`), kept here so an append knows when a new block is due.
    private var lastID: Int64 = 0
    /// The end of the durable reservation: no id above it has been handed out.
    private var reservedThrough: Int64 = 0
    /// The files this connection opened (device and inode of `path`, its `-wal` and its `-shm`), to tell at close
    /// whether `path` still names them.
    private var openedFiles: [String: FileIdentity] = [:]

    /// Opens (or creates) the journal at `path`. Throws a `JournalError` naming the file when it cannot be opened,
    /// is not a database, or cannot be written. `bootID` defaults to the running kernel's boot id; `idBlock` is the
    /// size of a durable id reservation (at least 1); `handsOutIDs` false opens a reading connection (see the
    /// property).
    public init(
        path: String, station: String, synchronous: Synchronous = .normal,
        bootID: String = EventJournal.currentBootID(),
        idBlock: Int64 = 1000, handsOutIDs: Bool = true
    ) throws(JournalError) {
        precondition(idBlock >= 1, "an id block holds at least one id")
        self.path = path
        self.station = station
        self.synchronous = synchronous
        self.bootID = bootID
        self.idBlock = idBlock
        self.handsOutIDs = handsOutIDs
        idMarks = IDMarkFile(journalPath: path)
        if handsOutIDs { movedAsideLog = try Self.moveAsideStaleLog(path, marks: idMarks) }
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK else {
            let error = failure("open", rc)
            sqlite3_close_v2(db)
            db = nil
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Self.lockWaitMilliseconds)
        do {
            // journal_mode answers with a row: the mode in force (a file that cannot hold a WAL says "delete").
            // Before anything is written (WAL mode is written into the file): another program's file stays as it was.
            try checkSchema()
            try execute("PRAGMA journal_mode=WAL", operation: "open")
            try execute("PRAGMA synchronous=\(synchronous == .full ? "FULL" : "NORMAL")", operation: "open")
            try execute("PRAGMA cache_size=-\(Self.pageCacheKiB)", operation: "open")
            try execute(
                """
                CREATE TABLE IF NOT EXISTS events (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    station TEXT NOT NULL,
                    type TEXT NOT NULL,
                    wall REAL NOT NULL,
                    json TEXT NOT NULL)
                """, operation: "open")
            try execute("CREATE INDEX IF NOT EXISTS events_wall ON events(wall)", operation: "open")
            // `history sensor` (and any query for a rare type) walked every row before: 11 ms over 50 000 events,
            // during which live events wait; 0.05 ms with this index (2026-12-06).
            try execute("CREATE INDEX IF NOT EXISTS events_type_id ON events(type, id)", operation: "open")
            // The uplink's progress: per broker, the newest id up to which the broker acknowledged every event.
            try execute(
                """
                CREATE TABLE IF NOT EXISTS uplink_progress (
                    broker TEXT PRIMARY KEY,
                    acked_id INTEGER NOT NULL,
                    wall REAL NOT NULL)
                """, operation: "open")
            // The durable id reservation (one row): ids up to `reserved` may have been handed out; `clean` = 1 when
            // the last run closed the file (then `reserved` is its newest id); `boot` = the boot it was written in.
            try execute(
                """
                CREATE TABLE IF NOT EXISTS id_reservation (
                    one INTEGER PRIMARY KEY CHECK (one = 1),
                    reserved INTEGER NOT NULL,
                    clean INTEGER NOT NULL,
                    boot TEXT NOT NULL)
                """, operation: "open")
            // The file's identity: made once, with the file. Ids start over in a new file (the old one replaced
            // or deleted); a client that compares this with the one it resumed from knows its ids mean nothing here.
            try execute(
                """
                CREATE TABLE IF NOT EXISTS journal_identity (
                    one INTEGER PRIMARY KEY CHECK (one = 1),
                    identity TEXT NOT NULL)
                """, operation: "open")
            identity = try readIdentity(create: handsOutIDs)
            if handsOutIDs {
                try recoverIDs()
                try followIDMark()
            }
            insert = try prepare(
                "INSERT INTO events (station, type, wall, json) VALUES (?, ?, ?, ?)", operation: "open")
            select = try prepare(
                "SELECT id, station, type, wall, json FROM events WHERE id > ? ORDER BY id LIMIT ?", operation: "open")
            for suffix in ["", "-wal", "-shm"] { openedFiles[suffix] = FileIdentity(path + suffix) }
            if let file = openedFiles[""] { Self.openFiles.withLock { $0[file, default: 0] += 1 } }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the file (also done on deinit); every later call fails. Records, with an fsync, that every id up to
    /// the newest was kept, so the next open goes on without a gap. If that cannot be written (disk full), the next
    /// open after a reboot skips the rest of the reserved block: a gap, never a reused id.
    public func close() {
        if db != nil, insert != nil, handsOutIDs { try? reserve(through: lastID, clean: true) }
        sqlite3_finalize(insert)
        sqlite3_finalize(select)
        insert = nil
        select = nil
        // A file moved or replaced at `path` while open (a backup restored by `mv`): SQLite then neither checkpoints
        // this connection's write-ahead log nor removes it (nor the shared memory) when it closes, and the next open
        // of `path` would apply them to the other file, and damage it. So: the log is checkpointed into the file
        // this connection has open (wherever it went: moved aside, it keeps its last events), and the connection
        // that hands out ids removes `path-wal` and `path-shm` when they are still the ones it opened (a symlinked
        // path has them beside its target, never recorded here).
        let replaced = db != nil && openedFiles[""] != nil && FileIdentity(path) != openedFiles[""]
        if replaced { sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil) }
        if db != nil { sqlite3_close_v2(db) }
        db = nil
        if let file = openedFiles[""] {
            Self.openFiles.withLock { open in
                open[file, default: 1] -= 1
                if open[file] == 0 { open[file] = nil }
            }
        }
        if replaced, handsOutIDs {
            for suffix in ["-wal", "-shm"]
            where openedFiles[suffix] != nil && FileIdentity(path + suffix) == openedFiles[suffix] {
                unlink(path + suffix)
            }
        }
        openedFiles = [:]
    }

    /// The file this connection opened (device and inode of `path` at open); nil when closed, or when it could not
    /// be read.
    public var openedFile: FileIdentity? { openedFiles[""] }

    /// How many connections of this process (`EventJournal`s not closed) have `file` open. A file that one of them
    /// still has open must not be opened again by another after it left its path and came back (moved away and
    /// back): SQLite shares one shared-memory index per file within a process, which for that connection is the
    /// `-shm` removed from the path when the file left it, while a new connection would open a new `-wal` there:
    /// one index for two logs damages the file. Nor may a descriptor of that file be closed outside SQLite
    /// (`JournalLock`): that drops the process's POSIX locks on it, SQLite's among them.
    public static func openConnections(to file: FileIdentity) -> Int { openFiles.withLock { $0[file] ?? 0 } }

    /// The files connections of this process have open, and how many each (`openConnections(to:)`).
    private static let openFiles = Mutex<[FileIdentity: Int]>([:])

    /// How long a statement waits for another connection's lock on the file before it fails (`SQLITE_BUSY`).
    public static let lockWaitMilliseconds: Int32 = 2000

    /// The most memory SQLite's page cache of one connection may hold, KiB (`PRAGMA cache_size`). SQLite's default,
    /// 2000 KiB, fills with the pages appends and queries touch and stays full: a repd that had run a while held about
    /// 1.9 MiB more anonymous memory than with this bound (measured 2026-12-06, `RssAnon` of a debug repd after 4400
    /// events: 6.7 against 4.8 MiB), and the uplink's connection can hold as much again. Costs measured the same day:
    /// 20 000 appends 0.90–0.94 s instead of 0.73–0.75 s, a replay of them to a fast reader 1.5–1.7 s instead of
    /// 1.4–1.5 s.
    public static let pageCacheKiB = 256

    /// Whether statements wait up to `lockWaitMilliseconds` for another connection's lock (true, as opened) or fail
    /// at once (false: while appends keep failing, each would wait again; repd publishes the event without an id
    /// instead, at once).
    public func waitForLocks(_ wait: Bool) {
        sqlite3_busy_timeout(db, wait ? Self.lockWaitMilliseconds : 0)
    }

    /// The file's identity, made when the file was (32 random hex digits): `hello`'s `journal`. A replaced or deleted
    /// journal's successor has another, while its ids start over; "" on a reading connection to a file that has none
    /// yet.
    public private(set) var identity = ""

    /// Reads the file's identity, or (`create`) makes it when the file has none: a new file, or one from before
    /// identities.
    /// The message types repd journals.
    private static let allTypes: Set = ["set_start", "rep", "set_end", "sensor"]

    /// The tables a repd journal holds (`sqlite_sequence` is SQLite's own, for AUTOINCREMENT).
    private static let ownTables: Set = [
        "events", "uplink_progress", "id_reservation", "journal_identity", "sqlite_sequence",
    ]
    /// The columns of `events`, in order.
    private static let eventColumns = ["id", "station", "type", "wall", "json"]

    /// Refuses a database that is not a repd journal (another program's file named by mistake: repd would add its
    /// tables to it) or holds an `events` table of another shape (appends would fail one by one), naming what it
    /// found. A new, empty file passes.
    private func checkSchema() throws(JournalError) {
        var tables: [String] = []
        let list = try prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", operation: "open")
        defer { sqlite3_finalize(list) }
        while sqlite3_step(list) == SQLITE_ROW { tables.append(text(list, 0)) }
        let foreign = tables.filter { !Self.ownTables.contains($0) }
        guard foreign.isEmpty else {
            throw JournalError(
                path: path, operation: "open", code: SQLITE_MISMATCH,
                message:
                    "not a repd journal: it holds the tables \(foreign.joined(separator: ", ")) (another program's database?); "
                    + "name a file of its own in journal.path")
        }
        guard tables.contains("events") else { return }
        var columns: [String] = []
        let info = try prepare("PRAGMA table_info(events)", operation: "open")
        defer { sqlite3_finalize(info) }
        while sqlite3_step(info) == SQLITE_ROW { columns.append(text(info, 1)) }
        guard columns == Self.eventColumns, tables.contains("sqlite_sequence") else {
            throw JournalError(
                path: path, operation: "open", code: SQLITE_MISMATCH,
                message:
                    "its events table is not a repd journal's (columns \(columns.joined(separator: ", ")), expected \(Self.eventColumns.joined(separator: ", ")) with AUTOINCREMENT ids)"
            )
        }
    }

    private func readIdentity(create: Bool) throws(JournalError) -> String {
        let statement = try prepare("SELECT identity FROM journal_identity WHERE one = 1", operation: "open")
        defer { sqlite3_finalize(statement) }
        let rc = sqlite3_step(statement)
        if rc == SQLITE_ROW { return text(statement, 0) }
        guard rc == SQLITE_DONE else { throw failure("open", rc) }
        guard create else { return "" }
        var generator = SystemRandomNumberGenerator()
        let made = (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
        try execute(
            "INSERT OR IGNORE INTO journal_identity (one, identity) VALUES (1, '\(made)')", operation: "open")
        return made
    }

    /// Stores an event and returns its id. The id is covered by a durable reservation before it is returned (see
    /// the type's comment); when that reservation cannot be written, nothing is stored and the error is thrown.
    public func append(type: String, json: String, wall: Double) throws(JournalError) -> Int64 {
        guard let insert else { throw closedError("append") }
        guard handsOutIDs else {
            throw JournalError(path: path, operation: "append", code: SQLITE_MISUSE, message: "a reading connection")
        }
        if lastID + 1 > reservedThrough { try reserve(through: lastID + idBlock, clean: false) }
        defer {
            sqlite3_reset(insert)
            sqlite3_clear_bindings(insert)
        }
        sqlite3_bind_text(insert, 1, station, -1, transient)
        sqlite3_bind_text(insert, 2, type, -1, transient)
        sqlite3_bind_double(insert, 3, wall)
        sqlite3_bind_text(insert, 4, json, -1, transient)
        let rc = sqlite3_step(insert)
        guard rc == SQLITE_DONE else { throw failure("append", rc) }
        lastID = sqlite3_last_insert_rowid(db)
        return lastID
    }

    /// The running kernel's boot id (`/proc/sys/kernel/random/boot_id`); "unknown" where it cannot be read (a
    /// `ProcSubset=pid` sandbox hides it), which counts as another boot, whatever was stored: the safe side, a gap
    /// rather than a reused id.
    public static func currentBootID() -> String {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return "unknown" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "unknown" }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let id = text.filter { !$0.isWhitespace }
        return id.isEmpty ? "unknown" : id
    }

    /// At open: reads the reservation and, after a run that did not close the file on another boot, moves
    /// `sqlite_sequence` past the reserved block's end (`skippedIDs`).
    private func recoverIDs() throws(JournalError) {
        lastID = try newestID
        let statement = try prepare("SELECT reserved, clean, boot FROM id_reservation WHERE one = 1", operation: "open")
        defer { sqlite3_finalize(statement) }
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_ROW else {
            guard rc == SQLITE_DONE else { throw failure("open", rc) }
            reservedThrough = lastID  // a new file, or one from before reservations: nothing handed out above it
            return
        }
        let reserved = sqlite3_column_int64(statement, 0)
        let clean = sqlite3_column_int64(statement, 1) != 0
        let boot = text(statement, 2)
        reservedThrough = max(reserved, lastID)
        let sameBoot = boot == bootID && bootID != "unknown"
        guard !clean, !sameBoot, reserved > lastID else { return }
        // sqlite_sequence has a row for `events` once any id was handed out; INSERT covers a file whose first
        // events were all lost.
        try execute("DELETE FROM sqlite_sequence WHERE name = 'events'", operation: "open")
        try execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', \(reserved))", operation: "open")
        skippedIDs = (from: lastID, to: reserved)
        skipReason = .notClosedBeforeBoot
        lastID = reserved
    }

    /// Before the file is opened: when the last run at this path did not close its file (a crash) and that file is
    /// not the one there now (a backup put back with `mv`), the write-ahead log and shared memory it left belong to
    /// that other file; SQLite would apply them to this one and damage it. They are renamed `-wal.stale` and
    /// `-shm.stale`, or `.stale.2`, `.stale.3`… when an earlier one has that name (kept, never deleted or
    /// replaced). Returns what was done, nil when nothing was; throws when the log cannot be renamed (opening would
    /// apply it).
    static func moveAsideStaleLog(_ path: String, marks: IDMarkFile) throws(JournalError) -> String? {
        // The inode alone: the device number of the same file system can change across a reboot (btrfs, overlay,
        // NFS), and taking the crashed run's own file for another then moved its committed events aside. A file put
        // in its place has another inode (`mv`), or the same when copied in place, which this cannot tell either way.
        guard let last = marks.read().first?.mark, !last.clean, let file = FileIdentity(path),
            file.inode != last.inode
        else { return nil }
        var info = stat()
        guard stat(path + "-wal", &info) == 0, info.st_size > 0 else { return nil }
        var stale = ".stale"
        var number = 1
        while access(path + "-wal" + stale, F_OK) == 0 || access(path + "-shm" + stale, F_OK) == 0 {
            number += 1
            stale = ".stale.\(number)"
        }
        // The log first: shared memory without its log is rebuilt by SQLite, a log is applied.
        for suffix in ["-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            guard rename(path + suffix, path + suffix + stale) == 0 || suffix == "-shm" else {
                throw JournalError(
                    path: path, operation: "open", code: SQLITE_CANTOPEN,
                    message: "\(path)-wal was left by a run that did not close another file at this path, and "
                        + "cannot be renamed \(path)-wal\(stale) (\(String(cString: strerror(errno)))): SQLite would "
                        + "apply it to this file; move it away")
            }
        }
        return
            "\(path)-wal (\(info.st_size) bytes) and -shm were left by a run that did not close another file at this path: renamed \(path)-wal\(stale) and -shm\(stale)"
    }

    /// At open, after `recoverIDs()`: when the id mark beside the file says this identity handed out more ids here
    /// than the file holds (a backup put back), moves `sqlite_sequence` past them. An open mark (the last run did
    /// not close) of this very file whose reservation reaches as far leaves what `recoverIDs()` decided.
    private func followIDMark() throws(JournalError) {
        guard let mark = idMarks.mark(of: identity) else { return }
        // The inode alone, as in `moveAsideStaleLog`: a device renumbered across a reboot is the same file.
        if !mark.clean, FileIdentity(path)?.inode == mark.inode, reservedThrough >= mark.reserved { return }
        guard mark.reserved > lastID else { return }
        try execute("DELETE FROM sqlite_sequence WHERE name = 'events'", operation: "open")
        try execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('events', \(mark.reserved))", operation: "open")
        skippedIDs = (from: skippedIDs?.from ?? lastID, to: mark.reserved)
        skipReason = .fileBehindIDMark
        lastID = mark.reserved
        reservedThrough = max(reservedThrough, mark.reserved)
    }

    /// Commits the reservation with an fsync (`synchronous = FULL` for this one commit): ids up to `through` may be
    /// handed out; `clean` records a closed file.
    private func reserve(through: Int64, clean: Bool) throws(JournalError) {
        if synchronous != .full { try execute("PRAGMA synchronous=FULL", operation: "reserve ids") }
        defer { if synchronous != .full { try? execute("PRAGMA synchronous=NORMAL", operation: "reserve ids") } }
        let statement = try prepare(
            "INSERT INTO id_reservation (one, reserved, clean, boot) VALUES (1, ?, ?, ?) ON CONFLICT(one) DO UPDATE "
                + "SET reserved = excluded.reserved, clean = excluded.clean, boot = excluded.boot",
            operation: "reserve ids")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, through)
        sqlite3_bind_int(statement, 2, clean ? 1 : 0)
        sqlite3_bind_text(statement, 3, bootID, -1, transient)
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_DONE else { throw failure("reserve ids", rc) }
        reservedThrough = through
        // After the file's own commit, so the mark never runs ahead of a reservation the file holds.
        if let file = openedFiles[""] ?? FileIdentity(path) {
            let mark = IDMarkFile.Mark(reserved: through, clean: clean, device: file.device, inode: file.inode)
            idMarkProblem = idMarks.write(mark, for: identity)
        }
    }

    /// At most `limit` events with an id above `id`, oldest first.
    public func events(after id: Int64, limit: Int) throws(JournalError) -> [JournalEntry] {
        guard let select else { throw closedError("query") }
        defer { sqlite3_reset(select) }
        sqlite3_bind_int64(select, 1, id)
        sqlite3_bind_int64(select, 2, Int64(limit))
        return try entries(stepping: select)
    }

    /// The events `query` selects, oldest first (with `query.latest`, the newest `query.limit` of them, still oldest
    /// first).
    public func events(matching query: JournalQuery) throws(JournalError) -> [JournalEntry] {
        var conditions = ["id > ?1"]
        if query.before != nil { conditions.append("id < ?2") }
        if query.from != nil { conditions.append("wall >= ?3") }
        if query.to != nil { conditions.append("wall < ?4") }
        // Every type asked for is no condition: with it SQLite would take the type index and sort (4 times slower for
        // a `to`-bounded latest page).
        if let types = query.types, !Self.allTypes.isSubset(of: Set(types)) {
            // The types are the protocol's own names, checked by the caller; quoting keeps any other text inert.
            let list = types.map { "'" + $0.replacing("'", with: "''") + "'" }.joined(separator: ",")
            conditions.append("type IN (\(list))")
        }
        let order = query.latest ? "DESC" : "ASC"
        let statement = try prepare(
            "SELECT id, station, type, wall, json FROM events WHERE \(conditions.joined(separator: " AND ")) "
                + "ORDER BY id \(order) LIMIT ?5", operation: "query")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, query.after)
        if let before = query.before { sqlite3_bind_int64(statement, 2, before) }
        if let from = query.from { sqlite3_bind_double(statement, 3, from) }
        if let to = query.to { sqlite3_bind_double(statement, 4, to) }
        sqlite3_bind_int64(statement, 5, Int64(max(0, query.limit)))
        let entries = try entries(stepping: statement)
        return query.latest ? entries.reversed() : entries
    }

    /// Steps a bound `SELECT id, station, type, wall, json …` to its end and returns its rows.
    private func entries(stepping statement: OpaquePointer) throws(JournalError) -> [JournalEntry] {
        var entries: [JournalEntry] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw failure("query", rc) }
            entries.append(
                JournalEntry(
                    id: sqlite3_column_int64(statement, 0), station: text(statement, 1), type: text(statement, 2),
                    wall: sqlite3_column_double(statement, 3), json: text(statement, 4)))
        }
        return entries
    }

    /// The id of the newest event ever stored (also when pruned since), 0 for a new journal.
    public var newestID: Int64 {
        get throws(JournalError) {
            // sqlite_sequence remembers the largest id AUTOINCREMENT handed out, even after those rows are gone.
            let statement = try prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'", operation: "query")
            defer { sqlite3_finalize(statement) }
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW { return sqlite3_column_int64(statement, 0) }
            guard rc == SQLITE_DONE else { throw failure("query", rc) }
            return 0
        }
    }

    /// The id of the oldest event still stored, nil when none is.
    public var oldestID: Int64? {
        get throws(JournalError) {
            let statement = try prepare("SELECT min(id) FROM events", operation: "query")
            defer { sqlite3_finalize(statement) }
            guard sqlite3_step(statement) == SQLITE_ROW else { throw failure("query", sqlite3_errcode(db)) }
            return sqlite3_column_type(statement, 0) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, 0)
        }
    }

    /// The newest id up to which `broker` acknowledged every event (the uplink's progress), 0 when it has none.
    public func ackedID(broker: String) throws(JournalError) -> Int64 {
        let statement = try prepare("SELECT acked_id FROM uplink_progress WHERE broker = ?", operation: "query")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, broker, -1, transient)
        let rc = sqlite3_step(statement)
        if rc == SQLITE_ROW { return sqlite3_column_int64(statement, 0) }
        guard rc == SQLITE_DONE else { throw failure("query", rc) }
        return 0
    }

    /// Stores the uplink's progress for `broker` (`wall`: Unix time of the acknowledgement).
    public func setAckedID(_ id: Int64, broker: String, wall: Double) throws(JournalError) {
        let statement = try prepare(
            "INSERT INTO uplink_progress (broker, acked_id, wall) VALUES (?, ?, ?) "
                + "ON CONFLICT(broker) DO UPDATE SET acked_id = excluded.acked_id, wall = excluded.wall",
            operation: "uplink progress")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_text(statement, 1, broker, -1, transient)
        sqlite3_bind_int64(statement, 2, id)
        sqlite3_bind_double(statement, 3, wall)
        let rc = sqlite3_step(statement)
        guard rc == SQLITE_DONE else { throw failure("uplink progress", rc) }
    }

    /// The memory this connection's page cache holds now, bytes (`SQLITE_DBSTATUS_CACHE_USED`): at most about
    /// `pageCacheKiB`, however many events were appended or read.
    public var pageCacheBytes: Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        guard db != nil, sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0) == SQLITE_OK else {
            return 0
        }
        return Int(current)
    }

    /// The bytes the file's pages in use take (`page_count` − `freelist_count`, times `page_size`): what the events
    /// need, without the space deleted events left for reuse, and without the WAL.
    public var usedBytes: Int64 {
        get throws(JournalError) {
            func pragma(_ name: String) throws(JournalError) -> Int64 {
                let statement = try prepare("PRAGMA \(name)", operation: "query")
                defer { sqlite3_finalize(statement) }
                guard sqlite3_step(statement) == SQLITE_ROW else { throw failure("query", sqlite3_errcode(db)) }
                return sqlite3_column_int64(statement, 0)
            }
            return try (pragma("page_count") - pragma("freelist_count")) * pragma("page_size")
        }
    }

    /// Retention: deletes events published before `olderThan` (Unix time; nil keeps any age) — with
    /// `ageDeletableThrough`, only those with an id up to it (`AppendTimeline`: the later ones are younger than their
    /// `wall` says) —, all but the newest `maxRows` (nil keeps any number), and then the oldest while the events take
    /// more than `maxBytes` of the file (`usedBytes`; nil: no limit; deleted space is reused, so the file stays at about
    /// that size). Returns how many were deleted.
    @discardableResult
    public func prune(
        olderThan: Double?, maxRows: Int?, maxBytes: Int64? = nil, ageDeletableThrough: Int64? = nil
    ) throws(JournalError) -> Int {
        guard db != nil else { throw closedError("prune") }
        var deleted = 0
        if let olderThan {
            let ids = ageDeletableThrough.map { " AND id <= \($0)" } ?? ""
            try execute("DELETE FROM events WHERE wall < \(olderThan)\(ids)", operation: "prune")
            deleted += Int(sqlite3_changes(db))
        }
        if let maxRows {
            // By position, not by id arithmetic: ids have gaps (after a power cut, see the type's comment).
            let sql =
                maxRows <= 0
                ? "DELETE FROM events"
                : "DELETE FROM events WHERE id < (SELECT id FROM events ORDER BY id DESC LIMIT 1 OFFSET \(maxRows - 1))"
            try execute(sql, operation: "prune")
            deleted += Int(sqlite3_changes(db))
        }
        if let maxBytes {
            // Rows are about the same size: delete the oldest share that brings the file to 90 % of the limit, then
            // measure again (at most a few rounds; a journal of one huge row stops when it is empty).
            for _ in 0..<8 {
                let used = try usedBytes
                guard used > maxBytes else { break }
                let rows = try rowCount()
                guard rows > 0 else { break }
                let share = 1 - Double(maxBytes) * 0.9 / Double(used)
                let drop = max(1, Int64((Double(rows) * share).rounded(.up)))
                try execute(
                    "DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY id LIMIT \(drop))",
                    operation: "prune")
                deleted += Int(sqlite3_changes(db))
            }
        }
        return deleted
    }

    /// How many events with an id above `id` carry a `wall` before `olderThan` (Unix time): those age retention
    /// keeps because `AppendTimeline` knows them to be younger.
    public func countDated(before olderThan: Double, above id: Int64) throws(JournalError) -> Int {
        let statement = try prepare("SELECT count(*) FROM events WHERE wall < ?1 AND id > ?2", operation: "prune")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_double(statement, 1, olderThan)
        sqlite3_bind_int64(statement, 2, id)
        guard sqlite3_step(statement) == SQLITE_ROW else { throw failure("prune", sqlite3_errcode(db)) }
        return Int(sqlite3_column_int64(statement, 0))
    }

    /// How many events the file holds.
    private func rowCount() throws(JournalError) -> Int64 {
        let statement = try prepare("SELECT count(*) FROM events", operation: "prune")
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw failure("prune", sqlite3_errcode(db)) }
        return sqlite3_column_int64(statement, 0)
    }

    // MARK: - SQLite plumbing

    /// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns.
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: bytes)
    }

    private func prepare(_ sql: String, operation: String) throws(JournalError) -> OpaquePointer {
        guard db != nil else { throw closedError(operation) }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw failure(operation, rc) }
        return statement
    }

    /// Runs one statement to its end, ignoring any rows it answers with.
    private func execute(_ sql: String, operation: String) throws(JournalError) {
        let statement = try prepare(sql, operation: operation)
        defer { sqlite3_finalize(statement) }
        var rc = sqlite3_step(statement)
        while rc == SQLITE_ROW { rc = sqlite3_step(statement) }
        guard rc == SQLITE_DONE else { throw failure(operation, rc) }
    }

    private func failure(_ operation: String, _ rc: Int32) -> JournalError {
        var message =
            db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
        if rc & 0xFF == SQLITE_CANTOPEN || rc & 0xFF == SQLITE_READONLY, let why = Self.whyNotWritable(path) {
            message += " (\(why))"
        } else if rc & 0xFF == SQLITE_IOERR || rc & 0xFF == SQLITE_FULL, let full = Self.fullFileSystem(path) {
            // SQLite says "disk I/O error" when it cannot grow its shared memory file (SQLITE_IOERR_SHMSIZE) on a
            // full disk: that reads like a failing card, when the file is intact and the disk only full.
            message += " (\(full))"
        }
        return JournalError(path: path, operation: operation, code: rc, message: message)
    }

    /// What the file system holding the journal at `path` says when it is full or nearly (under 64 KiB free for
    /// repd), nil otherwise.
    public static func fullFileSystem(_ path: String) -> String? {
        let folder = PathText.folder(of: path)
        var info = statvfs()
        guard statvfs(folder, &info) == 0 else { return nil }
        let free = UInt64(info.f_bavail) * UInt64(info.f_frsize)
        guard free < 64 * 1024 else { return nil }
        return "the file system holding \(folder) is full: \(free / 1024) KiB free"
    }

    /// What the file system says against a journal at `path` (SQLite says only "unable to open database file" or
    /// "attempt to write a readonly database"): a folder in its place, a folder that does not exist or takes no
    /// new files (the log and shared memory files are made beside it), a file or its log that may not be written.
    static func whyNotWritable(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return "it is a folder, not a file" }
        let folder = PathText.folder(of: path)
        guard stat(folder, &info) == 0 else { return "its folder \(folder): \(String(cString: strerror(errno)))" }
        guard access(folder, W_OK) == 0 else {
            return "its folder \(folder) takes no new files (\(String(cString: strerror(errno)))): SQLite makes the "
                + "-wal and -shm files beside the journal"
        }
        for file in [path, path + "-wal", path + "-shm"] where access(file, F_OK) == 0 && access(file, W_OK) != 0 {
            return "\(file) may not be written: \(String(cString: strerror(errno))) (owned by another user?)"
        }
        return nil
    }

    private func closedError(_ operation: String) -> JournalError {
        JournalError(path: path, operation: operation, code: SQLITE_MISUSE, message: "the journal is closed")
    }
}
