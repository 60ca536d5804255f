import MotionCore
import MotionSimulation
import RepDetection

/// Runs the detector over samples and returns every event, the stream finished at the end.
func detect(_ samples: [MotionSample], configuration: RepDetectorConfiguration = .init()) -> [WorkoutEvent] {
    var detector = RepDetector(configuration: configuration)
    var events: [WorkoutEvent] = []
    detector.process(samples, into: &events)
    detector.finish(into: &events)
    return events
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
