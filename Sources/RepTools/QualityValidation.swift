import MotionCore
import MotionSimulation
import RepDetection
import RepProtocol

/// Runs the barbell generator over a grid of conditions through the rep detector (placement `bar`) and compares
/// the per-rep quality repd reports with the generator's truth: RMS errors of the mean concentric velocity, the
/// range of motion and the set's velocity loss, per condition (docs/QUALITY.md holds the table).
public enum QualityValidation {
    /// How the lifter moves between the reps' phases.
    public enum Style: Sendable, Hashable, CustomStringConvertible {
        /// Still at the start position for 0.8 s (± a third) between reps, 0.1 s at the turnaround.
        case standard
        /// No rest at the start position: each rep begins the moment the one before stops.
        case touchAndGo
        /// This many seconds of pause at the turnaround (a paused squat or bench press).
        case paused(Double)
        /// The bar moves up to this far (m) towards the turnaround and back during each rest at the start position.
        case restMotion(Double)

        /// A short label for the report (`touch-and-go`, `paused 2 s`, `bar moves 1 cm at rest`).
        public var description: String {
            switch self {
            case .standard: "standard"
            case .touchAndGo: "touch-and-go"
            case .paused(let s): "paused \(format(s, decimals: s == s.rounded() ? 0 : 1)) s"
            case .restMotion(let m): "bar moves \(format(m * 100, decimals: 0)) cm at rest"
            }
        }

        /// The styles `repctl validate-quality` runs besides `standard`.
        public static let others: [Style] = [.touchAndGo, .paused(1), .paused(2), .restMotion(0.01)]
    }

    /// One generated set's conditions.
    public struct Condition: Sendable {
        /// The lift: squat, bench or deadlift.
        public var lift: BarbellGenerator.Lift
        /// Sample rate, Hz.
        public var rate: Double
        /// Peak tilt of the bar during a rep, degrees.
        public var tiltDegrees: Double
        /// Bias of each accelerometer axis, g (its sign drawn at random per axis).
        public var bias: Double
        /// The first rep's mean concentric velocity, m/s.
        public var velocity: Double
        /// Vertical range of motion, m.
        public var rangeOfMotion: Double
        /// The generator's random seed.
        public var seed: UInt64
        /// How the lifter moves between the reps' phases.
        public var style: Style

        /// Creates the conditions of one set (`rate` in Hz, `velocity` in m/s, `rangeOfMotion` in m).
        public init(
            lift: BarbellGenerator.Lift, rate: Double, tiltDegrees: Double, bias: Double, velocity: Double,
            rangeOfMotion: Double, seed: UInt64, style: Style = .standard
        ) {
            self.style = style
            self.lift = lift
            self.rate = rate
            self.tiltDegrees = tiltDegrees
            self.bias = bias
            self.velocity = velocity
            self.rangeOfMotion = rangeOfMotion
            self.seed = seed
        }

        /// The generator for this condition: 6 reps slowing by 30 % (to failure), noise 0.01 g, scale error 1 %,
        /// the pauses of `style`.
        public var generator: BarbellGenerator {
            var g = BarbellGenerator()
            g.lift = lift
            g.sampleRate = rate
            g.tiltDegrees = tiltDegrees
            g.bias = bias
            g.firstMeanVelocity = velocity
            g.rangeOfMotion = rangeOfMotion
            g.seed = seed
            switch style {
            case .standard: break
            case .touchAndGo: g.startPause = 0
            case .paused(let seconds): g.turnaroundPause = seconds
            case .restMotion(let height): g.restMotion = height
            }
            return g
        }
    }

