import LinuxIIO
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PlainText
import RepJournal
import RepProtocol
import RepSettings
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's side of the event journal: journals each `set_start`, `rep`, `set_end` and `sensor` event before it
/// is published, and reads them back for a client's replay (`subscribe since=ID`) and for `history`.
///
/// **One thread owns the file.** Every SQLite call — appends, replay pages, history, retention, close — runs on the
/// journal's own thread (a one-thread `NIOThreadPool`), one at a time, in the order submitted. Nothing else waits for
/// the disk: the detector and the sensor hand an event over and go on; the event loop hands a read over and gets its
/// answer back as a task.
///
/// **Order and the seam.** After each append the thread hands the event's line to the hub's event loop
/// (`EventLoop.execute`, first in first out). A read's answer goes back to the loop the same way, so when a replay
/// page arrives there, every event appended before the read (up to `handedOver`) has already been fanned out: the
/// hub can join a replaying client to the live stream right after the page, with no gap and no duplicate.
///
/// When the journal cannot be written (disk full, file damaged) the event still goes out, without an id: counting
/// never waits on the disk. That is logged once when it starts (at most once a minute) and once when it ends.
final class EventRecorder: @unchecked Sendable {
    /// The station written with every event and sent as `station` (the host name).
    let station: String
    /// The database file.
    let path: String
    /// The `[journal]` settings it was opened with (to open the file at `path` again, `followPath()`).
    private let settings: JournalSettings
    /// The journal's thread: the only one that touches `journal`, `fileLock` and `appendedSincePrune`.
    private let thread: NIOThreadPool
    /// Only touched on `thread` (that is why the type is `@unchecked Sendable`).
    private var journal: EventJournal?
    /// Only touched on `thread`, and by `close()` after the thread stopped: the lock on the file repd writes, which
    /// keeps a second repd out (see `JournalLock`).
    private var fileLock: JournalLock
    /// Only touched on `thread`, and by `close()` after the thread stopped: the locks of files repd wrote before it
    /// went over to the file at `path`, each held until no connection of this process has its file open (the
    /// uplink's, which sends the last events of the old file: closing the lock's descriptor would drop SQLite's POSIX
    /// locks on it, `EventJournal.openConnections(to:)`).
    private var retiredLocks: [(file: FileIdentity?, lock: JournalLock)] = []
    /// Only touched on `thread`: set by `close()`, after which the file is never opened again.
    private var closed = false
    /// Only touched on `thread`: when (by the uptime) the file at `path` was last tried after it could not be opened;
    /// it is tried again at most every `reopenInterval` (a file another process holds locked makes each try wait the
    /// whole lock wait, and the events behind it).
    private var lastOpenTry = -Double.infinity
    /// How often a file at `path` that could not be opened is tried again, at most (s).
    static let reopenInterval = 50.0
    /// Only touched on `thread`.
    private var appendedSincePrune = 0
    /// Only touched on `thread`: whether the journal fails at once on a lock, after an append failed.
    private var failingFast = false
    /// Only touched on `thread`: the id mark problem last logged (`EventJournal.idMarkProblem`).
    private var idMarkProblemLogged: String?
    /// Only touched on `thread`: the newest id whose line was handed to the event loop.
    private var handedOverID: Int64 = 0
    /// Only touched on `thread`: when (by the uptime) this run journaled its events, for age retention.
    private var timeline: AppendTimeline
    /// Only touched on `thread`: whether age retention kept events of this run that the wall clock dates too old
    /// (logged once, when it starts).
    private var keptMisdated = false
    /// The newest id handed out (what `hello` and `status` say), readable from any thread without the disk.
    private let newest: Synchronization.Atomic<Int64>
    /// Whether appends fail, and why, and which file repd writes; a short lock, never held across SQLite.
    private let health: NIOLockedValueBox<Health>
    /// Called on the journal's thread when repd went over to the file now at `path` (`followPath()`), before any
    /// event is journaled in it; set by the hub (`EventHub.follow(_:)`). Must not block.
    private let onNewFile = NIOLockedValueBox<(@Sendable (_ reason: String, _ file: FileIdentity?) -> Void)?>(nil)
    private let maxAge: Double?
    private let maxEvents: Int?
    private let maxBytes: Int64?
    private let logger: Logger

