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
    /// Parses the command line (a negative number after an option attached to it: `CommandLineArguments`) and runs.
    static func main() async {
        await main(CommandLineArguments.attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst())))
    }

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

            Configuration: --config FILE (default /etc/repd/repd.toml if it exists and can be read: a warning \
            says when it cannot), \
            section [web]: listen, socket (empty: socket.path, else repd's default socket). \
            Flags override the file. Several stations: --socket repeated, each PATH or NAME=PATH \
            (NAME: up to 64 bytes of text, no control characters, each name once; without it, repd's name for the \
            station). --check-config lists the stations, and refuses (78) a listen host that names no address of this machine.
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

    @Option(
        help: ArgumentHelp(
            "repd's socket, or NAME=PATH; repeat for several stations (default: web.socket, a string or an array of them).",
            valueName: "[NAME=]PATH"))
    var socket: [String] = []

    @Option(help: ArgumentHelp("Where to serve the page (web.listen; default 127.0.0.1:8080).", valueName: "HOST:PORT"))
    var listen: String?

    @Option(help: "Updates a browser may have waiting before it is disconnected as too slow.")
    var clientQueue = 64

    @Option(help: "Seconds a write to a browser may wait for it to read before it is disconnected.")
    var clientTimeout = 10.0

    @Option(
        help:
            "Seconds a browser's connection may stay open without a request in progress: one that never finishes sending its request, or an idle keep-alive connection, is closed after it (an event stream is not)."
    )
    var idleTimeout = WebServer.defaultIdleTimeout

    @Option(help: "trace, debug, info, notice, warning, error or critical (default: log.level).")
    var logLevel: String?

    func validate() throws {
        if let listen {
            do { _ = try ListenAddress(parsing: listen) } catch { throw ValidationError("--listen: \(error)") }
        }
        var stations: [WebStation] = []
        for entry in socket {
            do { stations.append(try WebStation(parsing: entry)) } catch { throw ValidationError("--socket \(error)") }
        }
        if let problem = WebStation.repeatedName(stations) { throw ValidationError("--socket: \(problem)") }
        guard (1...100_000).contains(clientQueue) else { throw ValidationError("--client-queue must be in 1…100000") }
        guard clientTimeout.isFinite, (0.1...3600).contains(clientTimeout) else {
            throw ValidationError("--client-timeout must be from 0.1 to 3600 s")
        }
        guard idleTimeout.isFinite, (0.1...3600).contains(idleTimeout) else {
            throw ValidationError("--idle-timeout must be from 0.1 to 3600 s")
        }
        if let logLevel, let problem = LogLevel.commandLineProblem(logLevel) { throw ValidationError(problem) }
    }

    /// Why repd-web could not listen on `address`'s host, or nil: the host names no address (`getaddrinfo` fails),
    /// or its address is none of this machine's (`bind` fails with `EADDRNOTAVAIL`, as a start would: `192.0.2.1`,
    /// a name of another host). What a start would meet when it binds, told by `--check-config`. Another failure of
    /// the trial bind (the port in use by a running repd-web, a port below 1024 for a user who checks) is not one.
    static func listenHostProblem(_ address: ListenAddress) -> String? {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(address.host, String(address.port), &hints, &found)
        guard rc == 0, let first = found else {
            return "the host '\(address.host)' names no address here (\(String(cString: gai_strerror(rc))))"
        }
        defer { freeaddrinfo(found) }
        // The first address, as the server binds it (NIO's `makeAddressResolvingHost`).
        let info = first.pointee
        let fd = Glibc.socket(info.ai_family, info.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.ai_protocol)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        guard Glibc.bind(fd, info.ai_addr, info.ai_addrlen) != 0, errno == EADDRNOTAVAIL else { return nil }
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let named = getnameinfo(info.ai_addr, info.ai_addrlen, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST)
        let numeric = named == 0 ? String(decoding: text.prefix { $0 != 0 }.map(UInt8.init), as: UTF8.self) : ""
        let names = numeric.isEmpty || numeric == address.host ? "" : " names \(numeric), which"
        let reason = String(cString: strerror(EADDRNOTAVAIL))
        return "the host '\(address.host)'\(names) is not an address of this machine (\(reason))"
    }

    func run() async throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        let configuration: DaemonConfiguration
        do { configuration = try DaemonConfiguration.load(explicitPath: config) } catch {
            fputs("repd-web: \(error)\n", stderr)
            throw ExitCode(78)
        }
        if let skipped = ConfigurationSource.skippedDefault(explicitPath: config) {
            fputs("repd-web: warning: \(skipped)\n", stderr)
        }
        let address = try listen.map { try ListenAddress(parsing: $0) } ?? configuration.webListen
        // Each entry was checked (validate(), the configuration's reader): PATH or NAME=PATH, no name twice.
        var stations = socket.isEmpty ? configuration.webStations : socket.compactMap { try? WebStation(parsing: $0) }
        if stations.isEmpty {
            // Empty: repd's default for clients, looked up at each connection attempt.
            stations = [WebStation(socketPath: configuration.socket.path)]
            let bytes = configuration.socket.path.utf8.count
            if bytes > DaemonConfiguration.longestSocketPath {
                let file = ConfigurationSource.path(explicitPath: config)
                let error = ConfigError(
                    file: file ?? "defaults",
                    line: file.map { DaemonConfiguration.line(of: "socket.path", inFile: $0) } ?? 0,
                    key: "socket.path",
                    reason:
                        "the path is \(bytes) bytes; a Unix socket's path holds at most \(DaemonConfiguration.longestSocketPath)"
                )
                fputs("repd-web: \(error)\n", stderr)
                throw ExitCode(78)
            }
        }
        if checkConfig {
            if let problem = Self.listenHostProblem(address) {
                fputs("repd-web: \(listen != nil ? "--listen" : "web.listen"): \(problem)\n", stderr)
                throw ExitCode(78)
            }
            // NAME=PATH as given, or PATH (named by repd): the name `?station=` picks.
            let list = stations.map { station in
                if let name = station.name { return "\(name)=\(station.socketPath)" }
                return station.socketPath.isEmpty
                    ? DefaultSocketPath.forClient() + " (default, named by repd)"
                    : station.socketPath + " (named by repd)"
            }
            print(
                "repd-web: configuration OK (\(ConfigurationSource.path(explicitPath: config) ?? "defaults")): http://\(address)/, stations: \(list.joined(separator: ", "))"
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
                stations: stations.map { WebService.Station(socketPath: $0.socketPath, label: $0.name) },
                listen: address, queueLimit: clientQueue,
                stallTimeout: .milliseconds(Int(clientTimeout * 1000)),
                idleTimeout: .milliseconds(Int(idleTimeout * 1000)), logger: logger)
        } catch {
            fputs("repd-web: cannot serve http://\(address)/: \(error)\n", stderr)
            throw ExitCode(1)
        }
    }
}