    /// The errors of one set.
    public struct Outcome: Sendable {
        /// The conditions the set was generated under.
        public var condition: Condition
        /// True reps, and those repd measured (matched by time).
        public var trueReps: Int
        /// True reps that a rep repd measured at set end covers (its window holds the true rep's middle), with a
        /// velocity.
        public var matched: Int
        /// Estimate − truth of each matched rep (set end figures): mean concentric velocity (m/s), range of motion
        /// (m), peak concentric velocity (m/s), concentric duration (s).
        public var velocityErrors: [Double]
        /// Estimate − truth of each matched rep's range of motion, m.
        public var romErrors: [Double]
        /// Estimate − truth of each matched rep's peak concentric velocity, m/s.
        public var peakErrors: [Double]
        /// Estimate − truth of each matched rep's concentric duration, s.
        public var concentricErrors: [Double]
        /// The same for the eccentric duration and the two pauses (s); a pause is compared where both have it (a
        /// set's first rep has no pause before it).
        public var eccentricErrors: [Double] = []
        /// Estimate − truth of the pause at the bottom, s, where both have one.
        public var pauseBottomErrors: [Double] = []
        /// Estimate − truth of the pause at the top, s, where both have one.
        public var pauseTopErrors: [Double] = []
        /// The same for the figures sent live with each rep.
        public var liveVelocityErrors: [Double]
        /// Matched reps whose window is not the rep's own: taken the wrong way round (`startsAtTop` not the
        /// truth's: from turnaround to turnaround, half of one rep and half of the next), or holding the middle of
        /// another true rep too (one window over two reps, compared with both).
        public var wrongWindow = 0
        /// Velocity loss of the set, estimate − truth, percentage points (nil when not measured).
        public var lossError: Double?
        /// One line per true rep: its truth and what repd measured (for `repctl validate-quality --verbose`).
        public var details: [String] = []
    }

    /// Generates the set for `condition`, runs the detector over it and compares.
    /// With `anyRate`, velocities are measured below repd's minimum rate too (to show why it is there).
    public static func run(_ condition: Condition, method: VerticalAcceleration = .magnitude, anyRate: Bool = false)
        -> Outcome
    {
        let set = condition.generator.generate()
        var configuration = RepDetectorConfiguration()
        configuration.placement = .bar
        configuration.verticalAcceleration = method
        if anyRate { configuration.minimumVelocityRate = 0 }
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        detector.process(set.samples, into: &events)
        detector.finish(into: &events)
        var final: [RepQuality] = []
        var live: [RepQuality] = []
        var loss: Double?
        for event in events {
            switch event {
            case .rep(let r): if let q = r.quality { live.append(q) }
            case .setEnded(let s):
                if let q = s.quality {
                    final += q.reps
                    loss = q.velocityLoss
                }
            case .setStarted: break
            }
        }
        func match(_ truth: BarbellGenerator.RepTruth, in list: [RepQuality]) -> RepQuality? {
            let middle = (truth.movementStart + truth.movementEnd) / 2
            return list.first { $0.start <= middle && middle <= $0.end }
        }
        var outcome = Outcome(
            condition: condition, trueReps: set.reps.count, matched: 0, velocityErrors: [], romErrors: [],
            peakErrors: [], concentricErrors: [], liveVelocityErrors: [],
            lossError: loss.map { $0 - set.velocityLoss })
        for truth in set.reps {
            guard let t = truth.quality.velocity else { continue }
            let liveMatch = match(truth, in: live)
            if let q = liveMatch, let v = q.velocity {
                outcome.liveVelocityErrors.append(v.meanConcentric - t.meanConcentric)
            }
            let found = match(truth, in: final)
            func text(_ q: RepQuality?) -> String {
                guard let q else { return "-" }
                let v = q.velocity
                return
                    "[\(format(q.start, decimals: 2))–\(format(q.end, decimals: 2))] ecc \(q.eccentric.map { format($0, decimals: 2) } ?? "-") con \(q.concentric.map { format($0, decimals: 2) } ?? "-") mcv \(v.map { format($0.meanConcentric, decimals: 3) } ?? "-") pk \(v.map { format($0.peakConcentric, decimals: 3) } ?? "-") rom \(v.map { format($0.rangeOfMotion, decimals: 3) } ?? "-")"
            }
            outcome.details.append("true \(text(truth.quality))\n  est  \(text(found))\n  live \(text(liveMatch))")
            guard let q = found, let v = q.velocity else { continue }
            outcome.matched += 1
            let shared = set.reps.contains {
                $0.movementStart != truth.movementStart && q.start <= ($0.movementStart + $0.movementEnd) / 2
                    && ($0.movementStart + $0.movementEnd) / 2 <= q.end
            }
            if q.startsAtTop != truth.quality.startsAtTop || shared { outcome.wrongWindow += 1 }
            outcome.velocityErrors.append(v.meanConcentric - t.meanConcentric)
            outcome.romErrors.append(v.rangeOfMotion - t.rangeOfMotion)
            outcome.peakErrors.append(v.peakConcentric - t.peakConcentric)
            if let c = q.concentric, let tc = truth.quality.concentric { outcome.concentricErrors.append(c - tc) }
            if let e = q.eccentric, let te = truth.quality.eccentric { outcome.eccentricErrors.append(e - te) }
            if let p = q.pauseBottom, let tp = truth.quality.pauseBottom { outcome.pauseBottomErrors.append(p - tp) }
            if let p = q.pauseTop, let tp = truth.quality.pauseTop { outcome.pauseTopErrors.append(p - tp) }
        }
        return outcome
    }

