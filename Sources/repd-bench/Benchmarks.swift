import MotionCore
import MotionFixtures
import MotionSimulation
import RepDetection

/// One measured figure: every value measured for it (repeats), reported as the median with the min–max spread.
struct Figure {
    var key: String
    var samples: [Double]
    var unit: String
    var goal: String
    var note: String

    init(key: String, value: Double, unit: String, goal: String, note: String) {
        self.init(key: key, samples: [value], unit: unit, goal: goal, note: note)
    }

    init(key: String, samples: [Double], unit: String, goal: String, note: String) {
        self.key = key
        self.samples = samples
        self.unit = unit
        self.goal = goal
        self.note = note
    }

    private var measured: [Double] { samples.filter { !$0.isNaN }.sorted() }
    /// The median of the values measured (NaN if none was).
    var value: Double {
        let sorted = measured
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
    var minimum: Double { measured.first ?? .nan }
    var maximum: Double { measured.last ?? .nan }
    var runs: Int { measured.count }

    /// The figures of several runs of the same benchmarks, one per key (in first-seen order), values pooled.
    static func merged(_ runs: [[Figure]]) -> [Figure] {
        var order: [String] = []
        var byKey: [String: Figure] = [:]
        for figure in runs.joined() {
            if var known = byKey[figure.key] {
                known.samples += figure.samples
                known.note = figure.note
                byKey[figure.key] = known
            } else {
                order.append(figure.key)
                byKey[figure.key] = figure
            }
        }
        return order.map { byKey[$0]! }
    }
}

/// Wall-clock seconds of `body`, best of `repeats` (the least disturbed run).
func bestTime(repeats: Int, _ body: () -> Void) -> Double {
    var best = Double.infinity
    for _ in 0..<repeats {
        let start = ContinuousClock.now
        body()
        let elapsed = ContinuousClock.now - start
        best = min(best, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return best
}

/// Prevents the optimizer from removing work whose result is otherwise unused.
@inline(never) func blackHole<T>(_ value: T) { _ = value }

enum DetectorBenchmark {
    /// Samples per second through `RepDetector.process` on a long generated workout (one core).
    static func run(quick: Bool) -> [Figure] {
        var generator = WorkoutGenerator()
        generator.sets = quick ? 20 : 100
        generator.repsPerSet = [10]
        generator.sampleRate = 100
        let samples = generator.generate().samples
        var events: [WorkoutEvent] = []
        events.reserveCapacity(4096)
        var reps = 0
        // The defaults (the exercise gate on) and, in the same run, the gate off: what the gate costs, as a ratio.
        func time(_ configuration: RepDetectorConfiguration) -> Double {
            bestTime(repeats: quick ? 3 : 5) {
                var detector = RepDetector(configuration: configuration)
                events.removeAll(keepingCapacity: true)
                detector.process(samples, into: &events)
                reps = detector.totalReps
            }
        }
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        let ungated = time(off)
        let seconds = time(RepDetectorConfiguration())
        blackHole(reps)
        let rate = Double(samples.count) / seconds / 1e6
        return [
            Figure(
                key: "detector_msamples_per_s", value: rate, unit: "M samples/s", goal: "≥ 3",
                note:
                    "\(samples.count) samples of a \(generator.sets)-set workout at 100 Hz, \(reps) reps counted, defaults"
            ),
            Figure(
                key: "detector_gate_cost", value: seconds / ungated, unit: "x", goal: "small",
                note: "time with the exercise gate on (default) over off, same samples, same run"),
        ]
    }
}

enum FixtureBenchmark {
    /// Seconds to read a 1-million-row fixture file, against reading the same bytes without parsing.
    static func run(quick: Bool, directory: String) -> [Figure] {
        let rows = quick ? 200_000 : 1_000_000
        var generator = WorkoutGenerator()
        generator.sets = 1 + rows / 5000
        generator.sampleRate = 100
        let samples = Array(generator.generate().samples.prefix(rows))
        let path = directory + "/repd-bench-fixture.csv"
        try! FixtureFileWriter.write(samples, to: path)
        var count = 0
        let parse = bestTime(repeats: 3) {
            count = (try? FixtureFileReader.read(path: path).count) ?? -1
        }
        precondition(count == samples.count, "fixture read back \(count) of \(samples.count) rows")
        let perMillion = parse * 1_000_000 / Double(count)
        return [
            Figure(
                key: "fixture_load_s_per_1m_rows", value: perMillion, unit: "s", goal: "well under 1",
                note: "\(count) rows read and parsed (streamed in 256 KiB chunks), scaled to 1 M")
        ]
    }
}
