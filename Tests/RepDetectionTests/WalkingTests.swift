import MotionCore
import MotionSimulation
import RepDetection
import Testing

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
            if (detector.walkingLikeness ?? -9) >= RepDetectorConfiguration().maximumWalkingLikeness {
                judgedWalking += 1
            }
        }
        #expect(events.isEmpty)
        #expect(judgedWalking > 100, "walking-like moments: \(judgedWalking)")
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
