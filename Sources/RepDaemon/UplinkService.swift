import Logging
import NIOConcurrencyHelpers
import RepConfiguration
import RepProtocol
import RepUplink
import ServiceLifecycle

/// Runs the fleet uplink (`[uplink]`) under the daemon's `ServiceGroup`: starts its thread, and at shutdown — after
/// the pipeline announced the last set's end — gives the backlog a moment to reach the broker, says `offline`
/// and disconnects. When the journal could not be opened at start, the uplink starts once `JournalReopenService`
/// opened it (`journalOpened()`).
final class UplinkService: Service {
    let uplink: Uplink
    /// Whether the journal is open, the service runs, and the uplink's thread was started or stopped.
    private let phase: NIOLockedValueBox<(journalOpen: Bool, running: Bool, started: Bool, stopped: Bool)>

    init(uplink: Uplink, journalOpen: Bool = true) {
        self.uplink = uplink
        phase = NIOLockedValueBox((journalOpen, false, false, false))
    }

    func run() async throws {
        startIfReady { $0.running = true }
        try? await gracefulShutdown()
        let started = phase.withLockedValue { phase in
            phase.stopped = true
            return phase.started
        }
        if started { await uplink.stop() }
    }

    /// The journal, which could not be opened at start, is open now: the uplink starts (unless repd is stopping).
    func journalOpened() {
        startIfReady { $0.journalOpen = true }
    }

    /// Whether the uplink waits for the journal to open.
    var waitsForJournal: Bool { phase.withLockedValue { !$0.journalOpen && !$0.stopped } }

    /// Says that the journal has new events; callable from any thread, never blocks.
    func notify() { uplink.notify() }

    private func startIfReady(
        _ change: (inout (journalOpen: Bool, running: Bool, started: Bool, stopped: Bool)) -> Void
    ) {
        // Started under the lock: once `run()` reads `started` there, the thread it stops was made.
        phase.withLockedValue { phase in
            change(&phase)
            guard phase.journalOpen, phase.running, !phase.started, !phase.stopped else { return }
            phase.started = true
            uplink.start()
        }
    }

    /// The uplink the configuration asks for: nil when it is disabled or there is no journal (logged). When the
    /// journal could not be opened at start, the uplink waits for it.
    static func make(_ configuration: DaemonConfiguration, journal: Daemon.JournalAtStart, logger: Logger)
        -> UplinkService?
    {
        guard configuration.uplink.enabled else { return nil }
        let station: String
        let path: String
        if let recorder = journal.recorder {
            (station, path) = (recorder.station, recorder.path)
        } else if let reopenPath = journal.reopenPath {
            (station, path) = (EventRecorder.station(configuration.journal), reopenPath)
            logger.error(
                "uplink: enabled, but the event journal could not be opened (above); the uplink starts once it opens")
        } else {
            logger.error(
                configuration.journal.path.isEmpty
                    ? "uplink: enabled, but there is no event journal to publish (journal.path); the uplink is off"
                    : "uplink: enabled, but there is no event journal to publish (above); the uplink is off")
            return nil
        }
        let uplink = Uplink(
            settings: configuration.uplink, station: station, softwareVersion: repdVersion, journalPath: path,
            logger: logger)
        return UplinkService(uplink: uplink, journalOpen: journal.recorder != nil)
    }

    /// What `status` says about the uplink: its state, and the backlog against the journal's newest id (as the
    /// uplink's thread last read it, on its own connection to the journal).
    static func info(_ service: UplinkService?) -> ServerMessage.UplinkInfo {
        guard let service else { return .init(state: "disabled") }
        let s = service.uplink.status
        if service.waitsForJournal {
            return .init(
                state: "error", broker: s.broker, lastError: "waiting for the event journal, which cannot be opened")
        }
        let newest = max(s.newestID, s.ackedID)
        return .init(
            state: s.state.rawValue, broker: s.broker, lastError: s.lastError, ackedID: s.ackedID,
            backlog: max(0, newest - s.ackedID), inFlight: s.inFlight, published: s.published,
            connections: s.connections)
    }
}
