import MotionCore
import MotionFixtures
import RepDetection
import RepProtocol

/// Error statistics over a group of sets.
public struct ErrorStatistics: Sendable, Equatable {
    /// Sets in the group.
    public var count: Int
    /// Mean absolute error, in reps.
    public var meanAbsoluteError: Double
    /// Mean signed error (counted − true), in reps.
    public var bias: Double
    /// Percent of sets counted exactly.
    public var exactPercent: Double
    /// Percent of sets counted within ±1.
    public var withinOnePercent: Double

    /// Statistics of the signed errors (counted − true) of a group. The sums are taken in `Double`, so no error,
    /// however large (`Int.min` included), overflows them.
    public init(errors: [Int]) {
        count = errors.count
        let n = Double(max(errors.count, 1))
        meanAbsoluteError = errors.reduce(0.0) { $0 + Double($1.magnitude) } / n
        bias = errors.reduce(0.0) { $0 + Double($1) } / n
        exactPercent = 100 * Double(errors.filter { $0 == 0 }.count) / n
        withinOnePercent = 100 * Double(errors.filter { $0.magnitude <= 1 }.count) / n
    }

    var json: JSONWriter.Value {
        .object([
            ("n", .integer(count)), ("mae", .number(meanAbsoluteError)), ("bias", .number(bias)),
            ("exact_pct", .number(exactPercent)), ("within1_pct", .number(withinOnePercent)),
        ])
    }
}

/// The outcome of one set.
public struct SetResult: Sendable, Equatable {
    /// The manifest entry.
    public var entry: ManifestEntry
    /// Reps the detector counted, or nil when the set could not be evaluated.
    public var counted: Int?
    /// Why the set could not be evaluated.
    public var failure: String?
    /// The recording's length, seconds (first to last sample; 0 when it could not be read).
    public var duration: Double = 0
    /// What a subscriber saw live: the `rep` events sent, and how late they came.
    public var live = LiveReps()
}

/// The `rep` events a replay sent as they happened (what an app subscribed to `rep` shows before each `set_end`
/// corrects it), and how late each came: the time of the last sample of the batch that produced it minus the rep's
/// own time (its completion).
public struct LiveReps: Sendable, Equatable {
    /// `rep` events sent.
    public var events = 0
    /// The sum of their delays, seconds.
    public var delaySum = 0.0
    /// The longest delay, seconds.
    public var maximumDelay = 0.0

    /// Creates an empty tally.
    public init() {}

    /// Adds one `rep` event sent `delay` seconds after the rep's completion.
    public mutating func add(delay: Double) {
        events += 1
        delaySum += delay
        maximumDelay = max(maximumDelay, delay)
    }

    /// Adds another tally's events.
    public mutating func add(_ other: LiveReps) {
        events += other.events
        delaySum += other.delaySum
        maximumDelay = max(maximumDelay, other.maximumDelay)
    }

    /// The mean delay, seconds (0 without events).
    public var meanDelay: Double { events > 0 ? delaySum / Double(events) : 0 }

    var json: JSONWriter.Value {
        .object([
            ("rep_events", .integer(events)), ("mean_delay_s", .number(meanDelay)),
            ("max_delay_s", .number(maximumDelay)),
        ])
    }
}

/// The final and live counts of one replay.
public struct ReplayCounts: Sendable, Equatable {
    /// Reps counted: the sum of the sets' final counts (`set_end.reps`).
    public var counted: Int
    /// The `rep` events sent live.
    public var live: LiveReps
}

/// How often recordings without exercise (true count 0) count something.
public struct FalseCountStatistics: Sendable, Equatable {
    /// Recordings in the group.
    public var count: Int
    /// Percent of them that count 0.
    public var zeroPercent: Double
    /// Reps counted in them per hour of recording.
    public var falseRepsPerHour: Double
    /// Percent of them that sent no `rep` event live.
    public var liveZeroPercent: Double
    /// `rep` events sent live per hour of recording (each later taken back by its `set_end`, or counted).
    public var liveFalseRepsPerHour: Double

    /// Statistics over (counted, live rep events, seconds) of recordings whose true count is 0.
    public init(_ results: [(counted: Int, live: Int, seconds: Double)]) {
        count = results.count
        let n = Double(max(1, results.count))
        zeroPercent = 100 * Double(results.filter { $0.counted == 0 }.count) / n
        liveZeroPercent = 100 * Double(results.filter { $0.live == 0 }.count) / n
        let hours = results.reduce(0) { $0 + $1.seconds } / 3600
        falseRepsPerHour = hours > 0 ? Double(results.reduce(0) { $0 + $1.counted }) / hours : 0
        liveFalseRepsPerHour = hours > 0 ? Double(results.reduce(0) { $0 + $1.live }) / hours : 0
    }

