import ArgumentParser
import Dispatch
import MotionCore

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
@preconcurrency import Darwin
#endif

/// repd: counts exercise repetitions from an accelerometer and publishes them.
///
/// This early version replays the built-in demo workout or a fixture file through the fixture provider in real
/// time and prints what flows; rep detection, the IIO sensor and the socket arrive with their issues.
@main
struct Repd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repd",
        abstract: "Count exercise repetitions from an accelerometer.",
        discussion: """
            Without a sensor: --demo replays a generated workout (3 sets of 8, 10 and 12 reps) in real time;
            --fixture FILE.csv replays a recording (header t,ax,ay,az; seconds and g).
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
        let provider = FixtureMotionProvider(samples: samples, batchSize: 25, speedMultiplier: speed, loop: loop)
        print("repd: replaying \(samples.count) samples (\(fixture ?? "demo workout")) at \(provider.speedMultiplier)×")
        print("repd: rep detection is not built yet: this shows the samples flowing through the provider")
        let batches = provider.sampleBatches
        provider.start()
        for await batch in batches {
            guard let last = batch.last else { continue }
            let magnitude = batch.map(\.magnitude).max() ?? 0
            print("t=\(format(last.timestamp)) s  batch=\(batch.count)  peak |a|=\(format(magnitude)) g")
        }
        print("repd: end of data")
    }

    private func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return "\(scaled)"
    }
}
