import CSQLite

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

    public var description: String { "journal \(path): \(operation) failed: \(message) (SQLite code \(code))" }
}

/// The on-board event store: a SQLite file in WAL mode holding every published workout and sensor event, so a
/// client that was away can ask for what it missed (`subscribe since=ID`).
///
/// Not thread-safe: one owner at a time (the daemon keeps it behind a lock). Ids come from
/// `INTEGER PRIMARY KEY AUTOINCREMENT`, so SQLite never hands out an id twice, even after the newest rows were
/// pruned or the file was reopened.
public final class EventJournal {
    /// How hard each commit waits for the disk (`PRAGMA synchronous`).
    public enum Synchronous: String, Sendable, Equatable, CaseIterable {
        /// `NORMAL`: in WAL mode a commit is durable once the WAL is checkpointed; a power cut can lose the last
        /// commits (never corrupt the file). A crash of repd alone loses nothing.
        case normal
        /// `FULL`: every commit is fsync'ed before `append` returns; a power cut loses nothing that was published.
        case full
    }

    /// The database file.
    public let path: String
    /// The station written with every event.
    public let station: String
    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?

    /// Opens (or creates) the journal at `path`. Throws a `JournalError` naming the file when it cannot be opened,
    /// is not a database, or cannot be written.
    public init(path: String, station: String, synchronous: Synchronous = .normal) throws(JournalError) {
        self.path = path
        self.station = station
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK else {
            let error = failure("open", rc)
            sqlite3_close_v2(db)
            db = nil
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 2000)
        do {
            // journal_mode answers with a row: the mode in force (a file that cannot hold a WAL says "delete").
            try execute("PRAGMA journal_mode=WAL", operation: "open")
            try execute("PRAGMA synchronous=\(synchronous == .full ? "FULL" : "NORMAL")", operation: "open")
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
            // The uplink's progress: per broker, the newest id up to which the broker acknowledged every event.
            try execute(
                """
                CREATE TABLE IF NOT EXISTS uplink_progress (
                    broker TEXT PRIMARY KEY,
                    acked_id INTEGER NOT NULL,
                    wall REAL NOT NULL)
                """, operation: "open")
            insert = try prepare("INSERT INTO events (station, type, wall, json) VALUES (?, ?, ?, ?)", operation: "open")
            select = try prepare(
                "SELECT id, station, type, wall, json FROM events WHERE id > ? ORDER BY id LIMIT ?", operation: "open")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the file (also done on deinit); every later call fails.
    public func close() {
        sqlite3_finalize(insert)
        sqlite3_finalize(select)
        insert = nil
        select = nil
        if db != nil { sqlite3_close_v2(db) }
        db = nil
    }

    /// Stores an event and returns its id.
    public func append(type: String, json: String, wall: Double) throws(JournalError) -> Int64 {
        guard let insert else { throw closedError("append") }
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
        return sqlite3_last_insert_rowid(db)
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
        if let types = query.types {
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

    /// Retention: deletes events published before `olderThan` (Unix time; nil keeps any age) and all but the newest
    /// `maxRows` (nil keeps any number). Returns how many were deleted.
    @discardableResult
    public func prune(olderThan: Double?, maxRows: Int?) throws(JournalError) -> Int {
        guard db != nil else { throw closedError("prune") }
        var deleted = 0
        if let olderThan {
            try execute("DELETE FROM events WHERE wall < \(olderThan)", operation: "prune")
            deleted += Int(sqlite3_changes(db))
        }
        if let maxRows {
            try execute(
                "DELETE FROM events WHERE id <= (SELECT max(id) FROM events) - \(max(0, maxRows))", operation: "prune")
            deleted += Int(sqlite3_changes(db))
        }
        return deleted
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
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
        return JournalError(path: path, operation: operation, code: rc, message: message)
    }

    private func closedError(_ operation: String) -> JournalError {
        JournalError(path: path, operation: operation, code: SQLITE_MISUSE, message: "the journal is closed")
    }
}
