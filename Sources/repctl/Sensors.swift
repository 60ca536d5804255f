import ArgumentParser
import LinuxIIO
import Logging
import MotionCore
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

struct Sensors: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the IIO accelerometers, or read samples from one exactly as repd would.",
        discussion: """
            Without --read: every IIO accelerometer with its name, node, syspath, channels and their types, scale, \
            sampling frequency and choices, trigger, and whether repd would read it buffered or by polling.
            With --read N: configures the chosen sensor as the daemon does (rate, channels, trigger, watermark, \
            buffer), prints N decoded samples (seconds, g) and puts the device back as it was, also when \
            interrupted (Ctrl-C, SIGTERM, or SIGHUP unless ignored as under nohup: the samples read so far are \
            printed).
            Exit codes: 0 done; 1 no accelerometer, the sensor cannot be read or configured, or fewer than N \
            samples within --timeout; 64 bad options; 130 interrupted during --read.

            Examples:
              repctl sensors
              repctl sensors --read 10 --device lis3dh-accel --json
            """)

    @Option(help: "Print this many samples, then restore the device.")
    var read: Int?

    @Option(help: "The sensor: name, label, iio:deviceN, syspath or /dev node (default: the first accelerometer).")
    var device = ""

    @Option(help: "Sample rate to ask for, from 0.1 to 100000 Hz (with --read).")
    var rate = 100.0

    @Option(help: "Trigger name (with --read; default: the device's own, else the current one).")
    var trigger: String?

    @Flag(help: "Poll in_accel_*_raw instead of using the buffer (with --read).")
    var poll = false

    @Flag(
        help:
            "Create an hrtimer trigger through configfs if the device has none (with --read), as sensor.hrtimer_trigger does."
    )
    var hrtimer = false

    @Option(help: "Give up after this many seconds (with --read).")
    var timeout = 10.0

    @Flag(help: "JSON output: one object per device, or per sample {\"t\":..,\"ax\":..,\"ay\":..,\"az\":..}.")
    var json = false

    func validate() throws {
        if let read, read < 1 { throw ValidationError("--read needs a count of at least 1.") }
        guard rate >= 0.1, rate <= 100_000 else {
            throw ValidationError("--rate must be a number of Hz from 0.1 to 100000 (got \(rate)).")
        }
        guard timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be a number of seconds above 0 and at most 86400.")
        }
    }

    func run() throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        if let read { try readSamples(read) } else { try list() }
    }

    private func list() throws {
        let devices: [IIODevice]
        do { devices = try IIODeviceScanner.scan() } catch {
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        let accelerometers = devices.filter(\.isAccelerometer)
        if accelerometers.isEmpty {
            printError(
                "repctl: no IIO accelerometer found; \(devices.isEmpty ? "no IIO devices at all" : "found: " + devices.map { "\($0.sysname) '\($0.name)'" }.joined(separator: ", "))"
            )
            throw ExitCode(1)
        }
        for device in accelerometers {
            if json { print(describeJSON(device)) } else { print(describeText(device)) }
        }
    }

    private func describeText(_ d: IIODevice) -> String {
        var lines = ["\(d.sysname): \(d.name)\(d.label.map { " (label \($0))" } ?? "")"]
        lines.append("  node      \(d.devnode ?? "none")\(d.devnodeMissing ? " (does not exist: polled instead)" : "")")
        lines.append("  syspath   \(d.syspath)")
        lines.append(
            "  capture   \(d.captureMode)\(d.bufferDirectory.map { " (\($0)/)" } ?? "")\(d.udevInitialized ? "" : "; not initialized by udevd (sysfs only)")"
        )
        for c in d.scanChannels {
            lines.append("  channel   \(c.name)  index \(c.index)  \(c.type)")
        }
        lines.append("  scale     \(d.scale.map { "\($0)" }.joined(separator: " ")) m/s² per count (x y z)")
        for error in d.scaleErrors + d.channelErrors { lines.append("  error     \(error)") }
        for error in d.ignoredChannels { lines.append("  ignored   \(error)") }
        if d.offset.contains(where: { $0 != 0 }) {
            lines.append("  offset    \(d.offset.map { "\($0)" }.joined(separator: " "))")
        }
        if let m = d.mountMatrix {
            lines.append(
                "  mount     \(m.map { $0.map { "\($0)" }.joined(separator: ", ") }.joined(separator: "; ")) (\(d.mountMatrixSource ?? ""))"
            )
        }
        for problem in d.mountMatrixProblems + d.frequencyProblems { lines.append("  warning   \(problem)") }
        let frequency = d.samplingFrequency.map { "\($0) Hz" } ?? "unknown"
        lines.append(
            "  rate      \(frequency)\(d.availableFrequencies.isEmpty ? "" : "; available " + d.availableFrequencies.map { JSONWriter.numberText($0) }.joined(separator: " "))"
        )
        lines.append(
            "  trigger   \(d.currentTrigger.map { $0.isEmpty ? "none set" : $0 } ?? "no trigger folder")\(d.ownTriggers.isEmpty ? "" : "; own: " + d.ownTriggers.joined(separator: ", "))"
        )
        return lines.joined(separator: "\n")
    }

    private func describeJSON(_ d: IIODevice) -> String {
        JSONWriter.Value.object([
            ("sysname", .string(d.sysname)), ("name", .string(d.name)), ("label", d.label.map { .string($0) } ?? .null),
            ("devnode", d.devnode.map { .string($0) } ?? .null), ("devnode_missing", .bool(d.devnodeMissing)),
            ("syspath", .string(d.syspath)),
            ("capture", .string(d.captureMode)), ("udev_initialized", .bool(d.udevInitialized)),
            (
                "channels",
                .array(
                    d.scanChannels.map {
                        .object([
                            ("name", .string($0.name)), ("index", .integer($0.index)),
                            ("type", .string($0.type.description)),
                        ])
                    })
            ),
            ("scale", .array(d.scale.map { .number($0) })),
            ("errors", .array((d.scaleErrors + d.channelErrors).map { .string($0.description) })),
            ("ignored_channels", .array(d.ignoredChannels.map { .string($0.description) })),
            ("offset", .array(d.offset.map { .number($0) })),
            ("mount_matrix", d.mountMatrix.map { .array($0.map { .array($0.map { .number($0) }) }) } ?? .null),
            ("mount_matrix_problems", .array(d.mountMatrixProblems.map { .string($0.description) })),
            ("frequency_problems", .array(d.frequencyProblems.map { .string($0.description) })),
            ("sampling_frequency", d.samplingFrequency.map { .number($0) } ?? .null),
            ("available_frequencies", .array(d.availableFrequencies.map { .number($0) })),
            ("trigger", d.currentTrigger.map { .string($0) } ?? .null),
            ("own_triggers", .array(d.ownTriggers.map { .string($0) })),
        ]).text
    }

    private func readSamples(_ count: Int) throws {
        var options = LinuxIIOMotionProvider.Options()
        options.device = device
        options.rate = rate
        options.trigger = trigger
        options.forcePolling = poll
        options.hrtimerTrigger = hrtimer
        options.deliveryDeadline = min(2, timeout / 2)
        let provider = LinuxIIOMotionProvider(options: options, logger: diagnostics)
        let collected = SampleCollector(limit: count)
        let samples = provider.samplePublisher.sink { collected.add($0) }
        let states = provider.statePublisher.sink { collected.state($0) }
        // Ctrl-C (or SIGTERM, SIGHUP) must not leave the sensor running as configured here: stop, put it back, and
        // print what came so far.
        catchInterrupts()
        provider.start()
        let deadline = monotonicNow() + timeout
        while !collected.done, monotonicNow() < deadline, collected.failure == nil,
            !interrupted.load(ordering: .relaxed)
        {
            usleep(5000)
        }
        provider.stop()
        samples.cancel()
        states.cancel()
        if let failure = collected.failure {
            printError("repctl: \(failure)")
            throw ExitCode(1)
        }
        let got = collected.samples
        if !json {
            let d = provider.currentDevice
            print("# \(d?.sysname ?? "?") \(d?.name ?? "") via \(collected.mode); t (s), ax ay az (g)")
            if let timing = provider.timing { print("# \(timing)") }
        }
        for s in got.prefix(count) {
            if json {
                print(
                    JSONWriter.Value.object([
                        ("t", .number(s.timestamp)), ("ax", .number(s.ax)), ("ay", .number(s.ay)),
                        ("az", .number(s.az)),
                    ]).text)
            } else {
                print(
                    "\(format(s.timestamp, decimals: 6))  \(format(s.ax, decimals: 4))  \(format(s.ay, decimals: 4))  \(format(s.az, decimals: 4))"
                )
            }
        }
        if got.count < count, interrupted.load(ordering: .relaxed) {
            printError("repctl: stopped (interrupted) after \(got.count) of \(count) samples")
            throw ExitCode(130)
        }
        if got.count < count {
            printError("repctl: only \(got.count) of \(count) samples within \(timeout) s")
            throw ExitCode(1)
        }
    }
}

/// Warnings from the sensor (a mount matrix ignored, a setting not restored): on stderr, apart from the samples.
let diagnostics = Logger(label: "repctl", factory: { StreamLogHandler.standardError(label: $0) })

/// Collects samples and the provider's state from its reader thread.
final class SampleCollector: Sendable {
    private let storage = Locked<(samples: [MotionSample], failure: String?, mode: String)>(([], nil, "buffer"))
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func add(_ batch: [MotionSample]) { storage.withLock { $0.samples += batch } }

    func state(_ state: MotionProviderState) {
        storage.withLock { s in
            switch state {
            case .failed(let error): s.failure = error.message
            case .polling(let reason): s.mode = "polling (\(reason))"
            case .sensorLost(let reason): s.failure = "sensor lost: \(reason)"
            default: break
            }
        }
    }

    var samples: [MotionSample] { storage.withLock { $0.samples } }
    var done: Bool { storage.withLock { $0.samples.count >= limit } }
    var failure: String? { storage.withLock { $0.failure } }
    var mode: String { storage.withLock { $0.mode } }
}
