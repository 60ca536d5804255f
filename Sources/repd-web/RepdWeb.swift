import ArgumentParser
import Logging
import RepConfiguration
import RepProtocol
import RepWeb

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// repd-web: the station display, a web page of the set in progress for a screen beside the rack.
@main
struct RepdWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repd-web",
        abstract: "Serve a live web page of the set in progress (the station display), read from repd's socket.",
        discussion: """
            An ordinary client of repd's socket: it subscribes to sets, reps and sensor events, and \
            resumes after the last event id it saw when repd restarts. It serves:
              /              the page: rep count, set number, sets done, banners
              /?station=NAME one station, when there are several
              /?theme=dark   or light: overrides the system's colour scheme
              /events        Server-Sent Events: a station's whole state when it
                             changes, and a ping every 10 s
              /api/status    JSON for kiosks and monitoring

            Configuration: --config FILE (default /etc/repd/repd.toml if it exists), \
            section [web]: listen, socket (empty: socket.path, else repd's default socket). \
            Flags override the file. Several stations: --socket repeated, each PATH or NAME=PATH.
            The page is read-only and has no password: listening beyond 127.0.0.1 shows it \
            to every network the host is on (see README.md for a firewall or reverse proxy).
            Exit codes: 0 after SIGTERM/SIGINT; 64 bad flags; 78 bad configuration; 1 cannot listen.

            Examples:
              repd-web
              repd-web --listen 0.0.0.0:8080
              repd-web --socket rack1=/run/repd1/events.sock \\
                       --socket rack2=/run/repd2/events.sock
            """,
        version: repdVersion)

    @Option(help: "The configuration file (TOML; repd's, with a [web] section).")
    var config: String?

    @Flag(help: "Validate the configuration and exit.")
    var checkConfig = false

    @Option(help: ArgumentHelp("repd's socket, or NAME=PATH; repeat for several stations.", valueName: "[NAME=]PATH"))
    var socket: [String] = []

    @Option(help: ArgumentHelp("Where to serve the page (web.listen; default 127.0.0.1:8080).", valueName: "HOST:PORT"))
    var listen: String?

    @Option(help: "Updates a browser may have waiting before it is disconnected as too slow.")
    var clientQueue = 64

    @Option(help: "Seconds a write to a browser may wait for it to read before it is disconnected.")
    var clientTimeout = 10.0

    @Option(help: "trace, debug, info, notice, warning, error or critical (default: log.level).")
    var logLevel: String?

    func validate() throws {
        if let listen {
            do { _ = try ListenAddress(parsing: listen) } catch { throw ValidationError("--listen: \(error)") }
        }
        for entry in socket where Self.station(entry).socketPath.isEmpty {
            throw ValidationError("--socket '\(entry)': expected PATH or NAME=PATH")
        }
        guard (1...100_000).contains(clientQueue) else { throw ValidationError("--client-queue must be in 1…100000") }
        guard clientTimeout.isFinite, clientTimeout >= 0.1 else {
            throw ValidationError("--client-timeout must be at least 0.1")
        }
        if let logLevel, let problem = LogLevel.commandLineProblem(logLevel) { throw ValidationError(problem) }
    }

    func run() async throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        let configuration: DaemonConfiguration
        do { configuration = try DaemonConfiguration.load(explicitPath: config) } catch {
            fputs("repd-web: \(error)\n", stderr)
            throw ExitCode(78)
        }
        let address = try listen.map { try ListenAddress(parsing: $0) } ?? configuration.webListen
        var stations = socket.map(Self.station)
        if stations.isEmpty {
            // Empty: repd's default for clients, looked up at each connection attempt.
            let path = [configuration.webSocketPath, configuration.socket.path].first { !$0.isEmpty } ?? ""
            stations = [WebService.Station(socketPath: path)]
        }
        if checkConfig {
            let paths = stations.map {
                $0.socketPath.isEmpty ? DefaultSocketPath.forClient() + " (default)" : $0.socketPath
            }
            print(
                "repd-web: configuration OK (\(config ?? "defaults")): http://\(address)/, \(paths.joined(separator: ", "))"
            )
            return
        }
        let configured = LogLevel.effective(flag: logLevel, configured: configuration.logLevel)
        let level = Logger.Level(rawValue: configured.rawValue) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "repd-web")
        do {
            try await WebService.run(
                stations: stations, listen: address, queueLimit: clientQueue,
                stallTimeout: .milliseconds(Int(clientTimeout * 1000)), logger: logger)
        } catch {
            fputs("repd-web: cannot serve http://\(address)/: \(error)\n", stderr)
            throw ExitCode(1)
        }
    }

    /// `PATH` or `NAME=PATH` (a path may contain '=' after its first '/').
    static func station(_ entry: String) -> WebService.Station {
        if let equals = entry.firstIndex(of: "="), !entry[..<equals].contains("/") {
            return WebService.Station(
                socketPath: String(entry[entry.index(after: equals)...]), label: String(entry[..<equals]))
        }
        return WebService.Station(socketPath: entry)
    }
}
