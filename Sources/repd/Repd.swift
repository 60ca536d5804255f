import ArgumentParser
import Logging
import MotionCore
import PlainText
import RepConfiguration
import RepDaemon
import RepDetection
import RepProtocol
import RepSettings

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    @preconcurrency import Darwin
#endif

/// repd: counts exercise repetitions from an accelerometer and publishes them on a Unix socket.
@main
struct Repd: AsyncParsableCommand {
    /// Parses the command line (a negative number after an option attached to it: `CommandLineArguments`) and runs.
    static func main() async {
        await main(CommandLineArguments.attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst())))
    }

    static let configuration = CommandConfiguration(
        commandName: "repd",
        abstract: "Count exercise repetitions from an accelerometer and publish them on a Unix socket.",
        discussion: """
            repd reads samples from a provider, counts reps, and sends every set and rep as one JSON line to each \
            client of its socket (protocol: docs/PROTOCOL.md). Without a sensor:
              repd --demo                  the built-in demo workout (3 sets: 8, 10, 12)
              repd --fixture set.csv --speed 4    a recording (t,ax,ay,az), 4x faster
            With --demo or --fixture, each set and rep is also printed here (--quiet turns that off).

            Configuration: --config FILE (default /etc/repd/repd.toml if it exists and can be read: a warning says \
            when it cannot; every key is documented in \
            config/repd.toml). Flags override the file. --check-config validates, prints the placement and the \
            exercise gate's state, and exits.
            Socket: --socket PATH, else socket.path, else $RUNTIME_DIRECTORY/events.sock (systemd), \
            $XDG_RUNTIME_DIR/repd/events.sock, or ${TMPDIR:-/tmp}/repd-UID/events.sock (private: mode 0700).
            Journal: every set, rep and sensor event is stored (journal.path) with an id; clients that were away \
            ask for what they missed with subscribe since=ID.
            Fleet uplink ([uplink], off by default): every journaled event is published to an MQTT broker as \
            repd/<station>/events (QoS 1), with a retained repd/<station>/status; the broker password comes only \
            from uplink.password_file. repctl status shows the uplink's state, acknowledged id and backlog.
            Signals: SIGTERM or SIGINT close the open set (announced), say bye to clients, remove the socket, exit 0. \
            SIGHUP is logged and ignored (the configuration is read only at start: restart repd to apply a change).
            Exit codes: 0 after a clean stop; 64 bad flags; 78 bad configuration (also a socket.group, socket path, \
            journal path or fixture this machine lacks); 1 cannot start (e.g. socket in use).
            --version prints the build's version (a package's is its Debian version), as hello and status carry it.
            """,
        version: repdVersion)

    @Option(help: "The configuration file (TOML).")
    var config: String?

    @Flag(help: "Validate the configuration, print the placement and the exercise gate's state, and exit.")
    var checkConfig = false

    @Flag(help: "Replay the built-in demo workout in real time (no sensor needed).")
    var demo = false

    @Option(help: "Replay a fixture CSV file (t,ax,ay,az in seconds and g).")
    var fixture: String?

    @Option(help: "Replay speed for --demo and --fixture (values below 0.1 count as 0.1; 1 is real time).")
    var speed: Double?

    @Flag(help: "Start the replay over at its end.")
    var loop = false

    @Option(help: "The socket path.")
    var socket: String?

    @Option(help: "The event journal's SQLite file (journal.path; \"\" turns the journal off).")
    var journal: String?

    @Option(
        help: "The station name events carry and the uplink's topics use (journal.station; default: the host name).")
    var station: String?

    @Flag(help: "Do not print sets and reps to standard output.")
    var quiet = false

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    func validate() throws {
        guard !(demo && fixture != nil) else { throw ValidationError("Give --demo or --fixture FILE, not both.") }
        if config?.isEmpty == true { throw ValidationError("--config needs a file (it was empty).") }
        if let speed {
            guard speed.isFinite, speed > 0 else { throw ValidationError("--speed must be a positive number.") }
        }
        if let station, let problem = JournalSettings.stationProblem(station) {
            throw ValidationError("--station: \(problem).")
        }
        if let logLevel, let problem = LogLevel.commandLineProblem(logLevel) { throw ValidationError(problem) }
    }

    func run() async throws {
        setvbuf(stdout, nil, _IOLBF, 0)  // one line at a time, also into pipes and the journal
        var configuration: DaemonConfiguration
        do { configuration = try DaemonConfiguration.load(explicitPath: config) } catch {
            fputs("repd: \(LogText.escaped("\(error)"))\n", stderr)
            throw ExitCode(78)
        }
        if demo { configuration.provider = .demo }
        if let fixture {
            configuration.provider = .fixture
            configuration.fixturePath = fixture
        }
        if let speed { configuration.speed = speed }
        if loop { configuration.loop = true }
        if let socket { configuration.socket.path = socket }
        if let journal { configuration.journal.path = journal }
        if let station { configuration.journal.station = station }
        configuration.logLevel = LogLevel.effective(flag: logLevel, configured: configuration.logLevel)
        var flagged: [String: String] = [:]
        if fixture != nil { flagged["fixture.path"] = "--fixture" }
        if socket != nil { flagged["socket.path"] = "--socket" }
        if journal != nil { flagged["journal.path"] = "--journal" }
        do {
            try configuration.checkAgainstSystem(
                file: ConfigurationSource.path(explicitPath: config), flags: flagged,
                fixtureProblem: Daemon.fixtureProblem(path:))
        } catch {
            fputs("repd: \(LogText.escaped("\(error)"))\n", stderr)
            throw ExitCode(78)
        }

        if checkConfig {
            if let skipped = ConfigurationSource.skippedDefault(explicitPath: config) {
                print("repd: warning: \(skipped)")
            }
            let source = ConfigurationSource.path(explicitPath: config) ?? "defaults"
            print("repd: configuration OK (\(source)): \(Daemon.detectorSummary(configuration.detector))")
            if let warning = Daemon.barGateWarning(configuration.detector) { print("repd: warning: \(warning)") }
            if let warning = Daemon.uplinkFileWarning(
                configuration, file: ConfigurationSource.path(explicitPath: config))
            {
                print("repd: warning: \(LogText.escaped(warning))")
            }
            return
        }

        let level = Logger.Level(rawValue: configuration.logLevel.rawValue) ?? .info
        LoggingSystem.bootstrap { JournalLogHandler(label: $0, level: level) }
        let logger = Logger(label: "repd")
        if let skipped = ConfigurationSource.skippedDefault(explicitPath: config) { logger.warning("\(skipped)") }

        var options = Daemon.Options()
        if !quiet, configuration.provider != .iio {
            options.onEvent = { event in print(Self.describe(event)) }
            options.onSensorState = { state in
                if state == .finished { print("repd: end of the data; still serving the socket (Ctrl-C to stop)") }
            }
            options.onReady = { path in print("repd: serving \(path) — try: repctl subscribe --socket \(path)") }
        }
        do {
            try await Daemon.run(configuration: configuration, options: options, logger: logger)
        } catch let error as ConfigError {
            fputs("repd: \(LogText.escaped("\(error)"))\n", stderr)
            throw ExitCode(78)
        } catch {
            fputs("repd: \(LogText.escaped("\(error)"))\n", stderr)
            throw ExitCode(1)
        }
    }

    static func describe(_ event: WorkoutEvent) -> String {
        switch event {
        case .setStarted(let s): "set \(s.setNumber) started (t=\(format(s.timestamp, decimals: 1)) s)"
        case .rep(let r):
            "set \(r.setNumber) · rep \(r.repInSet) · \(format(r.duration, decimals: 1)) s  (total \(r.totalReps), t=\(format(r.timestamp, decimals: 1)) s)"
        case .setEnded(let s):
            "set \(s.setNumber) ended: \(s.repCount) reps" + (s.liveRepCount.map { " (counted live: \($0))" } ?? "")
        }
    }
}
