import MotionCore

/// Generates burpees as a sensor strapped to the upper arm sees them (a phone in an armband): a crude model, so that
/// the detector and its exercise gate meet an exercise whose every rep holds several landings.
///
/// Each rep, as a share of its length: squat down (0–20 %, the arm turns 45° forward, the body dips 0.3 g), kick the
/// feet back to a plank (a 0.6 g landing at 30 %), a push-up (35–55 %, the arm 40° and back, 0.15 g), jump the feet in
/// (a 0.5 g landing at 62 %), jump with the arms overhead (a 1 g push at 68–74 %, the arm at 170°, free fall until
/// 82 %, a 2 g landing at 83 %), arms down. The arm's angle moves between these positions with smooth steps; each rep's
/// length varies by `tempoJitter`; `leadSeconds` of the arm hanging still come before and after.
public struct BurpeeGenerator: Sendable {
    /// Burpees in the set.
    public var reps = 10
    /// Seconds per rep.
    public var period = 3.0
    /// Relative rep-to-rep variation of the length (standard deviation).
    public var tempoJitter = 0.05
    /// Seconds of the arm hanging still before and after.
    public var leadSeconds = 5.0
    /// The sensor axis that reads +1 g while the arm hangs still (normalized on use).
    public var upDirection: Vector3 = Vector3(-1, 0, 0)
    /// Standard deviation of white sensor noise, in g.
    public var noise = 0.02
    /// Samples per second.
    public var sampleRate = 50.0
    /// The random seed: the same seed gives the same samples.
    public var seed: UInt64 = 1

    /// A set of 10 burpees of 3 s at 50 Hz.
    public init() {}

    /// The arm's angle from hanging, in degrees, at points of a rep (0…1).
    static let armAngles: [(at: Double, degrees: Double)] = [
        (0, 0), (0.2, 45), (0.3, 10), (0.45, 40), (0.55, 10), (0.65, 45), (0.78, 170), (0.92, 20), (1, 0),
    ]

    static func armAngle(at u: Double) -> Double {
        for (a, b) in zip(armAngles, armAngles.dropFirst()) where u >= a.at && u <= b.at {
            let s = (u - a.at) / (b.at - a.at)
            return a.degrees + (b.degrees - a.degrees) * s * s * (3 - 2 * s)
        }
        return 0
    }

    /// The body's acceleration along gravity, in g, at point `u` of a rep.
    static func bodyAcceleration(at u: Double) -> Double {
        func pulse(_ center: Double, _ width: Double) -> Double {
            _exp(-0.5 * ((u - center) / width) * ((u - center) / width))
        }
        var a = 0.0
        if u < 0.1 {
            a = -0.3 * _sin(Double.pi * u / 0.1)
        } else if u < 0.2 {
            a = 0.3 * _sin(Double.pi * (u - 0.1) / 0.1)
        }
        a += 0.6 * pulse(0.3, 0.012) + 0.5 * pulse(0.62, 0.012)
        if u > 0.35, u < 0.55 { a += 0.15 * _sin(2 * Double.pi * (u - 0.35) / 0.2) }
        if u > 0.68, u < 0.74 { a += _sin(Double.pi * (u - 0.68) / 0.06) }
        if u >= 0.74, u < 0.82 { a = -1 }  // in the air: the sensor feels no force
        return a + 2 * pulse(0.83, 0.015)
    }

    /// Generates the samples, starting at 0 s.
    public func samples() -> [MotionSample] {
        precondition(reps >= 0 && period > 0 && sampleRate > 0 && leadSeconds >= 0, "invalid burpee set")
        var random = SeededGenerator(seed: seed)
        let up = upDirection.normalized
        let forward = WorkoutGenerator.perpendicular(to: up)
        var starts = [leadSeconds]
        for _ in 0..<reps {
            let length = period * max(0.5, 1 + random.nextGaussian(standardDeviation: tempoJitter))
            starts.append(starts[starts.count - 1] + length)
        }
        let end = starts[starts.count - 1]
        let count = Int(((end + leadSeconds) * sampleRate).rounded(.down)) + 1
        var result: [MotionSample] = []
        result.reserveCapacity(count)
        var rep = 0
        for index in 0..<count {
            let t = Double(index) / sampleRate
            var angle = 0.0
            var body = 0.0
            if t >= leadSeconds, t < end {
                while rep + 1 < starts.count - 1, starts[rep + 1] <= t { rep += 1 }
                let u = (t - starts[rep]) / (starts[rep + 1] - starts[rep])
                angle = Self.armAngle(at: u) * Double.pi / 180
                body = Self.bodyAcceleration(at: u)
            }
            let a = (up * _cos(angle) + forward * _sin(angle)) * (1 + body)
            result.append(
                MotionSample(
                    timestamp: t,
                    ax: a.x + random.nextGaussian(standardDeviation: noise),
                    ay: a.y + random.nextGaussian(standardDeviation: noise),
                    az: a.z + random.nextGaussian(standardDeviation: noise)))
        }
        return result
    }
}