    private struct Health {
        var failing = false
        var lastError: String?
        /// When (wall clock) the last append error was logged: a disk that is nearly full lets an append through
        /// now and then, and the error is not logged again within a minute of the last.
        var errorLogged: Double = -.infinity
        /// The file's identity (`EventJournal.identity`), sent in `hello` as `journal`.
        var identity: String
        /// The (device, inode) of the file repd writes, as `path` named it at open; nil when it could not be read.
        var openedFile: FileIdentity?
        /// Why `path` no longer names the file repd writes while repd cannot go over to the file there (its folder
        /// is gone), as `status` says it; nil otherwise.
        var notFollowed: String?
        /// Whether the file at `path` could not be opened after the one repd wrote was closed (`followPath()`): no
        /// journal until it opens.
        var awaitingFile = false
    }

    /// Opens the journal the `[journal]` settings describe at `path` (the caller resolved `auto`), whose lock the
    /// caller took (`fileLock`, released here when opening fails, else at `close()`); an empty station is the host
    /// name. Throws (with the file and SQLite's reason) when it cannot be opened.
    static func open(
        _ settings: JournalSettings, path: String, fileLock: JournalLock, logger: Logger
    ) throws(JournalError) -> EventRecorder {
        let opened: (journal: EventJournal, newest: Int64)
        do { opened = try openFile(settings, path: path, logger: logger) } catch {
            fileLock.release()
            throw error
        }
        let recorder = EventRecorder(
            journal: opened.journal, newest: opened.newest, fileLock: fileLock, path: path, settings: settings,
            logger: logger)
        recorder.prune()
        return recorder
    }

    /// Opens the file at `path` (whose lock the caller holds): ends a set the last run left open (at start, not
    /// when going over to another file while repd runs, whose open set may be the one the detector counts now), logs
    /// what opening found (ids skipped, a stale log moved aside). Returns the journal and its newest id.
    private static func openFile(
        _ settings: JournalSettings, path: String, endingAnOpenSet: Bool = true, logger: Logger
    ) throws(JournalError) -> (journal: EventJournal, newest: Int64) {
        let synchronous = settings.synchronous
        let journal = try EventJournal(path: path, station: station(settings), synchronous: synchronous)
        var interrupted: (set: Int, reps: Int)?
        if endingAnOpenSet {
            do { interrupted = try InterruptedSet.close(in: journal) } catch {
                logger.warning("journal: cannot end the set the last run left open: \(error)")
            }
        }
        let newest: Int64
        do { newest = try journal.newestID } catch {
            journal.close()
            throw error
        }
        logger.info("journal: \(path) (synchronous=\(synchronous.rawValue)), newest event id \(newest)")
        if let interrupted {
            logger.notice(
                "journal: set \(interrupted.set) was left open by the last run (a crash or a power cut?): journaled its end, interrupted, with the \(interrupted.reps) reps it sent"
            )
        }
        if let moved = journal.movedAsideLog {
            logger.warning("journal: \(moved), so that SQLite does not apply them to the file there now")
        }
        if let skipped = journal.skippedIDs {
            switch journal.skipReason {
            case .fileBehindIDMark?:
                logger.warning(
                    "journal: \(path) holds events up to id \(skipped.from), but repd handed out ids up to \(skipped.to) from it (\(path).ids says so): an older copy of the file was put back (a backup restored?), or the last stop could not write that mark, or the file now lies on another device; new ids start after \(skipped.to), so none sent before is reused"
                )
            case .notClosedBeforeBoot?, nil:
                logger.warning(
                    "journal: \(path) was not closed by repd before the last boot (a power cut?): events after id \(skipped.from) may be lost; new ids start after \(skipped.to), so none sent before is reused"
                )
            }
        }
        return (journal, newest)
    }

    /// The file's identity (`EventJournal.identity`), sent in `hello` as `journal`: another one once repd went over
    /// to another file at `path` (`followPath()`).
    var identity: String { health.withLockedValue { $0.identity } }

