import MotionCore
import MotionSimulation
import RepDetection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs the detector over samples and returns every event, the stream finished at the end.
func detect(_ samples: [MotionSample], configuration: RepDetectorConfiguration = .init()) -> [WorkoutEvent] {
    var detector = RepDetector(configuration: configuration)
    var events: [WorkoutEvent] = []
    detector.process(samples, into: &events)
    detector.finish(into: &events)
    return events
}

/// Runs the detector one sample at a time, as a sensor feeds it, and returns every event with how late it went out:
/// the time of the sample whose processing sent it (the stream's last sample for what its end sent) minus the
/// event's own time. A rep held until its set ends goes out `restToEndSet` (8 s) or more after its time.
func detectLive(_ samples: [MotionSample], configuration: RepDetectorConfiguration = .init()) -> [(
    event: WorkoutEvent, delay: Double
)] {
    var detector = RepDetector(configuration: configuration)
    var sent: [(event: WorkoutEvent, delay: Double)] = []
    var events: [WorkoutEvent] = []
    for sample in samples {
        events.removeAll(keepingCapacity: true)
        detector.process(sample, into: &events)
        sent += events.map { ($0, sample.timestamp - time(of: $0)) }
    }
    events.removeAll()
    detector.finish(into: &events)
    sent += events.map { ($0, (samples.last?.timestamp ?? 0) - time(of: $0)) }
    return sent
}

/// An event's own time: a rep's, a set's start or its last rep.
func time(of event: WorkoutEvent) -> Double {
    switch event {
    case .rep(let rep): rep.timestamp
    case .setStarted(let set), .setEnded(let set): set.timestamp
    }
}

func reps(_ events: [WorkoutEvent]) -> [RepEvent] {
    events.compactMap { if case .rep(let rep) = $0 { rep } else { nil } }
}

/// The final count: the sum of every set's `setEnded` count (what a set is recounted to when it ends).
func repCount(_ samples: [MotionSample], configuration: RepDetectorConfiguration = .init()) -> Int {
    detect(samples, configuration: configuration).reduce(0) { sum, event in
        if case .setEnded(let set) = event { sum + set.repCount } else { sum }
    }
}

extension ExerciseGateFeatures {
    /// This moment with `change` made to it (a test's variation of a measured moment).
    func with(_ change: (inout ExerciseGateFeatures) -> Void) -> ExerciseGateFeatures {
        var copy = self
        change(&copy)
        return copy
    }
}

extension ExerciseGateModel {
    /// A gate of one leaf: its tree judges every moment the probability whose log-odds are `logOdds` (the hand rules
    /// still pass or refuse what they decide).
    static func constant(logOdds: Double) -> ExerciseGateModel {
        ExerciseGateModel(feature: [-1], threshold: [0], left: [0], right: [0], score: [0], offset: logOdds)
    }

    /// A gate of one leaf that judges every moment `probability`: below the default threshold, it refuses everything
    /// the hand rules do not pass.
    static func constant(probability: Double) -> ExerciseGateModel {
        constant(logOdds: log(probability / (1 - probability)))
    }
}

/// A set of sine reps framed by stillness (see `SignalGenerator.repetitions`).
func sineSet(
    repCount: Int, frequency: Double, amplitude: Double, direction: Vector3 = .y, gravity: Vector3 = .z,
    sampleRate: Double = 50, phase: Double = 0, noise: Double = 0.005, leadSeconds: Double = 2,
    extraSeconds: Double = 6, seed: UInt64 = 1
) -> [MotionSample] {
    let sine = SineMotion(
        frequency: frequency, amplitude: amplitude, phase: phase, direction: direction, gravity: gravity)
    return SignalGenerator.repetitions(
        count: repCount, of: sine, sampleRate: sampleRate, noise: noise, leadSeconds: leadSeconds,
        extraSeconds: extraSeconds, seed: seed)
}

/// When each rep of a generated set starts and how large it is, each drawn at random around the nominal (for sets that
/// must not be machine-exact): rep `n` runs from `starts[n]` to `starts[n + 1]`.
struct RepSchedule {
    let starts: [Double]
    let sizes: [Double]

    /// `count` reps from `lead` s, each `period` times a factor drawn from `length` long and a factor drawn from
    /// `size` large (each rep's length, then its size).
    init(
        count: Int, period: Double, lead: Double, length: ClosedRange<Double>, size: ClosedRange<Double>,
        random: inout SeededGenerator
    ) {
        var starts = [lead]
        var sizes: [Double] = []
        for _ in 0..<count {
            starts.append(starts[starts.count - 1] + period * Double.random(in: length, using: &random))
            sizes.append(Double.random(in: size, using: &random))
        }
        self.starts = starts
        self.sizes = sizes
    }

    /// When the last rep ends.
    var end: Double { starts[starts.count - 1] }

    /// The rep under way at `t` and how far into it it is (0..<1), or nil outside the reps. `rep` carries the search
    /// from one call to the next, so the times must come in order.
    func phase(at t: Double, rep: inout Int) -> (rep: Int, p: Double)? {
        let count = sizes.count
        while rep < count && t >= starts[rep + 1] { rep += 1 }
        guard t >= starts[0], rep < count else { return nil }
        return (rep, (t - starts[rep]) / (starts[rep + 1] - starts[rep]))
    }

    /// The set's samples at `rate` Hz from 0 s to `tail` s after the last rep: `sample(t, under)` makes each one,
    /// `under` the rep under way at `t` and how far into it (nil before and after the reps).
    func samples(
        rate: Double, tail: Double, _ sample: (_ t: Double, _ under: (rep: Int, p: Double)?) -> MotionSample
    ) -> [MotionSample] {
        var result: [MotionSample] = []
        var rep = 0
        var i = 0
        while Double(i) / rate < end + tail {
            let t = Double(i) / rate
            result.append(sample(t, phase(at: t, rep: &rep)))
            i += 1
        }
        return result
    }
}

/// 15 reps whose acceleration lies along `direction` (gravity along z): each rep one cycle of a sine of `size` g at its
/// peak, 0.7–1.3 times as large and 0.85–1.15 times as long as `period` (irregular like a real set, so neither steady
/// nor clean), with `noise` g (standard deviation) of white noise on each axis; 4 s of stillness before and 10 s after,
/// at 50 Hz. `harmonic` adds that share of the sine's third harmonic to each cycle (sharper than a sine).
func irregularReps(
    direction: Vector3, size: Double, period: Double, harmonic: Double = 0, noise: Double = 0.01, seed: UInt64
) -> [MotionSample] {
    var random = SeededGenerator(seed: seed)
    let schedule = RepSchedule(
        count: 15, period: period, lead: 4, length: 0.85...1.15, size: 0.7...1.3, random: &random)
    let unit = direction.normalized
    return schedule.samples(rate: 50, tail: 10) { t, under in
        let a =
            under.map { schedule.sizes[$0.rep] * size * (sin(2 * .pi * $0.p) + harmonic * sin(6 * .pi * $0.p)) } ?? 0
        let jitter = { random.nextGaussian(standardDeviation: noise) }
        return MotionSample(
            timestamp: t, ax: a * unit.x + jitter(), ay: a * unit.y + jitter(), az: 1 + a * unit.z + jitter())
    }
}
