import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Burpees as a phone strapped to the upper arm sees them: a crude model, to check that the exercise gate does not
/// take a rep's several landings for steps. Each rep: squat down (the arm turns 45° forward), kick back to a plank
/// (a 0.6 g landing), a push-up, jump the feet in (0.5 g), jump with the arms overhead (a 1 g push, free fall, a 2 g
/// landing), arms down; the arm's angle moves between key positions with smooth steps, each rep's length varies by
/// 5 %, 0.02 g of noise, 5 s with the arm hanging before and after.
enum GeneratedBurpees {
    /// The arm's angle from hanging (degrees) at points of the rep (0…1).
    static let armAngles: [(at: Double, degrees: Double)] = [
        (0, 0), (0.2, 45), (0.3, 10), (0.45, 40), (0.55, 10), (0.65, 45), (0.78, 170), (0.92, 20), (1, 0),
    ]

    static func smoothStep(_ u: Double) -> Double { u * u * (3 - 2 * u) }

    static func armAngle(_ u: Double) -> Double {
        for (a, b) in zip(armAngles, armAngles.dropFirst()) where u >= a.at && u <= b.at {
            return a.degrees + (b.degrees - a.degrees) * smoothStep((u - a.at) / (b.at - a.at))
        }
        return 0
    }

    static func pulse(_ u: Double, at center: Double, width: Double) -> Double {
        exp(-0.5 * ((u - center) / width) * ((u - center) / width))
    }

    /// The body's acceleration along gravity (g) at point `u` of a rep.
    static func bodyAcceleration(_ u: Double) -> Double {
        var a = 0.0
        if u < 0.1 {
            a = -0.3 * sin(Double.pi * u / 0.1)
        } else if u < 0.2 {
            a = 0.3 * sin(Double.pi * (u - 0.1) / 0.1)
        }
        a += 0.6 * pulse(u, at: 0.3, width: 0.012) + 0.5 * pulse(u, at: 0.62, width: 0.012)
        if u > 0.35, u < 0.55 { a += 0.15 * sin(2 * Double.pi * (u - 0.35) / 0.2) }
        if u > 0.68, u < 0.74 { a += sin(Double.pi * (u - 0.68) / 0.06) }
        if u >= 0.74, u < 0.82 { a = -1 }  // in the air
        return a + 2 * pulse(u, at: 0.83, width: 0.015)
    }

    static func set(reps: Int, period: Double, sampleRate: Double, seed: UInt64) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let lead = 5.0
        var starts = [lead]
        for _ in 0..<reps {
            starts.append(starts[starts.count - 1] + period * (1 + random.nextGaussian(standardDeviation: 0.05)))
        }
        let end = starts[starts.count - 1]
        var samples: [MotionSample] = []
        var t = 0.0
        while t < end + lead {
            var angle = 0.0
            var body = 0.0
            if t >= lead, t < end, let k = starts.lastIndex(where: { $0 <= t }) {
                let u = (t - starts[k]) / (starts[k + 1] - starts[k])
                angle = armAngle(u) * Double.pi / 180
                body = bodyAcceleration(u)
            }
            let f = 1 + body
            samples.append(
                MotionSample(
                    timestamp: t, ax: -f * cos(angle) + random.nextGaussian(standardDeviation: 0.02),
                    ay: f * sin(angle) + random.nextGaussian(standardDeviation: 0.02),
                    az: random.nextGaussian(standardDeviation: 0.02)))
            t += 1 / sampleRate
        }
        return samples
    }
}

@Suite("RepDetector and generated burpees")
struct BurpeeTests {
    static var gateOff: RepDetectorConfiguration {
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        return off
    }

    @Test(
        "10 generated burpees of 3–4.5 s count 10, at 10, 25 and 50 Hz", arguments: [10.0, 25, 50], [3.0, 3.5, 4.5])
    func burpeesCount(rate: Double, period: Double) {
        for seed: UInt64 in [1, 2] {
            let samples = GeneratedBurpees.set(reps: 10, period: period, sampleRate: rate, seed: seed)
            #expect(repCount(samples) == 10, "\(rate) Hz, \(period) s a rep, seed \(seed)")
        }
    }

    @Test("10 fast generated burpees (2.5 s) count 10 with the gate off, and at 50 Hz with it on")
    func fastBurpees() {
        for rate in [10.0, 25, 50] {
            for seed: UInt64 in [1, 2] {
                let samples = GeneratedBurpees.set(reps: 10, period: 2.5, sampleRate: rate, seed: seed)
                #expect(repCount(samples, configuration: Self.gateOff) == 10, "\(rate) Hz, seed \(seed), gate off")
                if rate == 50 {
                    #expect(repCount(samples) == 10, "\(rate) Hz, seed \(seed)")
                } else {
                    withKnownIssue(
                        """
                        at 2.5 s a rep the three landings make a step rhythm: the gate refuses half the set's moments \
                        and dismisses it at 10 Hz (and at 25 Hz for seed 1)
                        """,
                        isIntermittent: true
                    ) {
                        #expect(repCount(samples) == 10, "\(rate) Hz, seed \(seed)")
                    }
                }
            }
        }
    }
}