    var json: JSONWriter.Value {
        .object([
            ("n", .integer(count)), ("zero_pct", .number(zeroPercent)),
            ("false_reps_per_hour", .number(falseRepsPerHour)), ("live_zero_pct", .number(liveZeroPercent)),
            ("live_false_reps_per_hour", .number(liveFalseRepsPerHour)),
        ])
    }
}

/// The result of evaluating a manifest.
public struct EvaluationReport: Sendable {
    /// Every set, in manifest order.
    public var results: [SetResult]

    /// Sets that could not be evaluated.
    public var failures: [SetResult] { results.filter { $0.counted == nil } }

    /// Statistics over every evaluated set.
    public var overall: ErrorStatistics { statistics(results) }

    /// The `rep` events sent live for the sets with exercise (true count above 0), and how late they came.
    public var liveExercise: LiveReps {
        var live = LiveReps()
        for result in results where result.entry.trueReps > 0 && result.counted != nil { live.add(result.live) }
        return live
    }

    /// Statistics per exercise, by name.
    public var byExercise: [(String, ErrorStatistics)] { grouped { $0.exercise } }

    /// Statistics per folder: each file's folder as the manifest writes it (`tbe_main` for `tbe_main/a.csv`,
    /// `/tmp/sets` for `/tmp/sets/a.csv`, `.` for a file beside the manifest), the same in the table and in `--json`.
    public var byFolder: [(String, ErrorStatistics)] { grouped { Self.folder(of: $0.file) } }

    /// The folder part of a manifest's file path as written: everything before its last `/` (repeated slashes
    /// there dropped), `/` for a file at the root, `.` for a bare name.
    public static func folder(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "." }
        var folder = file[..<slash]
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder.isEmpty ? "/" : String(folder)
    }

    /// For the exercises whose every recording has a true count of 0 (walking, sitting…): per exercise, the share
    /// counting 0 and the false reps per hour; the last entry, "all", pools them.
    public var falseCounts: [(String, FalseCountStatistics)] {
        var groups: [String: [(counted: Int, live: Int, seconds: Double)]] = [:]
        var exercises: Set<String> = []
        for result in results { exercises.insert(result.entry.exercise) }
        for result in results where result.entry.trueReps > 0 { exercises.remove(result.entry.exercise) }
        for result in results where exercises.contains(result.entry.exercise) {
            guard let counted = result.counted else { continue }
            groups[result.entry.exercise, default: []].append((counted, result.live.events, result.duration))
        }
        guard !groups.isEmpty else { return [] }
        var out = groups.keys.sorted().map { ($0, FalseCountStatistics(groups[$0]!)) }
        out.append(("all", FalseCountStatistics(groups.values.flatMap { $0 })))
        return out
    }

    private func grouped(by key: (ManifestEntry) -> String) -> [(String, ErrorStatistics)] {
        var groups: [String: [SetResult]] = [:]
        for result in results { groups[key(result.entry), default: []].append(result) }
        return groups.keys.sorted().map { ($0, statistics(groups[$0]!)) }
    }

    private func statistics(_ results: [SetResult]) -> ErrorStatistics {
        ErrorStatistics(errors: results.compactMap { result in result.counted.map { $0 - result.entry.trueReps } })
    }

    /// The report as one JSON object (see `repctl eval --help`).
    public var json: String {
        let sets: [JSONWriter.Value] = results.map { result in
            var members: [(String, JSONWriter.Value)] = [
                ("file", .string(result.entry.file)), ("exercise", .string(result.entry.exercise)),
                ("true_reps", .integer(result.entry.trueReps)),
                ("counted", result.counted.map { .integer($0) } ?? .null),
            ]
            if result.counted != nil { members.append(("live_reps", .integer(result.live.events))) }
            if let failure = result.failure { members.append(("error", .string(failure))) }
            return .object(members)
        }
        return JSONWriter.Value.object([
            ("overall", overall.json),
            ("live", liveExercise.json),
            ("by_exercise", .object(byExercise.map { ($0.0, $0.1.json) })),
            ("by_folder", .object(byFolder.map { ($0.0, $0.1.json) })),
            ("no_exercise", .object(falseCounts.map { ($0.0, $0.1.json) })),
            ("sets", .array(sets)),
        ]).text
    }

    /// The report as a table for people.
    public var table: String {
        var lines: [String] = []
        func row(_ name: String, _ s: ErrorStatistics) -> String {
            let cells = [
                pad(name, 20), pad(String(s.count), 4, right: true),
                pad(format(s.meanAbsoluteError, decimals: 2), 6, right: true),
                pad(format(s.bias, decimals: 2), 6, right: true),
                pad(format(s.exactPercent, decimals: 0), 7, right: true),
                pad(format(s.withinOnePercent, decimals: 0), 8, right: true),
            ]
            return cells.joined(separator: "  ")
        }
        let header = [
            pad("group", 20), pad("n", 4, right: true), pad("MAE", 6, right: true), pad("bias", 6, right: true),
            pad("exact%", 7, right: true), pad("±1%", 8, right: true),
        ].joined(separator: "  ")
        lines.append(header)
        for (name, stats) in byExercise { lines.append(row(name, stats)) }
        lines.append("")
        for (name, stats) in byFolder { lines.append(row(name, stats)) }
        lines.append(row("overall", overall))
        let live = liveExercise
        if live.events > 0 {
            lines.append(
                "live: \(live.events) rep events in the sets with exercise, \(format(live.meanDelay, decimals: 2)) s "
                    + "after each rep's end on average (at most \(format(live.maximumDelay, decimals: 2)) s)")
        }
        if !falseCounts.isEmpty {
            lines.append("")
            lines.append(
                [
                    pad("no exercise (true 0)", 20), pad("n", 4, right: true), pad("count 0", 8, right: true),
                    pad("false reps/h", 13, right: true), pad("live 0", 7, right: true),
                    pad("live reps/h", 12, right: true),
                ].joined(separator: "  "))
            for (name, stats) in falseCounts {
                lines.append(
                    [
                        pad(name, 20), pad(String(stats.count), 4, right: true),
                        pad(format(stats.zeroPercent, decimals: 0) + " %", 8, right: true),
                        pad(format(stats.falseRepsPerHour, decimals: 0), 13, right: true),
                        pad(format(stats.liveZeroPercent, decimals: 0) + " %", 7, right: true),
                        pad(format(stats.liveFalseRepsPerHour, decimals: 0), 12, right: true),
                    ].joined(separator: "  "))
            }
        }
        for failure in failures {
            lines.append("FAILED \(failure.entry.file): \(failure.failure ?? "unknown error")")
        }
        return lines.joined(separator: "\n")
    }

    private func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - s.count))
        return right ? fill + s : s + fill
    }
}

