import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Short everyday sequences as a watch sees them: sit still, stand up, walk a few steps, turn, walk back, sit down
/// (a "timed up and go"). The walks are `WalkingGenerator`'s; the transitions turn the wrist from where gravity
/// points while it rests on the thigh to where it points while the arm hangs, with the body's push up or down.
enum SitStandWalk {
    /// One sequence: `sitSeconds` still, a 1.5 s stand-up, a walk of `walkSeconds` there and one back (each ramping
    /// up and down over a second, so the turn between them is a slowing of the steps), a 1.5 s sit-down, still again.
    static func sequence(
        stride: Double, walkSeconds: Double, sitUp: Vector3, hangUp: Vector3, rate: Double = 50,
        sitSeconds: Double = 4, seed: UInt64 = 1
    ) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        var samples: [MotionSample] = []
        var t = 0.0
        // The wrist turns from `from` to `to` over `seconds`, and the body pushes along `push` (up to 0.3 g).
        func transition(_ from: Vector3, _ to: Vector3, push: Vector3, _ seconds: Double) {
            let start = t
            while t < start + seconds {
                let u = (t - start) / seconds
                let s = u * u * (3 - 2 * u)
                let direction = (from.normalized * (1 - s) + to.normalized * s).normalized
                let bump = 0.3 * sin(Double.pi * u)
                let a = direction + push.normalized * bump
                samples.append(
                    MotionSample(
                        timestamp: t, ax: a.x + random.nextGaussian(standardDeviation: 0.01),
                        ay: a.y + random.nextGaussian(standardDeviation: 0.01),
                        az: a.z + random.nextGaussian(standardDeviation: 0.01)))
                t += 1 / rate
            }
        }
        func still(_ seconds: Double, _ up: Vector3) { transition(up, up, push: .zero, seconds) }
        func walk(_ seconds: Double, seed: UInt64) {
            var walk = WalkingGenerator()
            walk.strideFrequency = stride
            walk.walkSeconds = seconds
            walk.leadSeconds = 0
            walk.upDirection = hangUp
            walk.sampleRate = rate
            walk.seed = seed
            let part = walk.samples(start: t)
            samples += part
            t = (part.last?.timestamp ?? t) + 1 / rate
        }
        still(sitSeconds, sitUp)
        transition(sitUp, hangUp, push: hangUp, 1.5)
        walk(walkSeconds, seed: seed &+ 1)
        walk(walkSeconds, seed: seed &+ 2)
        transition(hangUp, sitUp, push: hangUp * -1, 1.5)
        still(sitSeconds, sitUp)
        return samples
    }
}

@Suite("RepDetector and short walks between sitting")
struct SitStandWalkTests {
    /// Where gravity points in the watch's frame on the thigh and with the arm hanging.
    static let orientations: [(sit: Vector3, hang: Vector3)] = [
        (.z, .x), (.z, Vector3(1, 0, 0.3)), (Vector3(0.2, 0.3, 1), Vector3(0.9, -0.4, 0.1)), (.y, .x),
    ]

    @Test(
        """
        sit, stand, walk 3–8 s, turn, walk back, sit counts nothing, at 0.8–1.05 strides/s, in four wrist \
        orientations, by the gate alone and by the walking rule alone
        """,
        arguments: [0.8, 0.9, 1.05], [3.0, 5, 8])
    func shortWalksCountNothing(stride: Double, walkSeconds: Double) {
        var gateOnly = RepDetectorConfiguration()
        gateOnly.maximumWalkingLikeness = 2
        var walkingRuleOnly = RepDetectorConfiguration()
        walkingRuleOnly.minimumExerciseLikelihood = 0
        var neither = walkingRuleOnly
        neither.maximumWalkingLikeness = 2
        for (n, o) in Self.orientations.enumerated() {
            let samples = SitStandWalk.sequence(
                stride: stride, walkSeconds: walkSeconds, sitUp: o.sit, hangUp: o.hang, seed: UInt64(n + 1))
            let name = "\(stride) strides/s, \(walkSeconds) s each way, orientation \(n)"
            // The premise: the walks are periodic enough to count without either rule (3–17 "reps").
            #expect(repCount(samples, configuration: neither) >= 3, "\(name): without the gate and the walking rule")
            #expect(repCount(samples) == 0, "\(name)")
            #expect(repCount(samples, configuration: gateOnly) == 0, "\(name): the gate alone")
            #expect(repCount(samples, configuration: walkingRuleOnly) == 0, "\(name): the walking rule alone")
        }
    }
}
