import DaemonSignals
import LinuxIIO
import Logging
import MotionCore
import MotionFixtures
import MotionSimulation
import NIOCore
import NIOPosix
import RepConfiguration
import RepDetection
import RepJournal
import RepProtocol
import RepUplink
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Builds repd's services from a configuration and runs them under one `ServiceGroup` until SIGTERM or SIGINT.
///
/// Order: socket server, uplink (when enabled), detection pipeline, sensor. Shutdown runs in reverse: the sensor
/// stops, the pipeline drains the ring and announces the open set's end, the uplink sends what the broker has not
/// acknowledged (briefly) and says offline, then every client gets `bye` and the socket file goes.
public enum Daemon {
    /// What the caller wants beyond the configuration.
    public struct Options: Sendable {
        /// Called for every workout event (the terminal printout of `--demo`).
        public var onEvent: @Sendable (WorkoutEvent) -> Void = { _ in }
        /// Called for every sensor state change.
        public var onSensorState: @Sendable (MotionProviderState) -> Void = { _ in }
        /// Called once the daemon is ready (socket listening, sensor started), with the socket path.
        public var onReady: @Sendable (String) -> Void = { _ in }

        /// No callbacks.
        public init() {}
    }

    /// Runs the daemon; returns after a graceful shutdown, throws when it cannot start.
    public static func run(configuration: DaemonConfiguration, options: Options = .init(), logger: Logger) async throws
    {
        let notifier = SystemdNotifier()
        let activated = try SocketActivation.takeListeningSocket()
        let socketPath = configuration.socket.path.isEmpty ? DefaultSocketPath.forDaemon() : configuration.socket.path
        // A second repd stops here, before it opens (and writes to) the journal the first one uses.
        if activated == nil { try SocketServerService.refuseIfServed(socketPath) }

        let source = try makeSensor(configuration, logger: logger)
        let provider = source.provider
        let sensor = source.info
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let journal = try openJournal(configuration, logger: logger)
        let uplink = UplinkService.make(configuration, journal: journal, logger: logger)
        let state = DaemonState(
            sensor: sensor, sensorCounters: source.counters, sensorTiming: source.timing,
            uplinkStatus: { UplinkService.info(uplink) })
        let hub = EventHub(
            eventLoop: eventLoop, logger: logger, journal: journal.recorder, journalFailure: journal.failure,
            onJournaled: { uplink?.notify() },
            onNewJournalFile: { uplink?.uplink.journalFileChanged(to: $0, wentOver: $1) })
        defer { hub.journal?.close() }  // also one opened later by `JournalReopenService`
        // Retention also runs every hour, so an idle station ages its events out (on the journal's thread).
        let fileCheck = eventLoop.scheduleRepeatedTask(initialDelay: .seconds(60), delay: .seconds(60)) { _ in
            hub.journal?.checkFile()
        }
        defer { fileCheck.cancel() }
        let retention = eventLoop.scheduleRepeatedTask(initialDelay: .hours(1), delay: .hours(1)) { _ in
            hub.journal?.prune()
        }
        defer { retention.cancel() }
        let doorbell = Doorbell()
        let control = PipelineControl(doorbell: doorbell)
        let readiness = Readiness(notifier: notifier) {
            options.onReady(activated != nil ? "(socket passed by systemd)" : socketPath)
        }

        let ends = SPSCRing<MotionSample>.make(capacity: configuration.ringCapacity)
        state.updateRing(ends.consumer.statistics)  // status says the capacity before the first samples too
        let pump = SamplePump(producer: ends.producer, doorbell: doorbell, logger: logger)
        provider.attach(pump)  // every provider: from its delivery thread straight into the ring, no copy on the way
        let serverOptions = ServerOptions(socket: configuration.socket, path: socketPath, ownUID: getuid())

        let server = SocketServerService(
            options: serverOptions, hub: hub, state: state, control: control, readiness: readiness,
            activatedSocket: activated, logger: logger)
        let pipeline = DetectionPipelineService(
            consumer: ends.consumer, doorbell: doorbell, control: control, hub: hub, state: state, notifier: notifier,
            configuration: configuration.detector, logger: logger, onEvent: options.onEvent)
        let sensorService = SensorService(
            provider: provider, pump: pump, hub: hub, state: state, readiness: readiness, logger: logger,
            onState: options.onSensorState)

        // Shutdown runs in reverse: the uplink stops after the pipeline announced the last set's end, so that
        // end still goes out to the broker.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: server, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "socket")
        ]
        if let uplink {
            services.append(
                .init(service: uplink, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "uplink"))
        }
        if let path = journal.reopenPath {
            let reopen = JournalReopenService(
                settings: configuration.journal, path: path, firstFailure: journal.failure?.error ?? "", hub: hub,
                uplink: uplink, logger: logger)
            services.append(.init(service: reopen, successTerminationBehavior: .ignore, serviceName: "journal"))
        }
        let group = ServiceGroup(
            configuration: .init(
                services: services + [

                    .init(
                        service: pipeline, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "pipeline"
                    ),
                    .init(
                        service: sensorService, successTerminationBehavior: .gracefullyShutdownGroup,
                        serviceName: "sensor"),
                    .init(service: HangupService(program: "repd", logger: logger), serviceName: "sighup"),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        logger.info("repd \(repdVersion) starting: \(sensor.kind) \(sensor.name)")
        logger.info("detector: \(Self.detectorSummary(configuration.detector))")
        if let warning = Self.barGateWarning(configuration.detector) { logger.warning("detector: \(warning)") }
        try await group.run()
        logger.info("repd stopped")
    }

    /// The sensor's placement and the exercise gate's state, as repd logs them at its start and `--check-config`
    /// prints them: "placement bar, exercise gate off".
    public static func detectorSummary(_ detector: RepDetectorConfiguration) -> String {
        let gate =
            detector.minimumExerciseLikelihood > 0
            ? "on (minimum_exercise_likelihood \(detector.minimumExerciseLikelihood))" : "off"
        return "placement \(detector.placement.rawValue), exercise gate \(gate)"
    }

    /// What to tell someone whose configuration keeps the exercise gate on with the sensor on a bar, where it is off by
    /// default: a repd.toml written before that default (which set minimum_exercise_likelihood = 0.2) and then given
    /// placement = "bar". nil otherwise.
    public static func barGateWarning(_ detector: RepDetectorConfiguration) -> String? {
        guard detector.placement == .bar, detector.isMinimumExerciseLikelihoodSet,
            detector.minimumExerciseLikelihood > 0
        else { return nil }
        return "placement = \"bar\" with minimum_exercise_likelihood = \(detector.minimumExerciseLikelihood) set: "
            + "the exercise gate, trained on wrists, stays on and dismisses every set of one or two reps; "
            + "remove the line (repd.toml of before 2026-12-04 set 0.2) to turn it off"
    }

    /// What `--check-config` says of an enabled uplink's files (the TLS CA, certificate and key, the password
    /// file) that cannot be used: the key, its line in `file`, and why. repd would still count and serve, and the
    /// uplink retry and say the same at each attempt. A file the user checking may not read is not reported (the
    /// check may run as another user than repd's).
    public static func uplinkFileWarning(_ configuration: DaemonConfiguration, file: String?) -> String? {
        guard configuration.uplink.enabled,
            let problem = UplinkFiles.problem(configuration.uplink, permissionsToo: false)
        else { return nil }
        let line = file.map { DaemonConfiguration.line(of: problem.key, inFile: $0) } ?? 0
        let place = file.map { line > 0 ? "\($0):\(line): " : "\($0): " } ?? ""
        return "\(place)\(problem): repd would count and serve, but its uplink could not connect"
    }

    /// The event journal the configuration asks for: none when `journal.path` is empty, or (logged, and with what
    /// `status` says about it) when it cannot be opened; repd counts and serves either way, without ids, until
    /// `JournalReopenService` opens the file. Throws `JournalInUse` when another repd holds the file's lock.
    static func openJournal(_ configuration: DaemonConfiguration, logger: Logger) throws(JournalInUse) -> JournalAtStart
    {
        let settings = configuration.journal
        let path: String
        switch settings.path {
        case "":
            logger.info("journal: off (journal.path is empty); events go out without ids")
            return JournalAtStart()
        case "auto":
            guard let resolved = EventRecorder.defaultPath() else {
                let reason = "no place for it (no STATE_DIRECTORY, XDG_STATE_HOME or HOME)"
                logger.error("journal: \(reason); events go out without ids")
                return JournalAtStart(
                    failure: ServerMessage.JournalStatus(path: "", newestID: 0, writing: false, error: reason))
            }
            path = resolved
        default: path = settings.path
        }
        let fileLock = try JournalLock(path: path)
        do {
            return JournalAtStart(
                recorder: try EventRecorder.open(settings, path: path, fileLock: fileLock, logger: logger))
        } catch {
            logger.error(
                "journal: cannot open \(path): \(error.message); counting goes on, events go out without ids until it opens (repd tries again, every minute at most)"
            )
            let failure = JournalReopenService.OpenFailure.journal(error).status(path: path)
            return JournalAtStart(failure: failure, reopenPath: path)
        }
    }

    /// The journal as the daemon starts: open, off, or to be opened again (`JournalReopenService`).
    struct JournalAtStart {
        /// The open journal (nil when off or it could not be opened).
        var recorder: EventRecorder?
        /// What `status` says about a configured journal that could not be opened.
        var failure: ServerMessage.JournalStatus?
        /// The file to try again, when it could not be opened.
        var reopenPath: String?
    }

    /// The provider the daemon runs, how to describe it to clients, and what only an IIO sensor can tell.
    struct Sensor {
        var provider: any MotionProvider & Sendable
        var info: ServerMessage.SensorInfo
        /// The IIO reader's counters (nil for other sensors).
        var counters: (@Sendable () -> ServerMessage.SensorCounters)?
        /// Where the IIO reader's sample times come from, and why (nil for other sensors).
        var timing: (@Sendable () -> (source: String, reason: String)?)?
    }

    /// Why the recording at `path` cannot be replayed (its file, line and column, and why), or nil when it can: for
    /// `checkAgainstSystem(fixtureProblem:)`, so that `--check-config` reads it as a start would. Reads it through
    /// without keeping the samples (a start then reads it again, for the samples).
    public static func fixtureProblem(path: String) -> String? {
        do {
            try FixtureFileReader.forEachSample(path: path) { _ in }
            return nil
        } catch { return "\(error)" }
    }

    /// The sensor the configuration asks for.
    static func makeSensor(_ configuration: DaemonConfiguration, logger: Logger) throws -> Sensor {
        switch configuration.provider {
        case .demo:
            let samples = WorkoutGenerator.demo.generate().samples
            let provider = FixtureMotionProvider(
                samples: samples, batchSize: batchSize(samples), speedMultiplier: configuration.speed,
                loop: configuration.loop)
            return Sensor(provider: provider, info: .init(kind: "demo", name: "demo workout", rateHz: rate(samples)))
        case .fixture:
            guard !configuration.fixturePath.isEmpty else {
                throw ConfigError(
                    file: "configuration", line: 0, key: "fixture.path",
                    reason: "the fixture provider needs a file (--fixture FILE.csv)")
            }
            let samples: [MotionSample]
            do { samples = try FixtureFileReader.read(path: configuration.fixturePath) } catch {
                throw ConfigError(
                    file: "configuration", line: 0, key: "fixture.path", reason: "cannot replay it: \(error)")
            }
            let provider = FixtureMotionProvider(
                samples: samples, batchSize: batchSize(samples), speedMultiplier: configuration.speed,
                loop: configuration.loop)
            return Sensor(
                provider: provider, info: .init(kind: "fixture", name: configuration.fixturePath, rateHz: rate(samples))
            )
        case .iio:
            let settings = configuration.sensor
            let provider = LinuxIIOMotionProvider(options: settings, logger: logger)
            let name = settings.device.isEmpty ? "first accelerometer" : settings.device
            return Sensor(
                provider: provider, info: .init(kind: "iio", name: name, rateHz: settings.rate),
                counters: {
                    let c = provider.counters
                    return ServerMessage.SensorCounters(
                        recordsRead: c.recordsRead, bytesDiscarded: c.bytesDiscarded, reconnects: c.reconnects,
                        timestamps: c.timing?.source.rawValue)
                },
                timing: { provider.timing.map { ($0.source.rawValue, $0.reason) } })
        }
    }

    /// About 20 ms of samples per batch, as a sensor's FIFO watermark would deliver them.
    static func batchSize(_ samples: [MotionSample]) -> Int {
        max(1, Int((rate(samples) * 0.02).rounded()))
    }

    /// The mean sample rate of a recording, in Hz.
    static func rate(_ samples: [MotionSample]) -> Double {
        guard samples.count > 1 else { return 0 }
        let span = samples[samples.count - 1].timestamp - samples[0].timestamp
        return span > 0 ? Double(samples.count - 1) / span : 0
    }
}
