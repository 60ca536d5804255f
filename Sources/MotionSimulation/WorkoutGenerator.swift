import MotionCore

/// Generates a realistic, reproducible workout: sets of reps with rests between them, tempo variation, sensor noise
/// and gravity in any direction. The demo and the tests use it; a fixed seed gives the same samples every run.
///
/// Each rep moves the sensor along gravity (down and back up, like a squat or a press) with a smooth displacement
/// profile `d(t) = depth · (1 − cos u)² / 4`, `u = 2πt/T`, which starts and ends at rest with zero acceleration;
/// its acceleration `depth·ω²/2 · (sin²u + cos u − cos²u)` peaks at `depth·ω²` at the bottom of the rep. The
/// wrist also tilts a few degrees with each rep, which swings part of gravity onto another axis, as real wrist
/// sensors see. Rests hold still with small fidgets.
public struct WorkoutGenerator: Sendable {
    /// Number of sets.
    public var sets: Int = 3
    /// Reps in each set (the last value repeats if there are more sets than values).
    public var repsPerSet: [Int] = [10]
    /// Seconds of rest between sets.
    public var restSeconds: Double = 20
    /// Seconds of stillness before the first set and after the last.
    public var leadSeconds: Double = 3
    /// Mean duration of one rep, in seconds.
    public var repPeriod: Double = 2.2
    /// Relative rep-to-rep tempo variation (standard deviation, e.g. 0.1 = 10 %).
    public var tempoJitter: Double = 0.1
    /// How much longer the last rep of a set takes than the first (1 = twice as long), as a lifter slows towards
    /// failure: the extra time grows with the square of the rep's place in the set, so the first reps keep their
    /// tempo and the last ones grind. The depth stays the same, so slower reps accelerate less (∝ 1/period²).
    public var slowdown: Double = 0
    /// Mean pause between reps (at the top), in seconds.
    public var pauseSeconds: Double = 0.3
    /// Displacement of one rep, in metres.
    public var depth: Double = 0.45
    /// Tilt of the sensor at the bottom of a rep, in degrees.
    public var tiltDegrees: Double = 8
    /// Standard deviation of white sensor noise, in g.
    public var noise: Double = 0.015
    /// The direction gravity takes in the sensor frame (normalized on use).
    public var gravityDirection: Vector3 = .z
    /// Samples per second.
    public var sampleRate: Double = 50
    /// The random seed: the same seed gives the same workout.
    public var seed: UInt64 = 42

    /// A workout with the default parameters (3 × 10 reps, 20 s rests, 50 Hz, seed 42).
    public init() {}

    /// The built-in demo workout: 3 sets of 8, 10 and 12 reps with 15 s rests, gravity along z, at 50 Hz.
    public static var demo: WorkoutGenerator {
        var generator = WorkoutGenerator()
        generator.repsPerSet = [8, 10, 12]
        generator.restSeconds = 15
        return generator
    }

    /// What the generator produced: the samples and the truth a detector should find in them.
    public struct Workout: Sendable {
        /// One set of the truth.
        public struct SetTruth: Sendable, Equatable {
            /// Time the first rep starts.
            public var start: Double
            /// Time the last rep completes.
            public var end: Double
            /// Completion times of each rep (back at the starting position).
            public var repCompletionTimes: [Double]
        }

        /// The samples, in time order.
        public var samples: [MotionSample]
        /// The sets, in order.
        public var sets: [SetTruth]
        /// Total reps over all sets.
        public var totalReps: Int { sets.reduce(0) { $0 + $1.repCompletionTimes.count } }
    }

    /// Generates the workout.
    public func generate() -> Workout {
        precondition(sets >= 0 && !repsPerSet.isEmpty && sampleRate > 0 && repPeriod > 0, "invalid workout")
        var random = SeededGenerator(seed: seed)
        let gravity = gravityDirection.normalized
        let perpendicular = Self.perpendicular(to: gravity)

        // Plan the reps: (start, period) pairs, grouped into sets.
        var plan: [(start: Double, period: Double)] = []
        var truth: [Workout.SetTruth] = []
        var t = leadSeconds
        for set in 0..<sets {
            let reps = repsPerSet[min(set, repsPerSet.count - 1)]
            var completions: [Double] = []
            let setStart = t
            for rep in 0..<reps {
                let place = Double(rep) / Double(max(reps - 1, 1))
                let fatigue = 1 + slowdown * place * place
                let period = repPeriod * fatigue * max(0.5, 1 + random.nextGaussian(standardDeviation: tempoJitter))
                plan.append((t, period))
                t += period
                completions.append(t)
                t += max(0.05, pauseSeconds * (1 + random.nextGaussian(standardDeviation: 0.3)))
            }
            truth.append(.init(start: setStart, end: completions.last ?? setStart, repCompletionTimes: completions))
            if set < sets - 1 { t += restSeconds }
        }
        let duration = t + leadSeconds

        // Fidgets during rests: small, slow bumps at random times.
        var fidgets: [(time: Double, size: Double)] = []
        var f = 1.0
        while f < duration {
            fidgets.append((f, random.nextGaussian(standardDeviation: 0.02)))
            f += 2 + Double.random(in: 0..<4, using: &random)
        }

        let tilt = tiltDegrees * Double.pi / 180
        var repIndex = 0
        var fidgetIndex = 0
        let count = Int((duration * sampleRate).rounded(.down)) + 1
        var samples: [MotionSample] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            let time = Double(index) / sampleRate
            while repIndex < plan.count, time > plan[repIndex].start + plan[repIndex].period { repIndex += 1 }
            var along = 0.0  // acceleration along gravity, in g
            var swing = 0.0  // tilt angle, radians
            if repIndex < plan.count, time >= plan[repIndex].start {
                let rep = plan[repIndex]
                let phase = 2 * Double.pi * (time - rep.start) / rep.period
                let omega = 2 * Double.pi / rep.period
                let c = _cos(phase)
                let s = _sin(phase)
                along = depth * omega * omega / 2 * (s * s + c - c * c) / MotionSample.standardGravity
                swing = tilt * (1 - _cos(phase)) / 2
            }
            while fidgetIndex + 1 < fidgets.count, fidgets[fidgetIndex + 1].time <= time { fidgetIndex += 1 }
            if fidgetIndex < fidgets.count, repIndex >= plan.count || time < plan[repIndex].start {
                let bump = time - fidgets[fidgetIndex].time
                if bump >= 0, bump < 0.6 { along += fidgets[fidgetIndex].size * _sin(Double.pi * bump / 0.6) }
            }
            // Gravity tilted by `swing` towards `perpendicular`, plus the motion along gravity, plus noise.
            let g = gravity * _cos(swing) + perpendicular * _sin(swing)
            let a = g * (1 + along)
            samples.append(
                MotionSample(
                    timestamp: time,
                    ax: a.x + random.nextGaussian(standardDeviation: noise),
                    ay: a.y + random.nextGaussian(standardDeviation: noise),
                    az: a.z + random.nextGaussian(standardDeviation: noise)
                ))
        }
        return Workout(samples: samples, sets: truth)
    }

    static func perpendicular(to v: Vector3) -> Vector3 {
        let helper: Vector3 = abs(v.x) < 0.9 ? .x : .y
        // helper − (helper·v) v, normalized
        return (helper + v * -helper.dot(v)).normalized
    }
}