    /// The file repd writes (device and inode, as `path` named it at open); nil while none is open.
    var currentFile: FileIdentity? { health.withLockedValue { $0.openedFile } }

    /// Whether `path` no longer names the file repd writes: it is gone (ENOENT) or names another file. Any other
    /// `stat` failure (EACCES) says nothing either way: false.
    private var fileReplaced: Bool {
        guard let opened = health.withLockedValue({ $0.openedFile }) else { return false }
        guard let now = FileIdentity(path) else { return errno == ENOENT }
        return now != opened
    }

    /// Has repd go over to the file at `path` when that no longer names the file it writes (the daemon asks every
    /// minute, and `status` each time; each append checks too, on the journal's thread: `followPath()`).
    func checkFile() {
        thread.submit { [self] state in
            guard state == .active else { return }
            followPath(retryingFailedOpen: true)
        }
    }

    /// Sets what is called (on the journal's thread) when repd went over to the file now at `path` (`file`: its
    /// device and inode), before any event is journaled in it: the hub then says `bye` to every client, whose ids
    /// came from the other file, and the uplink follows once the broker has the old file's events.
    func onNewFile(_ body: @escaping @Sendable (_ reason: String, _ file: FileIdentity?) -> Void) {
        onNewFile.withLockedValue { $0 = body }
    }

