import ArgumentParser
import MotionCore
import MotionFixtures
import MotionSimulation

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a generated fixture CSV: a workout, a set of sine reps, or a walk.",
        discussion: """
            Examples:
              repctl generate workout --out demo.csv    (the built-in demo workout)
              repctl generate workout --reps 5,5,5 --rest 30 --gravity 0,-1,0 \\
                --seed 7 --out w.csv
              repctl generate workout --reps 8,8 --period 4 --depth 0.3 --out slow.csv
                (slow physiotherapy tempo: 4 s a rep)
              repctl generate sine --count 10 --frequency 1.5 --amplitude 0.5 \\
                --out sine.csv
              repctl generate walk --stride 0.95 --swing 20 --gravity 1,1,1 --out walk.csv
                (a wrist on a 30 s walk: it should count no reps)
            """)

    enum Kind: String, ExpressibleByArgument { case workout, sine, walk }

    @Argument(help: "What to generate: workout, sine or walk.")
    var kind: Kind

    @Option(help: "Where to write the CSV (t,ax,ay,az in seconds and g).")
    var out: String

    @Option(help: "Samples per second.")
    var rate: Double = 50

    @Option(help: "Gravity in the sensor frame, as x,y,z (normalized); walk: while the arm hangs still.")
    var gravity: String = "0,0,1"

    @Option(help: "workout: reps per set, comma-separated (default: the demo's 8,10,12).")
    var reps: String?

    @Option(help: "workout: seconds of rest between sets (default: the demo's 15).")
    var rest: Double?

    @Option(help: "workout: seconds per rep (default: the demo's 2.2; each rep varies by up to 10 %).")
    var period: Double?

    @Option(help: "workout: how far each rep moves the sensor along gravity (down and back up), in m (default: the demo's 0.45).")
    var depth: Double?

    @Option(help: "workout: how far the sensor tilts at the bottom of each rep, in degrees (default: the demo's 8).")
    var tilt: Double?

    @Option(help: "workout: how much longer the last rep of each set takes than the first, as a fraction (0.5: 1.5 times as long; default 0, a steady tempo).")
    var slowdown: Double?

    @Option(help: "workout, sine or walk: random seed.")
    var seed: UInt64 = 42

    @Option(help: "sine: number of cycles.")
    var count = 10

    @Option(help: "sine: cycles per second.")
    var frequency = 1.5

    @Option(help: "sine: peak acceleration in g.")
    var amplitude = 0.5

    @Option(help: "sine: phase in radians.")
    var phase = 0.0

    @Option(help: "sine: direction of the motion, as x,y,z.")
    var direction = "0,1,0"

    @Option(help: "sine: white noise on every axis, in g.")
    var noise = 0.0

    @Option(help: "walk: strides per second (one arm swing forward and back, two steps).")
    var stride = 0.95

    @Option(help: "walk: peak arm swing either side of vertical, in degrees.")
    var swing = 20.0

    @Option(help: "walk: peak vertical bounce of the body at each step, in g.")
    var bounce = 0.25

    @Option(help: "walk: peak of the heel strike at each step, in g.")
    var heelStrike = 0.5

    @Option(help: "walk: seconds of walking, between 3 s of stillness before and after.")
    var seconds = 30.0

    func validate() throws {
        guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number.") }
        _ = try vector(gravity, "--gravity")
        _ = try vector(direction, "--direction")
        if let reps { _ = try repList(reps) }
        if let period { guard period > 0, period.isFinite else { throw ValidationError("--period must be a positive number.") } }
        for (value, name) in [(depth, "--depth"), (tilt, "--tilt"), (slowdown, "--slowdown")] {
            if let value { guard value >= 0, value.isFinite else { throw ValidationError("\(name) must be a number >= 0.") } }
        }
        guard stride > 0, stride.isFinite else { throw ValidationError("--stride must be a positive number.") }
        guard seconds >= 0, seconds.isFinite else { throw ValidationError("--seconds must be a number >= 0.") }
        for (value, name) in [(swing, "--swing"), (bounce, "--bounce"), (heelStrike, "--heel-strike")] {
            guard value >= 0, value.isFinite else { throw ValidationError("\(name) must be a number >= 0.") }
        }
    }

    func run() throws {
        let samples: [MotionSample]
        switch kind {
        case .workout:
            var generator = WorkoutGenerator.demo
            generator.sampleRate = rate
            generator.gravityDirection = try vector(gravity, "--gravity")
            generator.seed = seed
            if let reps { generator.repsPerSet = try repList(reps); generator.sets = generator.repsPerSet.count }
            if let rest { generator.restSeconds = rest }
            if let period { generator.repPeriod = period }
            if let depth { generator.depth = depth }
            if let tilt { generator.tiltDegrees = tilt }
            if let slowdown { generator.slowdown = slowdown }
            samples = generator.generate().samples
        case .sine:
            let motion = SineMotion(
                frequency: frequency, amplitude: amplitude, phase: phase, direction: try vector(direction, "--direction"),
                gravity: try vector(gravity, "--gravity").normalized)
            samples = SignalGenerator.repetitions(count: count, of: motion, sampleRate: rate, noise: noise, seed: seed)
        case .walk:
            var walk = WalkingGenerator()
            walk.sampleRate = rate
            walk.upDirection = try vector(gravity, "--gravity")
            walk.strideFrequency = stride
            walk.swingDegrees = swing
            walk.bounce = bounce
            walk.heelStrike = heelStrike
            walk.walkSeconds = seconds
            walk.seed = seed
            samples = walk.samples()
        }
        do { try FixtureFileWriter.write(samples, to: out) } catch {
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        print("\(out): \(samples.count) samples")
    }

    private func vector(_ text: String, _ name: String) throws -> Vector3 {
        let parts = text.split(separator: ",").compactMap { Double($0) }
        guard parts.count == 3, parts.contains(where: { $0 != 0 }) else {
            throw ValidationError("\(name) must be three numbers x,y,z, not all zero (got '\(text)').")
        }
        return Vector3(parts[0], parts[1], parts[2])
    }

    private func repList(_ text: String) throws -> [Int] {
        let parts = text.split(separator: ",").map { Int($0) }
        guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw ValidationError("--reps must be positive whole numbers separated by commas (got '\(text)').")
        }
        return parts.map { $0! }
    }
}