/// Replays recorded sets through the fixture provider into the rep detector (the daemon's detector: the same counts).
public enum Evaluator {
    /// Counts the reps in `samples`: `FixtureMotionProvider.replayAll()` in batches of `batchSize` into a
    /// `RepDetectionService`, with the stream finished at the end.
    public static func countReps(
        in samples: [MotionSample], batchSize: Int = 10, configuration: RepDetectorConfiguration = .init()
    ) -> Int {
        replay(samples, batchSize: batchSize, configuration: configuration).counted
    }

    /// Replays `samples` as `countReps(in:batchSize:configuration:)` does, and also tallies the `rep` events sent
    /// live, each late by the time of its batch's last sample minus the rep's time (the stream's end for the events
    /// `finish()` sends).
    public static func replay(
        _ samples: [MotionSample], batchSize: Int = 10, configuration: RepDetectorConfiguration = .init()
    ) -> ReplayCounts {
        let provider = FixtureMotionProvider(samples: samples, batchSize: batchSize)
        let service = RepDetectionService(configuration: configuration)
        var live = LiveReps()
        func tally(_ events: [WorkoutEvent], at now: Double) {
            for case .rep(let rep) in events { live.add(delay: now - rep.timestamp) }
        }
        let subscription = provider.samplePublisher.sink { batch in
            tally(service.processBatch(batch), at: batch.last?.timestamp ?? 0)
        }
        provider.replayAll()
        tally(service.finish(), at: samples.last?.timestamp ?? 0)
        subscription.cancel()
        return ReplayCounts(counted: service.totalReps, live: live)
    }

    /// Evaluates every entry; files are relative to `root`. A set whose file is missing or malformed is listed as
    /// failed with the reason; the others are still evaluated.
    public static func evaluate(
        _ entries: [ManifestEntry], root: String, batchSize: Int = 10,
        configuration: RepDetectorConfiguration = .init()
    ) -> EvaluationReport {
        var results: [SetResult] = []
        for entry in entries {
            let path = entry.file.hasPrefix("/") ? entry.file : root + "/" + entry.file
            do {
                let samples = try FixtureFileReader.read(path: path)
                let replayed = replay(samples, batchSize: batchSize, configuration: configuration)
                let seconds = (samples.last?.timestamp ?? 0) - (samples.first?.timestamp ?? 0)
                results.append(
                    SetResult(
                        entry: entry, counted: replayed.counted, failure: nil, duration: seconds, live: replayed.live))
            } catch {
                results.append(SetResult(entry: entry, counted: nil, failure: error.description))
            }
        }
        return EvaluationReport(results: results)
    }
}