    /// On the journal's thread: when `path` no longer names the file repd writes, goes over to the file there, as a
    /// restart of repd would, so that nothing journaled from here on is lost with the old file when repd stops.
    ///
    /// An administrator's `rm events.db` (to start afresh) left repd writing to a file nobody could open, lost at
    /// its next start, and a backup put back with `mv` was not used until repd restarted (until 2026-12-07, `status`
    /// said `writing: false` and "restart repd"). Now the file written so far is closed (its write-ahead log
    /// checkpointed into it, and `path-wal`/`path-shm` removed when still its own, `EventJournal.close()`: SQLite
    /// would apply them to the new file), the lock taken on the file at `path`, and that file opened: a new journal
    /// when it was deleted (a new identity, ids from 1), or the file put there (a backup: its identity, and ids after
    /// every id handed out from it, `PATH.ids`). Every connected client is then told `bye` (`onNewFile`), before any
    /// event of the new file goes out: its ids mean something else. While the folder is gone too, nothing changes
    /// (repd goes on writing the old file; `status` says so). When the new file cannot be opened (no permission, a
    /// full disk), events go out without ids, and `checkFile()` tries it again (`retryingFailedOpen`, every minute).
    private func followPath(retryingFailedOpen: Bool = false) {
        guard !closed else { return }
        releaseRetiredLocks()
        let failedOpen = health.withLockedValue { $0.awaitingFile }
        if failedOpen {
            guard retryingFailedOpen, Self.uptime() - lastOpenTry >= Self.reopenInterval else { return }
        } else {
            guard journal != nil, fileReplaced else {
                // The file is back where it was (moved away and back while the folder was gone).
                if health.withLockedValue({ $0.notFollowed.take() }) != nil {
                    logger.notice("journal: \(path) is the file repd writes again")
                }
                return
            }
        }
        let there = FileIdentity(path)
        if let there, EventJournal.openConnections(to: there) > 0 {
            // The file repd wrote before this one, moved away and back, while the uplink still sends its last
            // events: opened again beside the uplink's connection it would be damaged (`openConnections(to:)`).
            notFollowed(
                "the journal \(path) was replaced while repd runs by a file repd wrote before, which the uplink still "
                    + "reads (it sends that file's last events, the broker away?): events go to the file repd has "
                    + "open, no longer at that path; repd goes over to the one there once the uplink is done with it")
            return
        }
        if there == nil {
            let folder = parentFolder(path)
            var info = stat()
            guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                notFollowed(
                    "the journal \(path) was deleted while repd runs, and its folder \(folder) is gone too: events go "
                        + "to the deleted file, lost when repd stops; repd starts a new journal there once the folder "
                        + "is back")
                return
            }
        }
        let what = there == nil ? "was deleted" : "was replaced by another file"
        if !failedOpen {
            let left = health.withLockedValue { $0.openedFile }
            journal?.close()
            journal = nil
            retiredLocks.append((left, fileLock))
            releaseRetiredLocks()
            logger.warning(
                "journal: \(path) \(what) while repd runs (at event id \(handedOverID)): closed the file repd wrote, opening the one at \(path)"
            )
        }
        health.withLockedValue {
            $0.openedFile = nil
            $0.awaitingFile = true
        }
        lastOpenTry = Self.uptime()
        let opened: (journal: EventJournal, newest: Int64)
        do {
            fileLock = try JournalLock(path: path)
        } catch {
            fileLock = JournalLock.none
            return noteOpenFailure("another process (another repd?) holds the lock on the journal \(path) now there")
        }
        do throws(JournalError) {
            opened = try Self.openFile(settings, path: path, endingAnOpenSet: false, logger: logger)
        } catch {
            fileLock.release()
            fileLock = JournalLock.none
            return noteOpenFailure("cannot open \(path): \(error.message)")
        }
        journal = opened.journal
        newest.store(opened.newest, ordering: .relaxed)
        handedOverID = opened.newest
        timeline = AppendTimeline(uptime: Self.uptime(), newestID: opened.newest)
        keptMisdated = false
        appendedSincePrune = 0
        failingFast = false
        idMarkProblemLogged = nil
        let identity = opened.journal.identity
        let file = opened.journal.openedFile
        let recovered = failedOpen
        health.withLockedValue { health in
            health.identity = identity
            health.openedFile = file
            health.notFollowed = nil
            health.awaitingFile = false
            health.failing = false
            health.lastError = nil
        }
        logger.notice(
            "journal: \(path) opened\(recovered ? " at last" : ""): events are journaled there from here on, from id \(opened.newest + 1) (journal \(identity)); clients are told bye, to resume from it"
        )
        onNewFile.withLockedValue { $0 }?("journal replaced", file)
        pruneOnThread()
    }

    /// While repd cannot go over to the file at `path` (`followPath()`): logged once, and `status` says why.
    private func notFollowed(_ reason: String) {
        let first = health.withLockedValue { health in
            defer { health.notFollowed = reason }
            return health.notFollowed != reason
        }
        if first { logger.error("\(reason)") }
    }

    /// Releases the locks of files repd wrote before that no connection of this process has open any more.
    private func releaseRetiredLocks() {
        guard !retiredLocks.isEmpty else { return }
        retiredLocks.removeAll { retired in
            guard retired.file.map({ EventJournal.openConnections(to: $0) }) ?? 0 == 0 else { return false }
            retired.lock.release()
            return true
        }
    }

    /// After the file at `path` could not be opened (`followPath()`): events go out without ids, `status` says why.
    private func noteOpenFailure(_ reason: String) {
        let message =
            "journal: \(reason); events go out without ids until it opens (repd tries again every minute)"
        let first = health.withLockedValue { health in
            defer {
                health.failing = true
                health.lastError = reason + " (repd tries again every minute)"
            }
            return health.lastError != reason + " (repd tries again every minute)"
        }
        if first { logger.error("\(message)") }
    }

    /// The folder that holds `path` ("." for a bare file name).
    private func parentFolder(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private init(
        journal: EventJournal, newest: Int64, fileLock: JournalLock, path: String, settings: JournalSettings,
        logger: Logger
    ) {
        self.journal = journal
        health = NIOLockedValueBox(Health(identity: journal.identity, openedFile: FileIdentity(path)))
        self.newest = Synchronization.Atomic(newest)
        handedOverID = newest
        timeline = AppendTimeline(uptime: Self.uptime(), newestID: newest)
        self.fileLock = fileLock
        self.path = path
        self.settings = settings
        station = Self.station(settings)
        maxAge = settings.maxAgeDays > 0 ? settings.maxAgeDays * 86_400 : nil
        maxEvents = settings.maxEvents > 0 ? settings.maxEvents : nil
        maxBytes = settings.maxSizeMB > 0 ? Int64(settings.maxSizeMB) << 20 : nil
        self.logger = logger
        thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        thread.submit { _ in NamedThread.nameCurrent("repd-journal") }  // as top -H shows it
    }

    /// Journals an event on the journal's thread and then calls `publish` there with the line to send (with `id`
    /// and `station` when it was journaled) and the id. Returns at once: the caller never waits for the disk.
    /// `publish` must not block (it hands the line to the event loop). The journal's `type`, `wall` and `json`
    /// columns are the event's `type`, `wall` and `json`.
    func record(_ event: JournaledEvent, publish: @escaping @Sendable (String, Int64?) -> Void) {
        thread.submit { [self] state in
            guard state == .active else { return publish(event.line, nil) }
            followPath()
            guard let journal else { return publish(event.line, nil) }
            let id: Int64
            // While appends fail, the next ones do not wait for a lock again: another process holding the file (an
            // sqlite3 shell in a transaction) made every event wait the full lock wait, 2 s, in a queue. Only the
            // append itself: reads, retention and the uplink's progress still wait as usual.
            let fast = failingFast
            if fast { journal.waitForLocks(false) }
            defer { if fast { journal.waitForLocks(true) } }
            do throws(JournalError) {
                id = try journal.append(type: event.type, json: event.json, wall: event.wall)
            } catch {
                failingFast = true
                noteFailure(error)
                return publish(event.line, nil)
            }
            failingFast = false
            if journal.idMarkProblem != idMarkProblemLogged {
                idMarkProblemLogged = journal.idMarkProblem
                if let problem = journal.idMarkProblem {
                    logger.warning(
                        "journal: cannot write the id mark beside the journal (\(problem)): events are journaled as before, but a backup of the journal put back later is seen only up to the last mark written"
                    )
                } else {
                    logger.notice("journal: the id mark beside the journal is written again")
                }
            }
            newest.store(id, ordering: .relaxed)
            noteSuccess(id)
            publish(event.line(id: id, station: station), id)
            handedOverID = id
            appendedSincePrune += 1
            if appendedSincePrune >= 1000 { pruneOnThread() }
        }
    }

    /// Returns when every event submitted before has been journaled and handed to its `publish` (at shutdown: the
    /// last `set_end` reaches the event loop before the socket server says `bye`).
    func flush() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            thread.submit { _ in done.resume() }
        }
    }

    /// Runs `body` with the journal on the journal's thread, after everything submitted before it, and hands its
    /// result to `eventLoop` (`deliver` runs there) together with the newest id whose line was handed to that loop
    /// before the read: every such line reaches the loop before `deliver` runs.
    func read<T: Sendable>(
        on eventLoop: EventLoop, _ body: @escaping @Sendable (EventJournal) throws(JournalError) -> T,
        deliver: @escaping @Sendable (Result<T, JournalError>, _ handedOver: Int64) -> Void
    ) {
        thread.submit { [self] state in
            let result: Result<T, JournalError>
            if state == .active, let journal {
                do throws(JournalError) { result = .success(try body(journal)) } catch { result = .failure(error) }
            } else {
                result = .failure(
                    JournalError(path: path, operation: "query", code: 21, message: "the journal is closed"))
            }
            let handedOver = handedOverID
            eventLoop.execute { deliver(result, handedOver) }
        }
    }

    private func noteFailure(_ error: JournalError) {
        health.withLockedValue { health in
            health.lastError = "\(error)"
            guard !health.failing else { return }
            let now = wallClock()
            if now - health.errorLogged >= 60 {
                logger.error("\(error); events go out without ids until it can be written again")
                health.errorLogged = now
            } else {
                logger.debug("\(error) (again)")
            }
            health.failing = true
        }
    }

    private func noteSuccess(_ id: Int64) {
        health.withLockedValue { health in
            guard health.failing else { return }
            logger.notice("journal: \(path) is written again (event id \(id))")
            health.failing = false
            health.lastError = nil
        }
    }

    /// The journal's part of a `status` reply.
    var status: ServerMessage.JournalStatus {
        checkFile()
        let (failing, lastError, notFollowed, awaiting) = health.withLockedValue {
            ($0.failing, $0.lastError, $0.notFollowed, $0.awaitingFile)
        }
        // While the folder is gone (`notFollowed`), or between the change and the journal thread's going over
        // (`checkFile()` just asked it to).
        let replaced = !awaiting && fileReplaced
        return ServerMessage.JournalStatus(
            path: path, newestID: newestID ?? 0, writing: !failing && !replaced,
            error: replaced
                ? notFollowed
                    ?? "the journal \(path) was deleted or replaced while repd runs: repd is going over to the file there"
                : lastError)
    }

    /// The id of the newest journaled event (as of the last append; no disk access).
    var newestID: Int64? { newest.load(ordering: .relaxed) }

    /// Applies retention (`journal.max_age_days`, `journal.max_events`, `journal.max_size_mb`) on the journal's
    /// thread: at start, every 1000 events, and every hour (the daemon's timer, so an idle station ages its events
    /// out too).
    func prune() {
        thread.submit { [self] state in
            guard state == .active else { return }
            pruneOnThread()
        }
    }

    private func pruneOnThread() {
        appendedSincePrune = 0
        guard let journal, maxAge != nil || maxEvents != nil || maxBytes != nil else { return }
        let now = Self.uptime()
        timeline.mark(uptime: now, newestID: handedOverID)
        let olderThan = maxAge.map { wallClock() - $0 }
        // Age goes by the wall clock, except for this run's events: those journaled less than max_age ago by the
        // uptime stay, whatever their wall time (a clock set forward since, `AppendTimeline`).
        let deletable = maxAge.map { timeline.newestDeletableByAge(age: $0, uptime: now) }
        do {
            let deleted = try journal.prune(
                olderThan: olderThan, maxRows: maxEvents, maxBytes: maxBytes, ageDeletableThrough: deletable)
            if deleted > 0 { logger.debug("journal: retention deleted \(deleted) events") }
            if !keptMisdated, let olderThan, let deletable {
                let kept = try journal.countDated(before: olderThan, above: deletable)
                if kept > 0 {
                    keptMisdated = true
                    logger.warning(
                        "journal: \(kept) events repd journaled since it started (ids after \(deletable)) carry a time more than journal.max_age_days ago: the clock was set forward since (a board without a clock of its own that reached a time server?); retention keeps them until they are that old by the uptime"
                    )
                }
            }
        } catch {
            logger.warning("\(error)")
        }
    }

    /// Closes the file (at shutdown), after every append and read submitted before, stops the thread and releases
    /// the lock. Later appends go out without ids.
    func close() {
        let done = ConditionLock(value: false)
        thread.submit { [self] _ in
            closed = true
            journal?.close()
            if let problem = journal?.idMarkProblem, problem != idMarkProblemLogged {
                logger.warning(
                    "journal: cannot write the id mark beside the journal at stop (\(problem)): the next start may skip up to a block of ids"
                )
            }
            journal = nil
            done.lock()
            done.unlock(withValue: true)
        }
        done.lock(whenValue: true)
        done.unlock()
        try? thread.syncShutdownGracefully()
        fileLock.release()
        for retired in retiredLocks { retired.lock.release() }
        retiredLocks = []
    }

    /// Seconds since boot, suspend included (`CLOCK_BOOTTIME`): never set, never stepped back.
    private static func uptime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The station the `[journal]` settings name: `station`, or else the host name (`stationName`).
    static func station(_ settings: JournalSettings) -> String {
        settings.station.isEmpty ? stationName(hostName()) : settings.station
    }

    /// The host name as a station name: characters other than letters, digits, `.`, `_`, `-` become `_` (the
    /// station is an MQTT topic level).
    static func stationName(_ host: String) -> String {
        let bytes = host.utf8.prefix(64).map { byte -> UInt8 in
            let ok =
                (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            return ok ? byte : UInt8(ascii: "_")
        }
        return bytes.isEmpty ? "repd" : String(decoding: bytes, as: UTF8.self)
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
