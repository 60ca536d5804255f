import LinuxIIO
import Logging
import RepJournal
import RepProtocol
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's side of the event journal: journals each `set_start`, `rep`, `set_end` and `sensor` event before it
/// is published, and reads them back for a client's replay (`subscribe since=ID`).
///
/// One lock holds the journal. An event's append and the hand-over of its line to the hub's event loop happen under
/// it, so lines reach the loop in id order whichever thread (pipeline, sensor) published them; a replay, which runs
/// on that loop, therefore sees every event whose line is not yet fanned out, and the hub skips those by id.
///
/// When the journal cannot be written (disk full, file damaged) the event still goes out, without an id: counting
/// never waits on the disk. That is logged once when it starts (at most once a minute) and once when it ends.
///
/// The lock is a pthread mutex (`NIOLock`), not `Synchronization.Mutex`: on Linux the latter hands a contended lock
/// over in the kernel (a priority-inheriting futex), which ThreadSanitizer cannot see, so it reported the journal's
/// state, whose lock is held across SQLite writes and so often contended, as raced.
final class EventRecorder: @unchecked Sendable {
    /// The station written with every event and sent as `station` (the host name).
    let station: String
    /// The database file.
    let path: String
    private let lock = NIOLock()
    /// Only touched under `lock` (through `locked`).
    private var lockedState: State
    private let maxAge: Double?
    private let maxEvents: Int?
    private let maxBytes: Int64?
    private let logger: Logger

    private struct State {
        var journal: EventJournal?
        var failing = false
        var lastError: String?
        /// When (wall clock) the last append error was logged: a disk that is nearly full lets an append through
        /// now and then, and the error is not logged again within a minute of the last.
        var errorLogged: Double = -.infinity
        var appendedSincePrune = 0
    }

    /// Opens the journal; throws (with the file and SQLite's reason) when it cannot be opened.
    static func open(
        path: String, synchronous: EventJournal.Synchronous, maxAgeDays: Double, maxEvents: Int, maxSizeMB: Int = 0,
        station: String = "", logger: Logger
    ) throws(JournalError) -> EventRecorder {
        let station = station.isEmpty ? stationName(hostName()) : station
        let journal = try EventJournal(path: path, station: station, synchronous: synchronous)
        let recorder = EventRecorder(
            journal: journal, path: path, station: station, maxAge: maxAgeDays > 0 ? maxAgeDays * 86_400 : nil,
            maxEvents: maxEvents > 0 ? maxEvents : nil, maxBytes: maxSizeMB > 0 ? Int64(maxSizeMB) << 20 : nil,
            logger: logger)
        let newest = recorder.newestID ?? 0
        logger.info("journal: \(path) (synchronous=\(synchronous.rawValue)), newest event id \(newest)")
        if let skipped = journal.skippedIDs {
            logger.warning(
                "journal: \(path) was not closed by repd before the last boot (a power cut?): events after id \(skipped.from) may be lost; new ids start after \(skipped.to), so none sent before is reused"
            )
        }
        recorder.prune()
        return recorder
    }

    private init(
        journal: EventJournal, path: String, station: String, maxAge: Double?, maxEvents: Int?, maxBytes: Int64?,
        logger: Logger
    ) {
        lockedState = State(journal: journal)
        self.path = path
        self.station = station
        self.maxAge = maxAge
        self.maxEvents = maxEvents
        self.maxBytes = maxBytes
        self.logger = logger
    }

    /// Journals an event (`body`: its line) and calls `publish` with the line to send, with `id` and `station` when
    /// it was journaled, and the id; `publish` runs under the journal's lock and must not block.
    func record(type: String, body: String, wall: Double, publish: (String, Int64?) -> Void) {
        locked { state in
            guard let journal = state.journal else { return publish(body, nil) }
            let id: Int64
            do {
                id = try journal.append(type: type, json: String(body.dropLast()), wall: wall)
            } catch {
                state.lastError = "\(error)"
                if !state.failing {
                    let now = wallClock()
                    if now - state.errorLogged >= 60 {
                        logger.error("\(error); events go out without ids until it can be written again")
                        state.errorLogged = now
                    } else {
                        logger.debug("\(error) (again)")
                    }
                    state.failing = true
                }
                return publish(body, nil)
            }
            if state.failing {
                logger.notice("journal: \(path) is written again (event id \(id))")
                state.failing = false
                state.lastError = nil
            }
            publish(ServerMessage.journaled(body, id: id, station: station), id)
            state.appendedSincePrune += 1
        }
        if locked({ $0.appendedSincePrune >= 1000 }) { prune() }
    }