    /// The grid: every lift, rate (50–1600 Hz), tilt (0, 5, 10°), bias (0, 0.02 g) and first-rep velocity (0.3,
    /// 0.8, 1.5 m/s, slowing by 30 %), with a range of motion per lift; `quick` keeps 100 Hz and the extremes.
    public static func grid(quick: Bool) -> [Condition] {
        let rates: [Double] = quick ? [100] : [12.5, 25, 50, 100, 200, 400, 1600]
        let tilts: [Double] = quick ? [10] : [0, 5, 10]
        let biases: [Double] = quick ? [0.02] : [0, 0.02]
        let velocities: [Double] = quick ? [0.3, 1.5] : [0.3, 0.8, 1.5]
        var conditions: [Condition] = []
        var seed: UInt64 = 1
        for lift in BarbellGenerator.Lift.allCases {
            // A range of motion per velocity: a fast rep over a short range would have to brake harder than
            // gravity (the generator then makes it slower, and the truth says so).
            let roms: [Double] =
                switch lift {
                case .squat: [0.45, 0.6, 0.8]
                case .bench: [0.2, 0.35, 0.45]
                case .deadlift: [0.45, 0.55, 0.65]
                }
            for rate in rates {
                for tilt in tilts {
                    for bias in biases {
                        for velocity in velocities {
                            let rom = roms[velocity < 0.5 ? 0 : velocity < 1 ? 1 : 2]
                            conditions.append(
                                Condition(
                                    lift: lift, rate: rate, tiltDegrees: tilt, bias: bias, velocity: velocity,
                                    rangeOfMotion: rom, seed: seed))
                            seed += 1
                        }
                    }
                }
            }
        }
        return conditions
    }

    /// The grid's conditions at 100 Hz and above, once for each of `styles`, each with the seed (sensor mounting,
    /// errors, noise) of the same condition in the standard style.
    public static func styledGrid(_ styles: [Style] = Style.others) -> [Condition] {
        let fast = grid(quick: false).filter { $0.rate >= 100 }
        return styles.flatMap { style in
            fast.map { condition in
                var c = condition
                c.style = style
                return c
            }
        }
    }

    /// A small grid that still holds every value of every dimension at 100 Hz and above: each lift at 0.3 and
    /// 1.5 m/s at 100, 400 and 1600 Hz (18 sets), tilt and bias rotating so that every rate and every lift meets
    /// 0, 5 and 10° of tilt, and 0 and 0.02 g of bias; in `style`.
    public static func coveringGrid(style: Style = .standard) -> [Condition] {
        var conditions: [Condition] = []
        for (r, rate) in [100.0, 400, 1600].enumerated() {
            for (l, lift) in BarbellGenerator.Lift.allCases.enumerated() {
                for (v, velocity) in [0.3, 1.5].enumerated() {
                    let rom: Double =
                        switch lift {
                        case .squat: velocity < 1 ? 0.45 : 0.8
                        case .bench: velocity < 1 ? 0.2 : 0.45
                        case .deadlift: velocity < 1 ? 0.45 : 0.65
                        }
                    conditions.append(
                        Condition(
                            lift: lift, rate: rate, tiltDegrees: [0, 5, 10][(l + v + r) % 3],
                            bias: [0, 0.02][(l + v * 2 + r) % 2], velocity: velocity, rangeOfMotion: rom,
                            seed: UInt64(1000 + conditions.count), style: style))
                }
            }
        }
        return conditions
    }

