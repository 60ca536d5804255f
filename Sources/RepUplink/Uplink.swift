import LinuxIIO
import Logging
import PlainText
import MotionCore
import RepJournal
import RepSettings
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The fleet uplink: follows the event journal and publishes every event to an MQTT broker (QoS 1), one JSON
/// message per event on `<prefix>/<station>/events`, with a retained `<prefix>/<station>/status` (`online`;
/// `offline` at a clean stop, and as the last will).
///
/// It runs on a thread of its own that owns the libmosquitto client and its own connection to the journal's
/// SQLite file (WAL: reading never waits for the daemon's writes), so nothing here can hold up the sensor reader,
/// the detector or the socket server's event loop. The newest id up to which the broker acknowledged every event
/// is stored in the journal (`uplink_progress`) as acknowledgements arrive; a new connection, and a new repd,
/// start after it. What was in flight when a connection ended is sent again: consumers de-duplicate by
/// station + journal file (`journal`, in each message) + id. At most `maxInflight` events are in flight.
public final class Uplink: Sendable {
    /// The settings.
    public var settings: UplinkSettings { session.settings }
    private let session: UplinkSession
    private let journalPath: String
    private let logger: Logger
    private let shared: Shared
    private let thread = Locked<NamedThread?>(nil)
    private let finished: AsyncStream<Void>
    private let finish: AsyncStream<Void>.Continuation

    /// What the uplink's thread and the rest of the daemon share.
    final class Shared: Sendable {
        let status: Locked<UplinkStatus>
        let stopping = Atomic<Bool>(false)
        /// Fired to wake the thread (new events, stop).
        let wake = WakeSignal()
        /// The journal file the daemon writes since it went over to the file at the journal's path (its device and
        /// inode); nil until it did (`Uplink.journalFileChanged(to:wentOver:)`).
        let journalFile = Locked<FileIdentity?>(nil)
        /// Connections to the files the daemon went over to, opened on its journal's thread before it journaled
        /// anything in them (`Uplink.journalFileChanged(to:wentOver:)`), for the uplink's thread to take; only while
        /// that thread runs and takes them (`accepting`), so none is left open when it does not.
        let handedFiles = Locked<(accepting: Bool, files: [HandedJournal])>((false, []))

        init(broker: String) { status = Locked(UplinkStatus(state: .connecting, broker: broker)) }

        func ring() { wake.fire() }
    }

    /// An uplink for `settings` that publishes as `station` (topics, client id) and says it runs
    /// `softwareVersion` in its status, reading the journal at `journalPath`; `start()` starts it.
    public init(
        settings: UplinkSettings, station: String, softwareVersion: String, journalPath: String, logger: Logger
    ) {
        session = UplinkSession(settings: settings, station: station, softwareVersion: softwareVersion)
        self.journalPath = journalPath
        self.logger = logger
        shared = Shared(broker: settings.brokerURL)
        (finished, finish) = AsyncStream.makeStream(of: Void.self)
    }

    /// Starts the uplink's thread.
    public func start() {
        let worker = WorkerStart(
            settings: session, journalPath: journalPath, logger: logger, shared: shared, finish: finish)
        let started = NamedThread(name: "repd-uplink") {
            UplinkWorker(
                settings: worker.settings, journalPath: worker.journalPath, logger: worker.logger, shared: worker.shared
            ).run()
            worker.finish.finish()
        }
        if started.started {
            thread.withLock { $0 = started }
        } else {
            logger.error("uplink: cannot start its thread (pthread_create failed)")
            shared.status.withLock {
                $0.state = .error
                $0.lastError = "cannot start its thread"
            }
            finish.finish()
        }
    }

    /// Says that the journal has new events; callable from any thread, never blocks.
    public func notify() { shared.ring() }

    /// Says which file at the journal's path the daemon writes (`file`: its device and inode): at start, and each
    /// time it goes over to another (`wentOver`: the one there was deleted or replaced while repd runs; called on
    /// the daemon's journal thread, after it closed the old file and before it journals anything in the new one). The
    /// uplink opens only that file, and only while the path names it: before the daemon closed the old file, its
    /// write-ahead log, still beside the path, would be applied to the new one. It sends the new file once the broker
    /// has every event of the files before it, which it keeps open until then (a file deleted in turn, the broker
    /// still away, is sent all the same).
    public func journalFileChanged(to file: FileIdentity, wentOver: Bool) {
        // When the daemon went over, the uplink's connection to the new file is opened here, before any event goes
        // into it: a file deleted or replaced again before the uplink's thread came to open it would be lost to the
        // broker. (When it is not at the path any more, or cannot be opened, the uplink's thread tries later.)
        if wentOver, shared.handedFiles.withLock({ $0.accepting }), FileIdentity(journalPath) == file,
            let opened = try? EventJournal(path: journalPath, station: session.station, handsOutIDs: false)
        {
            let handed =
                opened.openedFile == file
                && shared.handedFiles.withLock { handed in
                    guard handed.accepting else { return false }
                    handed.files.append(HandedJournal(opened))
                    return true
                }
            if !handed { opened.close() }
        }
        shared.journalFile.withLock { $0 = file }
        shared.ring()
    }

    /// Sends what the broker has not acknowledged yet (for at most `stopGrace` seconds), publishes `offline`,
    /// disconnects, and waits for the thread to end.
    public func stop() async {
        shared.stopping.store(true, ordering: .releasing)
        shared.ring()
        for await _ in finished {}
        thread.withLock { $0.take() }?.join()
    }

    /// A snapshot for `status`.
    public var status: UplinkStatus { shared.status.withLock { $0 } }

    /// A journal connection opened on one thread and handed, once, to the uplink's thread, the only one to use it
    /// from then on (SQLite's multi-thread mode allows that); the lock it passes through orders the two.
    final class HandedJournal: @unchecked Sendable {
        let journal: EventJournal
        init(_ journal: EventJournal) { self.journal = journal }
    }

    /// What the new thread needs (handed over once).
    private final class WorkerStart: Sendable {
        let settings: UplinkSession
        let journalPath: String
        let logger: Logger
        let shared: Shared
        let finish: AsyncStream<Void>.Continuation

        init(
            settings: UplinkSession, journalPath: String, logger: Logger, shared: Shared,
            finish: AsyncStream<Void>.Continuation
        ) {
            self.settings = settings
            self.journalPath = journalPath
            self.logger = logger
            self.shared = shared
            self.finish = finish
        }
    }
}