    /// The journal's part of a `status` reply.
    var status: ServerMessage.JournalStatus {
        let (failing, lastError) = locked { ($0.failing, $0.lastError) }
        return ServerMessage.JournalStatus(path: path, newestID: newestID ?? 0, writing: !failing, error: lastError)
    }

    /// The id of the newest journaled event (nil when it cannot be read).
    var newestID: Int64? {
        locked { state in
            do { return try state.journal?.newestID } catch {
                logger.warning("\(error)")
                return nil
            }
        }
    }

    /// Journaled events after `id`, oldest first, at most `limit`; throws when they cannot be read.
    func events(after id: Int64, limit: Int) throws(JournalError) -> [JournalEntry] {
        try locked { state throws(JournalError) in
            guard let journal = state.journal else {
                throw JournalError(path: path, operation: "query", code: 21, message: "the journal is closed")
            }
            return try journal.events(after: id, limit: limit)
        }
    }

    /// The journaled events `query` selects; throws when they cannot be read.
    func events(matching query: JournalQuery) throws(JournalError) -> [JournalEntry] {
        try locked { state throws(JournalError) in
            guard let journal = state.journal else {
                throw JournalError(path: path, operation: "query", code: 21, message: "the journal is closed")
            }
            return try journal.events(matching: query)
        }
    }

    /// Applies retention (`journal.max_age_days`, `journal.max_events`, `journal.max_size_mb`): at start, every 1000
    /// events, and every hour (the daemon's timer, so an idle station ages its events out too).
    func prune() {
        locked { state in
            state.appendedSincePrune = 0
            guard let journal = state.journal, maxAge != nil || maxEvents != nil || maxBytes != nil else { return }
            do {
                let deleted = try journal.prune(
                    olderThan: maxAge.map { wallClock() - $0 }, maxRows: maxEvents, maxBytes: maxBytes)
                if deleted > 0 { logger.debug("journal: retention deleted \(deleted) events") }
            } catch {
                logger.warning("\(error)")
            }
        }
    }

    /// Runs `body` on the state under the lock.
    private func locked<T, E: Error>(_ body: (inout State) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&lockedState)
    }

    /// Closes the file (at shutdown).
    func close() {
        locked { state in
            state.journal?.close()
            state.journal = nil
        }
    }

    /// The host name as a station name: characters other than letters, digits, `.`, `_`, `-` become `_` (the
    /// station is an MQTT topic level).
    static func stationName(_ host: String) -> String {
        let bytes = host.utf8.prefix(64).map { byte -> UInt8 in
            let ok = (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            return ok ? byte : UInt8(ascii: "_")
        }
        return bytes.isEmpty ? "repd" : String(decoding: bytes, as: UTF8.self)
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The journal file the configuration's `auto` stands for: `$STATE_DIRECTORY/events.db` (systemd's
    /// `StateDirectory=`, the first when there are several), else `$XDG_STATE_HOME/repd/events.db`, else
    /// `~/.local/state/repd/events.db`. Creates the folder in the last two cases.
    static func defaultPath() -> String? {
        func variable(_ name: String) -> String? {
            guard let value = getenv(name).map({ String(cString: $0) }), !value.isEmpty else { return nil }
            return value
        }
        if let state = variable("STATE_DIRECTORY") {
            return String(state.split(separator: ":").first ?? Substring(state)) + "/events.db"
        }
        let base: String
        if let xdg = variable("XDG_STATE_HOME") {
            base = xdg
        } else if let home = variable("HOME") {
            base = home + "/.local/state"
        } else {
            return nil
        }
        let folder = base + "/repd"
        var path = ""
        for component in folder.split(separator: "/") {
            path += "/" + component
            mkdir(path, 0o700)  // EEXIST is fine; any other failure shows when the journal cannot be opened
        }
        return folder + "/events.db"
    }
}
