import ArgumentParser
import MotionCore
import MotionFixtures
import PlainText
import RepConfiguration
import RepDetection
import RepProtocol
import RepTools

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    @preconcurrency import Darwin
#endif

/// repctl: tools around repd — talk to a running repd, look at the sensors, and evaluate, plot and generate recordings.
@main
struct Repctl: ParsableCommand {
    /// Parses the command line (a negative number after an option attached to it: `CommandLineArguments`) and runs.
    static func main() {
        main(CommandLineArguments.attachingNegativeNumbers(Array(CommandLine.arguments.dropFirst())))
    }

    static let configuration = CommandConfiguration(
        commandName: "repctl",
        abstract:
            "Tools for repd: talk to a running repd (status, subscribe, history, record), look at the sensors, and evaluate, plot and generate recordings.",
        version: repdVersion,
        subcommands: [
            Status.self, Subscribe.self, History.self, Record.self, Sensors.self, Evaluate.self, Plot.self,
            Generate.self,
            ValidateQuality.self,
        ])
}

struct Evaluate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Replay recorded sets through the rep detector and report how well it counts.",
        discussion: """
            MANIFEST is a CSV with the columns \
            file,exercise,participant,true_reps,sample_rate_hz,duration_s,source (file relative to the manifest's \
            folder; each file a fixture CSV t,ax,ay,az in seconds and g; true_reps a whole number from 0 to 100000). \
            Every set is replayed through \
            FixtureMotionProvider.replayAll() in batches of --batch samples into RepDetectionService (the same \
            detector the daemon runs, counting what it counts), with the built-in detector defaults or, with --config FILE, the [detector] settings \
            of a repd configuration file (try settings on your own recordings before repd uses them).

            The manifest must be UTF-8 (a byte that is not is refused with its line). The table lists, per \
            exercise, per folder (each file's folder as the manifest writes it: tbe_main, /data/sets, or . beside \
            the manifest; the same names as by_folder) and overall: n, mean absolute error (MAE), bias \
            (counted − true), % counted exactly, % within ±1. --json prints one object:
              {"overall":{"n":..,"mae":..,"bias":..,"exact_pct":..,"within1_pct":..},
               "by_exercise":{NAME:{same keys}}, "by_folder":{FOLDER:{same keys}},
               "live":{"rep_events":..,"mean_delay_s":..,"max_delay_s":..},
               "sets":[{"file":..,"exercise":..,"true_reps":..,"counted":..,"live_reps":..}]}
            Exercises whose every recording has a true count of 0 (walking, sitting…) are also reported as the \
            share of recordings counting 0 and the false reps per hour ("no_exercise" in --json), and as what a \
            subscriber saw live: the share that sent no rep event and the rep events per hour (each later taken \
            back by its set_end, or counted). "live" counts the rep events of the sets with exercise and how late each came \
            after its rep's end (the last sample of the batch that sent it minus the rep's time).
            A missing or malformed file is reported with its reason (and "error" in --json), listed as failed, \
            and makes the exit code 1; the other sets are still evaluated. A manifest (or --gate file) that cannot \
            be read, is malformed, or lists no recording exits 2 before anything is evaluated; a --config file \
            that does not read as a repd configuration exits 78 with its line and why, as repd does.

            For scripts/train-gate: --features FILE also writes every moment the exercise gate judged, with its \
            features, as CSV; --gate FILE uses another gate model (trees of log-odds: lines feature, threshold, \
            left, right, score, roots and offset, each its name and numbers, as scripts/train-gate writes them); \
            --minimum-exercise-likelihood sets the gate's threshold (0 turns the gate off; default: the \
            configuration's, 0.2 built in, 0 with placement = "bar").

            Examples:
              repctl eval ../shared/datasets/reps/manifest.csv --json
              repctl eval my-sets/manifest.csv --config my-repd.toml
            """)

    @Argument(help: "The manifest CSV.")
    var manifest: String

    @Flag(help: "Print one JSON object instead of a table.")
    var json = false

    @Option(help: "Samples per batch in the replay (≥ 1).")
    var batch = 10

    @Option(
        help:
            "A repd configuration file whose [detector] settings to use (default: the built-in defaults); a file that does not read as a repd configuration exits 78 with its line and why."
    )
    var config: String?

    @Option(
        help:
            "Also write the exercise gate's features at every moment it judged, as CSV (for scripts/train-gate); not the manifest, one of its recordings, --gate or --config."
    )
    var features: String?

    @Option(
        help:
            "An exercise gate model file (lines feature, threshold, left, right, score, roots, offset) instead of the built-in one."
    )
    var gate: String?

    @Option(
        help:
            "The exercise gate's threshold, from 0 up to (not including) 1 (0 turns the gate off; default: the configuration's)."
    )
    var minimumExerciseLikelihood: Double?

    func validate() throws {
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1.") }
        if let x = minimumExerciseLikelihood, !(x >= 0 && x < 1) {
            throw ValidationError("--minimum-exercise-likelihood must be from 0 to 1 (exclusive).")
        }
        if let features {
            // One typo must not replace an input with the features (the recordings are checked once listed).
            guard !features.isEmpty else { throw ValidationError("--features must name a file (it is empty).") }
            if sameFile(features, manifest) {
                throw ValidationError("--features \(features) is the manifest \(manifest) itself.")
            }
            for (name, path) in [("--gate", gate), ("--config", config)] {
                if let path, sameFile(features, path) {
                    throw ValidationError("--features \(features) is the \(name) file \(path).")
                }
            }
        }
    }

    func run() throws {
        let bytes: [UInt8]
        do { bytes = try TextFile.readBytes(manifest) } catch {
            printError("repctl: \(manifest): \(error)")
            throw ExitCode(2)
        }
        let entries: [ManifestEntry]
        do { entries = try EvaluationManifest.parse(bytes: bytes, file: manifest) } catch {
            printError("repctl: \(error)")
            throw ExitCode(2)
        }
        guard !entries.isEmpty else {
            printError("repctl: \(manifest): lists no recording (only its header): nothing to evaluate")
            throw ExitCode(2)
        }
        let root = manifest.contains("/") ? String(manifest[..<manifest.lastIndex(of: "/")!]) : "."
        func path(_ entry: ManifestEntry) -> String { entry.file.hasPrefix("/") ? entry.file : root + "/" + entry.file }
        if let features, let entry = entries.first(where: { sameFile(features, path($0)) }) {
            throw ValidationError(
                "--features \(features) is the recording \(path(entry)) that \(manifest) lists on line \(entry.line).")
        }
        var detector = try loadDetectorConfiguration(config)
        if let gate {
            do { detector.exerciseGate = try GateModelFile.parse(try TextFile.read(gate), file: gate) } catch let
                error as ManifestError
            {
                printError("repctl: \(error)")  // it names the file and line
                throw ExitCode(2)
            } catch {
                printError("repctl: \(gate): \(error)")
                throw ExitCode(2)
            }
        }
        if let minimumExerciseLikelihood { detector.minimumExerciseLikelihood = minimumExerciseLikelihood }
        let report = Evaluator.evaluate(entries, root: root, batchSize: batch, configuration: detector)
        if let features {
            var lines = [GateFeatureExport.header]
            for entry in entries {
                guard let samples = try? FixtureFileReader.read(path: path(entry)) else { continue }
                lines += GateFeatureExport.rows(entry: entry, samples: samples, configuration: detector)
            }
            do { try TextFile.write(lines.joined(separator: "\n") + "\n", to: features) } catch {
                printError("repctl: \(features): \(error)")
                throw ExitCode(1)
            }
        }
        print(json ? report.json : report.table)
        for failure in report.failures where json {
            printError("repctl: \(failure.entry.file): \(failure.failure ?? "failed")")
        }
        if !report.failures.isEmpty { throw ExitCode(1) }
    }
}

struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Draw a recording with the detector's tracked period, periodicity and match, each matched cycle (rep), and the sets with their final and live counts, as SVG.",
        discussion: """
            Each rep of a set's final count is marked with its measured window and its mean concentric velocity \
            (--placement bar) or its eccentric and concentric durations (wrist, arm); each set with its velocity \
            loss.

            Examples:
              repctl plot set.csv --out set.svg --true-reps 10
              repctl plot squat.csv --out squat.svg --placement bar
              repctl plot set.csv --out set.svg --config /etc/repd/repd.toml
            """)

    @Argument(help: "A fixture CSV (t,ax,ay,az in seconds and g).")
    var file: String

    @Option(help: "Where to write the SVG.")
    var out: String

    @Option(help: "The true rep count, shown in the title.")
    var trueReps: Int?

    @Option(
        help:
            "A repd configuration file whose [detector] settings to use (default: the built-in defaults); a file that does not read as a repd configuration exits 78 with its line and why."
    )
    var config: String?

    @Option(
        help:
            "Also write the detector's view as CSV: period, periodicity, match, walking, the exercise gate's probability and features at every grid point, and the events."
    )
    var trace: String?

    @Option(
        help:
            "Where the sensor sat: bar (velocities and range of motion), wrist or arm (tempo only); default: the configuration's."
    )
    var placement: SensorPlacement?

    @Option(
        help:
            "The exercise gate's threshold, from 0 up to (not including) 1 (0 turns it off; default: the configuration's). When on, the plot draws its probability."
    )
    var minimumExerciseLikelihood: Double?

    func validate() throws {
        if let x = minimumExerciseLikelihood, !(x >= 0 && x < 1) {
            throw ValidationError("--minimum-exercise-likelihood must be from 0 to 1 (exclusive).")
        }
        if let trueReps, trueReps < 0 { throw ValidationError("--true-reps must be a count (0 or more).") }
        guard !out.isEmpty else { throw ValidationError("--out must name a file (it is empty).") }
        if trace?.isEmpty == true { throw ValidationError("--trace must name a file (it is empty).") }
        // One typo must not replace the recording with its plot.
        if sameFile(out, file) { throw ValidationError("--out \(out) is the recording itself.") }
        if let trace, sameFile(trace, file) { throw ValidationError("--trace \(trace) is the recording itself.") }
        if let trace, sameFile(trace, out) { throw ValidationError("--trace and --out are the same file (\(out)).") }
    }

    func run() throws {
        var detector = try loadDetectorConfiguration(config)
        if let placement { detector.placement = placement }
        if let minimumExerciseLikelihood { detector.minimumExerciseLikelihood = minimumExerciseLikelihood }
        let samples: [MotionSample]
        do { samples = try FixtureFileReader.read(path: file) } catch {
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        let (svg, events) = DetectorPlot.render(
            samples: samples, title: name, configuration: detector, trueReps: trueReps)
        do { try TextFile.write(svg, to: out) } catch {
            printError("repctl: cannot write \(out): \(error)")
            throw ExitCode(1)
        }
        if let trace {
            do { try TextFile.write(DetectorPlot.traceCSV(samples: samples, configuration: detector), to: trace) } catch
            {
                printError("repctl: cannot write \(trace): \(error)")
                throw ExitCode(1)
            }
        }
        let reps = events.filter { if case .rep = $0 { return true } else { return false } }.count
        print("\(out): \(reps) reps in \(samples.count) samples")
    }
}

/// The detector settings of the repd configuration file at `path` (the whole file is checked, as repd would), or
/// the defaults without one. A bad file is reported with its line and exits 78, as repd does.
func loadDetectorConfiguration(_ path: String?) throws -> RepDetectorConfiguration {
    guard let path else { return RepDetectorConfiguration() }
    do { return try DaemonConfiguration.load(path: path).detector } catch {
        printError("repctl: \(error)")
        throw ExitCode(78)
    }
}

extension SensorPlacement: ExpressibleByArgument {}

/// Writes `message` on standard error, its control characters written out (`LogText`): a NUL from a file would
/// otherwise end the message there, and an escape sequence would reach the terminal.
func printError(_ message: String) {
    fputs(LogText.escaped(message) + "\n", stderr)
}