    /// Pooled figures of several sets.
    public struct Summary: Sendable {
        /// Sets pooled.
        public var sets = 0
        /// Their true reps.
        public var trueReps = 0
        /// True reps repd measured (see `Outcome.matched`).
        public var matched = 0
        /// Matched reps measured over a window not their own (see `Outcome.wrongWindow`).
        public var wrongWindow = 0
        /// RMS error of the mean concentric velocity at set end, m/s (NaN when no rep was matched, as for all RMS).
        public var velocityRMS = 0.0
        /// RMS error of the mean concentric velocity sent live with each rep, m/s.
        public var liveVelocityRMS = 0.0
        /// RMS error of the range of motion, m.
        public var romRMS = 0.0
        /// RMS error of the peak concentric velocity, m/s.
        public var peakRMS = 0.0
        /// RMS error of the concentric duration, s.
        public var concentricRMS = 0.0
        /// RMS error of the eccentric duration, s.
        public var eccentricRMS = 0.0
        /// RMS error of the pause at the bottom, s.
        public var pauseBottomRMS = 0.0
        /// RMS error of the pause at the top, s.
        public var pauseTopRMS = 0.0
        /// RMS error of the sets' velocity loss, percentage points.
        public var lossRMS = 0.0
        /// The largest velocity loss error in absolute value, percentage points (NaN when no set reported a loss).
        public var lossMaximum = 0.0
        /// Sets that reported a velocity loss (none when the last rep could not be measured).
        public var lossSets = 0

        /// Pools `outcomes`: sums their counts and takes the RMS of each kind of error over all their reps.
        public init(_ outcomes: [Outcome]) {
            func rms(_ values: [Double]) -> Double {
                values.isEmpty ? .nan : (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot()
            }
            sets = outcomes.count
            trueReps = outcomes.reduce(0) { $0 + $1.trueReps }
            matched = outcomes.reduce(0) { $0 + $1.matched }
            wrongWindow = outcomes.reduce(0) { $0 + $1.wrongWindow }
            velocityRMS = rms(outcomes.flatMap(\.velocityErrors))
            liveVelocityRMS = rms(outcomes.flatMap(\.liveVelocityErrors))
            romRMS = rms(outcomes.flatMap(\.romErrors))
            peakRMS = rms(outcomes.flatMap(\.peakErrors))
            concentricRMS = rms(outcomes.flatMap(\.concentricErrors))
            eccentricRMS = rms(outcomes.flatMap(\.eccentricErrors))
            pauseBottomRMS = rms(outcomes.flatMap(\.pauseBottomErrors))
            pauseTopRMS = rms(outcomes.flatMap(\.pauseTopErrors))
            let losses = outcomes.compactMap(\.lossError)
            lossRMS = rms(losses)
            lossMaximum = losses.map(abs).max() ?? .nan
            lossSets = losses.count
        }
    }

    /// A Markdown table of the outcomes grouped by `key` (rows in the order first seen).
    public static func table(_ outcomes: [Outcome], by name: String, key: (Condition) -> String) -> String {
        var order: [String] = []
        var groups: [String: [Outcome]] = [:]
        for outcome in outcomes {
            let k = key(outcome.condition)
            if groups[k] == nil { order.append(k) }
            groups[k, default: []].append(outcome)
        }
        var out =
            "| \(name) | sets | reps measured (not their own window) | mean conc. velocity RMS (m/s) | live | ROM RMS (cm) | peak velocity RMS (m/s) | velocity loss RMS / max (pp), sets | conc. / ecc. duration RMS (s) | pause bottom / top RMS (s) |\n"
        out += "|---|---|---|---|---|---|---|---|---|---|\n"
        for k in order {
            let s = Summary(groups[k]!)
            out +=
                "| \(k) | \(s.sets) | \(s.matched)/\(s.trueReps) (\(s.wrongWindow)) | \(format(s.velocityRMS, decimals: 3)) | "
            out += "\(format(s.liveVelocityRMS, decimals: 3)) | \(format(s.romRMS * 100, decimals: 1)) | "
            out += "\(format(s.peakRMS, decimals: 3)) | "
            out += "\(format(s.lossRMS, decimals: 1)) / \(format(s.lossMaximum, decimals: 1)), \(s.lossSets) | "
            out += "\(format(s.concentricRMS, decimals: 3)) / \(format(s.eccentricRMS, decimals: 3)) | "
            out += "\(format(s.pauseBottomRMS, decimals: 3)) / \(format(s.pauseTopRMS, decimals: 3)) |\n"
        }
        return out
    }
}
