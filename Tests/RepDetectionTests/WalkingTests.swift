import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Walking between sets, seen by a wrist sensor (`WalkingGenerator`: the arm swings once per stride, the body
/// bounces once per step).
@Suite("RepDetector and walking")
struct WalkingTests {
    static let ups: [Vector3] = [.z, .x, Vector3(1, 1, 1), Vector3(0.3, -1, 0.5)]

    static func walk(stride: Double, swing: Double, bounce: Double, up: Vector3, rate: Double = 50) -> WalkingGenerator
    {
        var walk = WalkingGenerator()
        walk.strideFrequency = stride
        walk.swingDegrees = swing
        walk.bounce = bounce
        walk.upDirection = up
        walk.sampleRate = rate
        return walk
    }

    @Test(
        "30 s of walking count no reps, at 0.95–1.05 strides/s with 10–30° of arm swing, the sensor in any rotation",
        arguments: [0.95, 1.05], [10.0, 20, 30])
    func walkingCountsNothing(stride: Double, swing: Double) {
        for up in Self.ups {
            for bounce in [0.15, 0.3] {
                let samples = Self.walk(stride: stride, swing: swing, bounce: bounce, up: up).samples()
                #expect(repCount(samples) == 0, "\(stride) strides/s, ±\(swing)°, \(bounce) g bounce, up \(up)")
            }
        }
    }

    @Test("walking counts no reps at 100 Hz either, nor at 12.5 Hz with a brisk stride", arguments: [12.5, 100])
    func walkingAtOtherRates(rate: Double) {
        for up in Self.ups {
            let samples = Self.walk(stride: 1.05, swing: 20, bounce: 0.25, up: up, rate: rate).samples()
            #expect(repCount(samples) == 0, "\(rate) Hz, up \(up)")
        }
    }

    @Test(
        "a slow walk whose bounce outweighs a small arm swing counts no reps either (without the walking check and the gate it counts)"
    )
    func stepLockedWalk() {
        for up in Self.ups {
            let samples = Self.walk(stride: 0.8, swing: 10, bounce: 0.3, up: up).samples()
            #expect(repCount(samples) == 0, "up \(up)")
            var off = RepDetectorConfiguration()
            off.maximumWalkingLikeness = 2
            off.minimumExerciseLikelihood = 0
            #expect(repCount(samples, configuration: off) > 10, "up \(up)")
        }
    }

    @Test("without the walking check and the exercise gate the same walk counts a rep per stride (what they are for)")
    func walkingCheckMatters() throws {
        let samples = Self.walk(stride: 0.95, swing: 20, bounce: 0.25, up: .z).samples()
        var off = RepDetectorConfiguration()
        off.maximumWalkingLikeness = 2
        off.minimumExerciseLikelihood = 0
        // 30 s at 0.95 strides/s, ramping up and down over a second each: about 28 strides.
        let counted = repCount(samples, configuration: off)
        #expect((20...30).contains(counted), "counted \(counted)")
        // With the check, the stride rhythm is found and judged walking.
        var detector = RepDetector()
        var events: [WorkoutEvent] = []
        var judgedWalking = 0
        for sample in samples {
            detector.process(sample, into: &events)
            if detector.isWalking {
                judgedWalking += 1
            }
        }
        #expect(events.isEmpty)
        #expect(judgedWalking > 100, "walking-like moments: \(judgedWalking)")
    }

    /// 30 s of a 1 s rhythm that bounces at each half of its cycle along gravity (z) and partly reverses across it (x),
    /// after `lead` s and before 3 s of stillness: a walking likeness of 0.3–0.8 throughout, like a lunge or rope
    /// skipping at the wrist.
    static func halfWalkingLike(lead: Double = 3) -> [MotionSample] {
        var random = SeededGenerator(seed: 5)
        return SignalGenerator.samples(duration: lead + 33, sampleRate: 50) { t in
            let w = 2 * Double.pi * (t - lead)
            let on = t >= lead && t < lead + 30 ? 1.0 : 0
            return MotionSample(
                timestamp: t,
                ax: on * (0.3 * sin(w) + 0.1 * sin(2 * w + 0.5)) + random.nextGaussian(standardDeviation: 0.01),
                ay: random.nextGaussian(standardDeviation: 0.01),
                az: 1 + on * (0.1 * sin(w) + 0.2 * sin(2 * w)) + random.nextGaussian(standardDeviation: 0.01))
        }
    }

    @Test(
        """
        motion with a walking likeness of 0.3–0.8 is walking unless the gate judges it exercise with 0.8 or more: \
        judged 0.9 it counts its reps, judged 0.5 or with the gate off it counts none
        """)
    func walkingThresholdFollowsTheGate() {
        let samples = Self.halfWalkingLike()
        /// Reps counted, grid points judged walking, and judged points with a likeness in 0.3–0.8, with a gate whose
        /// probability is the logistic of `logOdds` everywhere (nil: the gate off).
        func judge(logOdds: Double?) -> (reps: Int, walking: Int, band: Int) {
            var c = RepDetectorConfiguration()
            if let logOdds {
                c.exerciseGate = .constant(logOdds: logOdds)
            } else {
                c.minimumExerciseLikelihood = 0
            }
            var detector = RepDetector(configuration: c)
            var events: [WorkoutEvent] = []
            var result = (reps: 0, walking: 0, band: 0)
            var last = detector.gridPoints
            for sample in samples {
                detector.process(sample, into: &events)
                guard detector.gridPoints != last else { continue }
                last = detector.gridPoints
                if detector.isWalking { result.walking += 1 }
                if let likeness = detector.walkingLikeness, likeness >= 0.3, likeness < 0.8 { result.band += 1 }
            }
            detector.finish(into: &events)
            result.reps = events.reduce(0) { sum, event in
                if case .setEnded(let set) = event { sum + set.repCount } else { sum }
            }
            return result
        }
        let off = judge(logOdds: nil)
        let unsure = judge(logOdds: 0)  // 0.5
        let sure = judge(logOdds: 2.2)  // 0.9
        // The premise: the rhythm's likeness stays in the band (30 s on a 25 Hz grid: about 750 points).
        #expect(off.band > 600, "points in 0.3–0.8: \(off.band)")
        #expect(off.walking > 600 && unsure.walking > 600, "walking points: off \(off.walking), 0.5 \(unsure.walking)")
        #expect(sure.walking == 0)
        #expect(off.reps == 0 && unsure.reps == 0, "off \(off.reps), 0.5 \(unsure.reps)")
        #expect((25...31).contains(sure.reps), "0.9: \(sure.reps)")
    }

    @Test(
        """
        before the gate can judge (the first seconds of a stream), motion with a walking likeness of 0.3–0.8 is not \
        walking with the gate on, as if the gate were sure; once it judges 0.5, it is
        """)
    func walkingBeforeTheGateCanJudge() {
        var c = RepDetectorConfiguration()
        c.exerciseGate = .constant(logOdds: 0)
        var detector = RepDetector(configuration: c)
        var events: [WorkoutEvent] = []
        var unjudged = (band: 0, walking: 0)
        var judged = (band: 0, walking: 0)
        var last = detector.gridPoints
        for sample in Self.halfWalkingLike(lead: 0) {
            detector.process(sample, into: &events)
            guard detector.gridPoints != last else { continue }
            last = detector.gridPoints
            guard let likeness = detector.walkingLikeness, likeness >= 0.3, likeness < 0.8 else { continue }
            if detector.exerciseLikelihood == nil {
                unjudged.band += 1
                if detector.isWalking { unjudged.walking += 1 }
            } else {
                judged.band += 1
                if detector.isWalking { judged.walking += 1 }
            }
        }
        #expect(unjudged.band > 5 && judged.band > 600, "in 0.3–0.8: unjudged \(unjudged.band), judged \(judged.band)")
        #expect(unjudged.walking == 0)
        #expect(judged.walking == judged.band)
    }

    @Test("a set right after walking counts every rep", arguments: [Vector3.z, Vector3(0.3, -1, 0.5)])
    func setAfterWalking(up: Vector3) {
        var walk = Self.walk(stride: 1.0, swing: 20, bounce: 0.25, up: up)
        walk.walkSeconds = 20
        walk.leadSeconds = 1
        let walking = walk.samples()
        var workout = WorkoutGenerator()
        workout.sets = 1
        workout.repsPerSet = [10]
        workout.gravityDirection = up
        let set = workout.generate()
        let start = walking.last!.timestamp + 1 / workout.sampleRate
        let samples =
            walking
            + set.samples.map {
                MotionSample(timestamp: $0.timestamp + start, ax: $0.ax, ay: $0.ay, az: $0.az)
            }
        #expect(repCount(samples) == 10)
    }
}
