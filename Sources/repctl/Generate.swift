import ArgumentParser
import MotionCore
import MotionFixtures
import MotionSimulation
import PlainText
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension BarbellGenerator.Lift: ExpressibleByArgument {}

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Write a generated fixture CSV: a workout, a set of sine reps, a walk, a set of barbell reps or of burpees.",
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
              repctl generate barbell --lift squat --reps 6 --velocity 0.8 --loss 0.3 \\
                --rom 0.5 --rate 100 --bar-tilt 5 --out squat.csv --truth squat-truth.csv
                (a sensor on the bar; the truth CSV holds each rep's true tempo, range of
                motion and velocities; the sensor's orientation is drawn from --seed)
              repctl generate barbell --lift bench --turnaround-pause 1.5 --rest-motion 0.01 \
                --rate 200 --out paused-bench.csv
                (paused bench: 1.5 s on the chest; the bar sinks up to 1 cm between reps)
              repctl generate barbell --lift deadlift --start-pause 0 --out tng.csv
                (touch-and-go deadlifts: no rest on the floor between reps)
              repctl generate burpee --reps 10 --period 2.5 --rate 10 --out burpees.csv
                (an upper arm's view of 10 burpees, three landings a rep)

            Options that each pass alone can together move the sensor faster than a fixture holds (±1000 g: \
            --depth 1e300, --period 0.001, --stride 1000): such a file is refused before anything is written \
            (exit 64), naming the options to change.
            """)

    enum Kind: String, ExpressibleByArgument { case workout, sine, walk, barbell, burpee }

    @Argument(help: "What to generate: workout, sine, walk, barbell or burpee.")
    var kind: Kind

    @Option(help: "Where to write the CSV (t,ax,ay,az in seconds and g).")
    var out: String

    @Option(help: "Samples per second.")
    var rate: Double = 50

    @Option(help: "Gravity in the sensor frame, as x,y,z (normalized); walk, burpee: while the arm hangs still.")
    var gravity: String = "0,0,1"

    @Option(
        help:
            "workout: reps per set, comma-separated (default: the demo's 8,10,12); barbell: reps in the set (default 6); burpee: (default 10). At most 100000 a set."
    )
    var reps: String?

    @Option(help: "workout: seconds of rest between sets (default: the demo's 15).")
    var rest: Double?

    @Option(
        help:
            "workout: seconds per rep (default: the demo's 2.2; each rep varies by up to 10 %); burpee: (default 3, varying by 5 %)."
    )
    var period: Double?

    @Option(
        help:
            "workout: how far each rep moves the sensor along gravity (down and back up), in m (default: the demo's 0.45)."
    )
    var depth: Double?

    @Option(help: "workout: how far the sensor tilts at the bottom of each rep, in degrees (default: the demo's 8).")
    var tilt: Double?

    @Option(
        help:
            "workout: how much longer the last rep of each set takes than the first, as a fraction (0.5: 1.5 times as long; default 0, a steady tempo)."
    )
    var slowdown: Double?

    @Option(help: "workout, sine, walk, barbell or burpee: random seed.")
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

    @Option(
        help: "sine, barbell, burpee: white noise on every axis, in g (default: sine 0, barbell 0.01, burpee 0.02).")
    var noise: Double?

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

    @Option(help: "barbell: squat, bench or deadlift.")
    var lift: BarbellGenerator.Lift = .squat

    @Option(help: "barbell: the first rep's mean concentric velocity, m/s.")
    var velocity = 0.6

    @Option(help: "barbell: how much slower the last rep is than the first, as a fraction (0.3: 30 % velocity loss).")
    var loss = 0.3

    @Option(help: "barbell: vertical range of motion, m.")
    var rom = 0.5

    @Option(name: .customLong("bar-tilt"), help: "barbell: peak tilt of the bar during a rep, degrees.")
    var barTilt = 5.0

    @Option(help: "barbell: bias of each accelerometer axis, g.")
    var bias = 0.02

    @Option(help: "barbell: scale error of each axis, as a fraction.")
    var scaleError = 0.01

    @Option(
        help:
            "barbell: seconds the bar rests at the start position between reps, each varying by up to a third (0: touch-and-go)."
    )
    var startPause = 0.8

    @Option(help: "barbell: seconds of pause at the far turnaround (paused squat or bench: 1-2).")
    var turnaroundPause = 0.1

    @Option(
        help:
            "barbell: how far the bar moves (towards the turnaround and back) while it rests between reps, m (0: still)."
    )
    var restMotion = 0.0

    @Option(help: "barbell: where to write the true per-rep figures as CSV (not --out).")
    var truth: String?

    func validate() throws {
        guard !out.isEmpty else { throw ValidationError("--out must name a file (it is empty).") }
        if let truth {
            guard !truth.isEmpty else { throw ValidationError("--truth must name a file (it is empty).") }
            // The fixture would be written over the truth just written.
            if sameFile(truth, out) { throw ValidationError("--truth and --out are the same file (\(out)).") }
        }
        guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number.") }
        _ = try vector(gravity, "--gravity")
        _ = try vector(direction, "--direction")
        if let reps { _ = try repList(reps) }
        if let period {
            guard period > 0, period.isFinite else { throw ValidationError("--period must be a positive number.") }
        }
        for (value, name) in [(depth, "--depth"), (tilt, "--tilt"), (slowdown, "--slowdown")] {
            if let value {
                guard value >= 0, value.isFinite else { throw ValidationError("\(name) must be a number >= 0.") }
            }
        }
        guard stride > 0, stride.isFinite else { throw ValidationError("--stride must be a positive number.") }
        guard seconds >= 0, seconds.isFinite else { throw ValidationError("--seconds must be a number >= 0.") }
        guard velocity > 0, velocity <= 5 else { throw ValidationError("--velocity must be in (0, 5] m/s.") }
        guard loss >= 0, loss < 1 else { throw ValidationError("--loss must be a fraction from 0 to below 1.") }
        guard rom > 0, rom <= 2 else { throw ValidationError("--rom must be in (0, 2] m.") }
        for (value, name) in [(startPause, "--start-pause"), (turnaroundPause, "--turnaround-pause")] {
            guard value >= 0, value <= 60 else { throw ValidationError("\(name) must be in [0, 60] s.") }
        }
        guard restMotion >= 0, restMotion < rom else {
            throw ValidationError("--rest-motion must be from 0 to below --rom.")
        }
        for (value, name) in [(barTilt, "--bar-tilt"), (bias, "--bias"), (scaleError, "--scale-error")] {
            guard value >= 0, value.isFinite else { throw ValidationError("\(name) must be a number >= 0.") }
        }
        for (value, name) in [(swing, "--swing"), (bounce, "--bounce"), (heelStrike, "--heel-strike")] {
            guard value >= 0, value.isFinite else { throw ValidationError("\(name) must be a number >= 0.") }
        }
        guard rate <= 100_000 else { throw ValidationError("--rate must be at most 100000 samples a second.") }
        guard count > 0 else { throw ValidationError("--count must be a whole number of cycles, 1 or more.") }
        guard frequency > 0, frequency.isFinite else { throw ValidationError("--frequency must be a positive number.") }
        guard amplitude.isFinite, phase.isFinite else {
            throw ValidationError("--amplitude and --phase must be numbers.")
        }
        for (value, name) in [(rest, "--rest"), (noise, "--noise")] {
            if let value {
                guard value >= 0, value.isFinite else { throw ValidationError("\(name) must be a number >= 0.") }
            }
        }
        // A fixture holds accelerations within ±1000 g (MotionSample.accelerationLimit): the reader refuses more.
        let inG = [
            (amplitude, "--amplitude"), (noise ?? 0, "--noise"), (bounce, "--bounce"), (heelStrike, "--heel-strike"),
            (bias, "--bias"),
        ]
        for (value, name) in inG where abs(value) > 100 {
            throw ValidationError("\(name) must be within ±100 g (a fixture holds at most ±1000 g).")
        }
        let samples = try estimatedSeconds() * rate
        guard samples <= Double(Self.maximumSamples) else {
            let about = samples < 1e15 ? "about \(format(samples, decimals: 0))" : "more than 10^15"
            throw ValidationError(
                "that would be \(about) samples; at most \(Self.maximumSamples) "
                    + "(fewer reps, cycles or seconds, or a lower --rate).")
        }
    }

    /// The most samples one file may hold: 10 million, about 28 hours at 100 Hz (each takes memory twice over while
    /// it is made and written).
    static let maximumSamples = 10_000_000

    /// An upper estimate of how long the generated recording lasts, in seconds (validated options).
    private func estimatedSeconds() throws -> Double {
        switch kind {
        case .workout:
            let demo = WorkoutGenerator.demo
            let reps = try reps.map(repList) ?? demo.repsPerSet
            let period = (period ?? demo.repPeriod) * 1.1 * (1 + (slowdown ?? demo.slowdown))
            return reps.reduce(0.0) { $0 + Double($1) } * period + Double(reps.count) * (rest ?? demo.restSeconds)
                + 2 * demo.leadSeconds
        case .sine:
            return Double(count) / frequency
        case .walk:
            return seconds + 6
        case .barbell:
            let reps = try reps.map(repList)?.first ?? 6
            let rep = 4 * rom / (velocity * (1 - loss)) + startPause * 4 / 3 + turnaroundPause + 2
            return Double(reps) * rep + 10
        case .burpee:
            let reps = try reps.map(repList)?.first ?? 10
            return Double(reps) * (period ?? 3) * 1.1 + 10
        }
    }

    func run() throws {
        let samples: [MotionSample]
        var truthText: String?
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
                frequency: frequency, amplitude: amplitude, phase: phase,
                direction: try vector(direction, "--direction"),
                gravity: try vector(gravity, "--gravity").normalized)
            samples = SignalGenerator.repetitions(
                count: count, of: motion, sampleRate: rate, noise: noise ?? 0, seed: seed)
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
        case .barbell:
            var generator = BarbellGenerator()
            generator.lift = lift
            generator.reps = reps.map { (try? repList($0))?.first ?? 6 } ?? 6
            generator.firstMeanVelocity = velocity
            generator.velocityLoss = loss
            generator.rangeOfMotion = rom
            generator.tiltDegrees = barTilt
            generator.bias = bias
            generator.scaleError = scaleError
            generator.startPause = startPause
            generator.turnaroundPause = turnaroundPause
            generator.restMotion = restMotion
            generator.noise = noise ?? 0.01
            generator.sampleRate = rate
            generator.seed = seed
            let set = generator.generate()
            samples = set.samples
            truthText = Self.truthCSV(set)
        case .burpee:
            var generator = BurpeeGenerator()
            generator.reps = reps.map { (try? repList($0))?.first ?? 10 } ?? 10
            if let period { generator.period = period }
            generator.upDirection = try vector(gravity, "--gravity")
            generator.noise = noise ?? 0.02
            generator.sampleRate = rate
            generator.seed = seed
            samples = generator.samples()
        }
        if let sample = samples.first(where: { !$0.isPlausible }) {
            printError("repctl: \(implausible(sample))")
            throw ExitCode.validationFailure
        }
        if let truth, let truthText {
            do { try TextFile.write(truthText, to: truth) } catch {
                printError("repctl: cannot write \(truth): \(error)")
                throw ExitCode(1)
            }
        }
        do { try FixtureFileWriter.write(samples, to: out) } catch {
            // A generated file can be made again: leave nothing behind.
            _ = unlink(out + ".partial")
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        print("\(out): \(samples.count) samples")
    }

    /// Why a generated sample is one a fixture cannot hold (the reader and repd refuse the file): options that each
    /// pass alone moved the sensor too far too fast (`--depth 1e300`, `--period 0.001`, `--stride 1000`), or made the
    /// recording too long (a tiny `--rate`). It names the options to change.
    private func implausible(_ sample: MotionSample) -> String {
        guard abs(sample.timestamp) <= MotionSample.timestampLimit else {
            return
                ("the generated \(kind.rawValue) would last beyond \(format(MotionSample.timestampLimit, decimals: 0)) s, "
                + "more than a fixture holds: fewer reps, cycles or seconds, or a higher --rate.")
        }
        let options =
            switch kind {
            case .workout: "a smaller --depth or --tilt, or a longer --period"
            case .sine: "a smaller --amplitude or --noise"
            case .walk: "a lower --stride, --swing, --bounce or --heel-strike"
            case .barbell: "a lower --velocity, --noise or --bias, or a longer --rom or pause"
            case .burpee: "a longer --period or less --noise"
            }
        let axes = [sample.ax, sample.ay, sample.az].map(abs)
        let reached =
            axes.allSatisfy(\.isFinite)
            ? "\(format(axes.max() ?? 0, decimals: 0)) g" : "an acceleration that is not a finite number"
        return
            ("the generated \(kind.rawValue) would reach \(reached) at \(format(sample.timestamp, decimals: 2)) s, "
            + "beyond the ±\(format(MotionSample.accelerationLimit, decimals: 0)) g a fixture holds: \(options).")
    }

    /// The truth of a barbell set, one line per rep (s, m, m/s, %).
    static func truthCSV(_ set: BarbellGenerator.BarbellSet) -> String {
        var out =
            "rep,start,end,eccentric_s,concentric_s,pause_bottom_s,pause_top_s,rom_m,mean_velocity_m_s,peak_velocity_m_s,velocity_loss_pct\n"
        func f(_ value: Double?) -> String { value.map { format($0, decimals: 4) } ?? "" }
        for (index, rep) in set.reps.enumerated() {
            let q = rep.quality
            out += "\(index + 1),\(f(q.start)),\(f(q.end)),\(f(q.eccentric)),\(f(q.concentric)),\(f(q.pauseBottom)),"
            out += "\(f(q.pauseTop)),\(f(q.velocity?.rangeOfMotion)),\(f(q.velocity?.meanConcentric)),"
            out += "\(f(q.velocity?.peakConcentric)),\(f(q.velocity?.loss))\n"
        }
        return out + "# set velocity loss \(format(set.velocityLoss, decimals: 2)) %\n"
    }

    /// Three finite numbers x,y,z whose length is finite and above 0 (each is normalized on use: a length that
    /// overflows or underflows would make it 0,0,0 or nan).
    private func vector(_ text: String, _ name: String) throws -> Vector3 {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard parts.count == 3, let x = parts[0], let y = parts[1], let z = parts[2],
            x.isFinite, y.isFinite, z.isFinite
        else {
            throw ValidationError("\(name) must be three finite numbers x,y,z (got '\(text)').")
        }
        let vector = Vector3(x, y, z)
        guard vector.length > 0, vector.length.isFinite else {
            throw ValidationError(
                "\(name) must be a direction: not all zero, nor so large or small that its length is not a number "
                    + "(got '\(text)').")
        }
        return vector
    }

    private func repList(_ text: String) throws -> [Int] {
        let parts = text.split(separator: ",").map { Int($0) }
        guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw ValidationError("--reps must be positive whole numbers separated by commas (got '\(text)').")
        }
        guard parts.allSatisfy({ $0! <= Self.maximumReps }) else {
            throw ValidationError("--reps must be at most \(Self.maximumReps) a set (got '\(text)').")
        }
        return parts.map { $0! }
    }

    /// The most reps one set may have (as many as an evaluation manifest's true_reps may say).
    static let maximumReps = 100_000
}
