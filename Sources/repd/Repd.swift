import ArgumentParser
import Dispatch
import MotionCore
import RepDetection

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

/// repd: counts exercise repetitions from an accelerometer and publishes them.
///
/// This version replays the built-in demo workout or a fixture file through the fixture provider in real time,
/// counts reps with RepDetectionService and prints each set and rep; the IIO sensor and the socket arrive with
/// their issues.
@main
struct Repd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repd",
        abstract: "Count exercise repetitions from an accelerometer.",
        discussion: """
            Without a sensor: --demo replays a generated workout (3 sets of 8, 10 and 12 reps) in real time;
            --fixture FILE.csv replays a recording (header t,ax,ay,az; seconds and g). Each set and rep is printed
            as it is counted, with the sample time it belongs to.
            """)

    @Flag(help: "Replay the built-in demo workout in real time (no sensor needed).")
    var demo = false

    @Option(help: "Replay a fixture CSV file (t,ax,ay,az in seconds and g).")
    var fixture: String?

    @Option(help: "Replay speed for --demo and --fixture (≥ 0.1; 1 is real time).")
    var speed: Double = 1

    @Flag(help: "Start the replay over at its end.")
    var loop = false

    func validate() throws {
        guard demo != (fixture != nil) else { throw ValidationError("Give exactly one of --demo or --fixture FILE.") }
        guard speed.isFinite, speed > 0 else { throw ValidationError("--speed must be a positive number.") }
    }

    func run() async throws {
        setvbuf(stdout, nil, _IOLBF, 0)  // one line at a time, also into pipes and the journal
        let samples: [MotionSample]
        if let fixture {
            do { samples = try FixtureFileReader.read(path: fixture) } catch {
                throw ValidationError("cannot replay \(error)")
            }
        } else {
            samples = WorkoutGenerator.demo.generate().samples
        }
        let provider = FixtureMotionProvider(samples: samples, batchSize: 5, speedMultiplier: speed, loop: loop)
        let duration = (samples.last?.timestamp ?? 0) - (samples.first?.timestamp ?? 0)
        print("repd: replaying \(fixture ?? "the demo workout"): \(samples.count) samples, \(format(duration)) s, at \(format(provider.speedMultiplier))×")
        let detector = RepDetectionService()
        let batches = provider.sampleBatches
        provider.start()
        for await batch in batches {
            for event in detector.processBatch(batch) { print(describe(event)) }
        }
        for event in detector.finish() { print(describe(event)) }
        print("repd: end of data: \(detector.totalReps) reps in \(detector.setNumber) sets")
    }

    private func describe(_ event: WorkoutEvent) -> String {
        switch event {
        case .setStarted(let s): "t=\(format(s.timestamp)) s  set \(s.setNumber) started"
        case .rep(let r):
            "t=\(format(r.timestamp)) s  set \(r.setNumber) · rep \(r.repInSet) · total \(r.totalReps) · \(format(r.duration)) s · \(format(r.amplitude)) g"
        case .setEnded(let s): "t=\(format(s.timestamp)) s  set \(s.setNumber) ended: \(s.repCount) reps"
        }
    }

    private func format(_ value: Double) -> String {
        let scaled = (value * 10).rounded() / 10
        return "\(scaled)"
    }
}
