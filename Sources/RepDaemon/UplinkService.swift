import Logging
import RepConfiguration
import RepProtocol
import RepUplink
import ServiceLifecycle

/// Runs the fleet uplink (`[uplink]`) under the daemon's `ServiceGroup`: starts its thread, and at shutdown — after
/// the pipeline announced the last set's end — gives the backlog a moment to reach the broker, says `offline`
/// and disconnects.
final class UplinkService: Service {
    let uplink: Uplink

    init(uplink: Uplink) { self.uplink = uplink }

    func run() async throws {
        uplink.start()
        try? await gracefulShutdown()
        await uplink.stop()
    }

    /// The uplink the configuration asks for: nil when it is disabled or there is no journal (logged).
    static func make(_ configuration: DaemonConfiguration, journal: EventRecorder?, logger: Logger) -> Uplink? {
        guard configuration.uplink.enabled else { return nil }
        guard let journal else {
            logger.error(
                configuration.journal.path.isEmpty
                    ? "uplink: enabled, but there is no event journal to publish (journal.path); the uplink is off"
                    : "uplink: enabled, but the event journal could not be opened (above); the uplink is off until repd is restarted with a journal it can open"
            )
            return nil
        }
        return Uplink(
            settings: configuration.uplink, station: journal.station, softwareVersion: repdVersion,
            journalPath: journal.path, logger: logger)
    }

    /// What `status` says about the uplink: its state, and the backlog against the journal's newest id (as the
    /// uplink's thread last read it, on its own connection to the journal).
    static func info(_ uplink: Uplink?) -> ServerMessage.UplinkInfo {
        guard let uplink else { return .init(state: "disabled") }
        let s = uplink.status
        let newest = max(s.newestID, s.ackedID)
        return .init(
            state: s.state.rawValue, broker: s.broker, lastError: s.lastError, ackedID: s.ackedID,
            backlog: max(0, newest - s.ackedID), inFlight: s.inFlight, published: s.published,
            connections: s.connections)
    }
}
