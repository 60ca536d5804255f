import MotionCore
import MotionSimulation
import RepDetection
import Testing

/// The exercise gate was trained on wrists; a bar never walks, and its lifter does heavy singles and doubles, which the
/// gate dismisses (a set of fewer than 3 reps). With `placement` `bar` the gate is off unless it is set.
@Suite("The exercise gate with the sensor on a bar")
struct BarPlacementGateTests {
    @Test("the gate's default is 0.2 on a wrist or arm and 0 (off) on a bar; a value set holds on any placement")
    func defaultFollowsPlacement() {
        var c = RepDetectorConfiguration()
        #expect(c.minimumExerciseLikelihood == 0.2)
        c.placement = .arm
        #expect(c.minimumExerciseLikelihood == 0.2)
        c.placement = .bar
        #expect(c.minimumExerciseLikelihood == 0)
        c.minimumExerciseLikelihood = 0.3
        #expect(c.minimumExerciseLikelihood == 0.3)
        c.placement = .wrist
        #expect(c.minimumExerciseLikelihood == 0.3)
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        off.placement = .wrist
        #expect(off.minimumExerciseLikelihood == 0)
    }

    /// A generated squat or bench double: two reps at 0.6 m/s, 100 Hz.
    static func double(_ lift: BarbellGenerator.Lift, seed: UInt64) -> [MotionSample] {
        var generator = BarbellGenerator()
        generator.lift = lift
        generator.reps = 2
        generator.firstMeanVelocity = 0.6
        generator.velocityLoss = 0.2
        generator.seed = seed
        return generator.generate().samples
    }

    // Measured 2026-12-04 (`repctl eval`, the same sets): placement bar with the gate on counted 0 for all six,
    // with it off 2.
    @Test(
        "a heavy double on a bar counts 2 with the defaults, where the gate (on a wrist, or set on the bar) dismisses it",
        arguments: [BarbellGenerator.Lift.squat, .bench])
    func doubleOnBarCounts(lift: BarbellGenerator.Lift) {
        var bar = RepDetectorConfiguration()
        bar.placement = .bar
        var gated = bar
        gated.minimumExerciseLikelihood = 0.2
        for seed: UInt64 in 1...3 {
            let samples = Self.double(lift, seed: seed)
            #expect(repCount(samples, configuration: bar) == 2, "seed \(seed)")
            #expect(repCount(samples, configuration: gated) == 0, "seed \(seed)")
            #expect(repCount(samples) == 0, "seed \(seed), wrist")
        }
    }
}
