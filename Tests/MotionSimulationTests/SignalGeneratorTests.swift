import MotionCore
import MotionSimulation
import Testing

@Suite("Signal generators")
struct SignalGeneratorTests {
    @Test("a sine along any direction adds to gravity along any axis")
    func sineValues() {
        let direction = Vector3(1, 1, 0)
        let sine = SineMotion(frequency: 2, amplitude: 0.5, offset: 0.1, phase: 0, direction: direction, gravity: .x)
        let quarter = sine.sample(at: 0.125)  // sin(π/2) = 1
        let along = 0.6 / 2.0.squareRoot()
        #expect(abs(quarter.ax - (1 + along)) < 1e-12)
        #expect(abs(quarter.ay - along) < 1e-12)
        #expect(abs(quarter.az) < 1e-12)
    }

    @Test("makeSamples(repCount: 10) is 10 cycles of 1.5 Hz on y at 50 Hz plus 6 s still")
    func makeSamplesShape() {
        let samples = SignalGenerator.makeSamples(repCount: 10)
        #expect(abs(samples.last!.timestamp - (10 / 1.5 + 6)) < 0.02)
        #expect(abs(samples[1].timestamp - samples[0].timestamp - 0.02) < 1e-12)
        let active = samples.filter { $0.timestamp < 10 / 1.5 }
        let crossings = zip(active, active.dropFirst()).filter { $0.ay < 0 && $1.ay >= 0 }.count
        #expect(crossings == 9)  // 10 cycles starting at 0 cross upward 9 times inside the active part
        #expect(samples.filter { $0.timestamp > 10 / 1.5 + 0.05 }.allSatisfy { $0.ay == 0 && $0.az == 1 })
    }

    @Test("any function of time can be sampled")
    func functionOfTime() {
        let samples = SignalGenerator.samples(duration: 1, sampleRate: 10) { t in
            MotionSample(timestamp: 0, ax: t * 2, ay: 0, az: 1)
        }
        #expect(samples.count == 11)
        #expect(samples.map(\.ax) == samples.map { $0.timestamp * 2 })
    }

    @Test("the workout generator is reproducible from its seed and different for another")
    func workoutSeed() {
        var generator = WorkoutGenerator()
        let a = generator.generate()
        let b = generator.generate()
        generator.seed = 43
        let c = generator.generate()
        #expect(a.samples == b.samples)
        #expect(a.samples != c.samples)
    }

    @Test("the workout has the planned sets and reps, rests between them, and 1 g at rest")
    func workoutStructure() {
        var generator = WorkoutGenerator()
        generator.repsPerSet = [5, 8, 12]
        generator.restSeconds = 30
        generator.gravityDirection = Vector3(0.3, -1, 0.2)
        let workout = generator.generate()
        #expect(workout.sets.map(\.repCompletionTimes.count) == [5, 8, 12])
        #expect(workout.totalReps == 25)
        for (set, next) in zip(workout.sets, workout.sets.dropFirst()) {
            #expect(next.start - set.end >= 30)
        }
        let lead = workout.samples.filter { $0.timestamp < generator.leadSeconds - 0.5 }
        let meanMagnitude = lead.map(\.magnitude).reduce(0, +) / Double(lead.count)
        #expect(abs(meanMagnitude - 1) < 0.03)
        let gravity = generator.gravityDirection.normalized
        let meanAlongY = lead.map(\.ay).reduce(0, +) / Double(lead.count)
        #expect(abs(meanAlongY - gravity.y) < 0.03)
    }

    @Test("slowdown lengthens the last reps of a set (the last one by the given fraction) and softens them")
    func slowdown() {
        var generator = WorkoutGenerator()
        generator.sets = 1
        generator.repsPerSet = [6]
        generator.tempoJitter = 0
        generator.noise = 0
        generator.slowdown = 1
        let workout = generator.generate()
        let completions = workout.sets[0].repCompletionTimes
        let first = completions[0] - workout.sets[0].start
        let last = completions[5] - completions[4]
        #expect(abs(first - generator.repPeriod) < 1e-9)
        #expect(last > 1.9 * generator.repPeriod && last < 2 * generator.repPeriod + 2)  // plus the pause before it
        // The peak acceleration of the last rep is about a quarter of the first one's (∝ 1/period²).
        func peak(from: Double, to: Double) -> Double {
            workout.samples.filter { $0.timestamp > from && $0.timestamp < to }.map { abs($0.magnitude - 1) }.max() ?? 0
        }
        let ratio =
            peak(from: completions[4], to: completions[5]) / peak(from: workout.sets[0].start, to: completions[0])
        #expect(ratio > 0.2 && ratio < 0.32, "\(ratio)")
    }
}
