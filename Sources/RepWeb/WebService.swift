import DaemonSignals
import Hummingbird
import Logging
import RepConfiguration
import RepProtocol
import ServiceLifecycle

/// Everything repd-web runs: a link per station, the browsers' event streams and the HTTP server, under one
/// `ServiceGroup`. On SIGTERM/SIGINT the event streams end first (so the server has no endless response to wait
/// for), then the server, then the links.
public enum WebService {
    /// A station to show: repd's socket and, optionally, a name for it.
    public struct Station: Sendable, Equatable {
        /// repd's socket; empty: repd's default for clients (`/run/repd/events.sock` when it exists), looked up
        /// again at each connection attempt.
        public var socketPath: String
        /// The station's name on the page; nil: the name repd gives it (the host's name).
        public var label: String?

        /// Creates the description.
        public init(socketPath: String, label: String? = nil) {
            self.socketPath = socketPath
            self.label = label
        }
    }

    /// Runs until SIGTERM or SIGINT.
    public static func run(
        stations: [Station], listen: ListenAddress, queueLimit: Int, stallTimeout: Duration,
        idleTimeout: Duration = .seconds(WebServer.defaultIdleTimeout), logger: Logger
    ) async throws {
        let hub = EventStreamHub(queueLimit: queueLimit, stallTimeout: stallTimeout, logger: logger)
        let host = hostName().isEmpty ? "station" : hostName()
        // Stations without a label on one host all get the host's name until repd names them; the board numbers
        // names alike (StationBoard.named) so ?station= can tell them apart.
        let states = stations.map {
            StationState(socketPath: $0.socketPath, label: $0.label, defaultName: host)
        }
        let board = StationBoard(stations: states, hub: hub)
        let links = stations.enumerated().map { index, station in
            DaemonLink(index: index, socketPath: station.socketPath, board: board, logger: logger)
        }
        let paths = stations.map { $0.socketPath.isEmpty ? "repd's default socket" : $0.socketPath }
        let app = WebServer.application(
            board: board, hub: hub, address: listen, idleTimeout: idleTimeout, logger: logger
        ) { [logger] in
            // Once the address is bound, not before: a bind that fails is the only line then.
            logger.info("serving http://\(listen)/ for \(paths.joined(separator: ", "))")
        }
        let group = ServiceGroup(
            configuration: .init(
                services: links.map { .init(service: $0) } + [
                    .init(service: app), .init(service: hub),
                    .init(service: HangupService(program: "repd-web", logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
    }
}
