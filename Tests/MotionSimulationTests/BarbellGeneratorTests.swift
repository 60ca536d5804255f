import MotionCore
import MotionSimulation
import RepDetection
import Testing

@Suite("Barbell generator")
struct BarbellGeneratorTests {
    /// A sensor without errors, upright (z up), on a bar that does not tilt or drift: what it reads is the motion.
    static func ideal(_ lift: BarbellGenerator.Lift) -> BarbellGenerator {
        var g = BarbellGenerator()
        g.lift = lift
        g.noise = 0
        g.bias = 0
        g.scaleError = 0
        g.tiltDegrees = 0
        g.horizontalTravel = 0
        g.randomOrientation = false
        g.sampleRate = 1000
        return g
    }

    @Test(
        "the truth's range of motion is the one asked for, and each rep's mean concentric velocity the planned one (ROM / the whole phase) times 1.22: the phase leaves out the slow ends below a tenth of the peak speed",
        arguments: BarbellGenerator.Lift.allCases)
    func truthMatchesParameters(lift: BarbellGenerator.Lift) throws {
        var g = BarbellGenerator()
        g.lift = lift
        g.rangeOfMotion = 0.45
        g.firstMeanVelocity = 0.5
        let set = g.generate()
        #expect(set.reps.count == g.reps)
        for rep in set.reps {
            let v = try #require(rep.quality.velocity)
            #expect(abs(v.rangeOfMotion - 0.45) < 1e-6)
            #expect(v.peakConcentric > v.meanConcentric)
            #expect(rep.quality.startsAtTop == (lift != .deadlift))
        }
        for (k, rep) in set.reps.enumerated() {
            let planned = g.firstMeanVelocity * (1 - g.velocityLoss * Double(k) / Double(g.reps - 1))
            let ratio = (rep.quality.velocity?.meanConcentric ?? 0) / planned
            #expect(abs(ratio - 1.22) < 0.005, "rep \(k + 1): \(ratio) × planned")
        }
    }

    @Test(
        "reps slow down to failure: each slower than the one before, the set's velocity loss the one asked for",
        arguments: [0.1, 0.3, 0.5])
    func slowsToFailure(loss: Double) throws {
        var g = BarbellGenerator()
        g.velocityLoss = loss
        g.firstMeanVelocity = 0.8
        g.rangeOfMotion = 0.6
        let set = g.generate()
        let means = set.reps.compactMap { $0.quality.velocity?.meanConcentric }
        #expect(means.count == g.reps)
        #expect(zip(means, means.dropFirst()).allSatisfy { $0 > $1 }, "\(means)")
        #expect(abs(set.velocityLoss - loss * 100) < 0.5, "velocity loss \(set.velocityLoss) %")
    }

    @Test(
        "at rest an error-free sensor reads 1 g in any mounting; with the default errors the length stays within 0.05 g of it"
    )
    func restReadsOneG() {
        for seed: UInt64 in 1...5 {
            var g = BarbellGenerator()
            g.seed = seed
            g.noise = 0
            g.bias = 0
            g.scaleError = 0
            let rest = g.generate().samples.filter { $0.timestamp < g.leadSeconds - 0.01 }
            #expect(!rest.isEmpty)
            #expect(rest.allSatisfy { abs(($0.ax * $0.ax + $0.ay * $0.ay + $0.az * $0.az).squareRoot() - 1) < 1e-12 })
            var noisy = BarbellGenerator()
            noisy.seed = seed
            let still = noisy.generate().samples.filter { $0.timestamp < noisy.leadSeconds - 0.01 }
            let mean =
                still.reduce(0.0) { $0 + ($1.ax * $1.ax + $1.ay * $1.ay + $1.az * $1.az).squareRoot() }
                / Double(still.count)
            #expect(abs(mean - 1) < 0.05, "mean length \(mean) g")
        }
    }

    @Test(
        "the vertical acceleration an upright ideal sensor reads integrates twice to the true turnaround depth",
        arguments: BarbellGenerator.Lift.allCases)
    func samplesIntegrateToTheMotion(lift: BarbellGenerator.Lift) throws {
        let g = Self.ideal(lift)
        let set = g.generate()
        let rep = try #require(set.reps.first)
        var v = 0.0, p = 0.0, farthest = 0.0
        let samples = set.samples.filter {
            $0.timestamp >= rep.movementStart - 0.1 && $0.timestamp <= rep.movementEnd + 0.1
        }
        for (a, b) in zip(samples, samples.dropFirst()) {
            let dt = b.timestamp - a.timestamp
            let va = (a.az - 1) * MotionSample.standardGravity, vb = (b.az - 1) * MotionSample.standardGravity
            let vNext = v + 0.5 * (va + vb) * dt
            p += 0.5 * (v + vNext) * dt
            v = vNext
            if abs(p) > abs(farthest) { farthest = p }
        }
        let expected = lift == .deadlift ? g.rangeOfMotion : -g.rangeOfMotion
        #expect(abs(farthest - expected) < 0.002, "turnaround at \(farthest) m")
        #expect(abs(v) < 0.005 && abs(p) < 0.005, "back at rest: v \(v) m/s, p \(p) m")
    }

    @Test(
        "touch-and-go: each rep starts the moment the one before stops, so the bar is never still between reps",
        arguments: BarbellGenerator.Lift.allCases)
    func touchAndGo(lift: BarbellGenerator.Lift) throws {
        var g = Self.ideal(lift)
        g.startPause = 0
        let set = g.generate()
        for (a, b) in zip(set.reps, set.reps.dropFirst()) {
            #expect(abs(b.movementStart - a.movementEnd) < 1e-9)
            // Only the slow ends of the phases (below a tenth of their peak speed) count as pause.
            let before = try #require(lift == .deadlift ? b.quality.pauseBottom : b.quality.pauseTop)
            #expect(before < 0.3, "pause before rep: \(before) s")
        }
        let first = try #require(set.reps.first), last = try #require(set.reps.last)
        let between = set.samples.filter { $0.timestamp > first.movementStart && $0.timestamp < last.movementEnd }
        let stillRun = between.reduce(into: (run: 0, longest: 0)) { r, s in
            r.run = abs(s.az - 1) < 1e-3 ? r.run + 1 : 0
            r.longest = max(r.longest, r.run)
        }.longest
        #expect(Double(stillRun) / g.sampleRate < 0.2, "still for \(Double(stillRun) / g.sampleRate) s")
    }

    @Test(
        "a paused rep holds its turnaround for the pause asked for (plus the phases' slow ends)",
        arguments: BarbellGenerator.Lift.allCases, [1.0, 2.0])
    func pausedReps(lift: BarbellGenerator.Lift, pause: Double) throws {
        var g = Self.ideal(lift)
        g.turnaroundPause = pause
        let reps = g.generate().reps
        #expect(reps.count == g.reps)
        for rep in reps {
            let held = try #require(lift == .deadlift ? rep.quality.pauseTop : rep.quality.pauseBottom)
            #expect(held >= pause && held < pause + 0.4, "turnaround pause \(held) s")
        }
    }

    @Test(
        "with rest motion the bar moves towards the turnaround between reps, by at most the height asked for, and the range of motion stays the lift's",
        arguments: BarbellGenerator.Lift.allCases)
    func restMotion(lift: BarbellGenerator.Lift) throws {
        var g = Self.ideal(lift)
        g.restMotion = 0.01
        let set = g.generate()
        var deepest = 0.0
        for (a, b) in zip(set.reps, set.reps.dropFirst()) {
            var v = 0.0, p = 0.0
            let rest = set.samples.filter { $0.timestamp >= a.movementEnd && $0.timestamp <= b.movementStart }
            for (x, y) in zip(rest, rest.dropFirst()) {
                let dt = y.timestamp - x.timestamp
                let vNext = v + 0.5 * ((x.az - 1) + (y.az - 1)) * MotionSample.standardGravity * dt
                p += 0.5 * (v + vNext) * dt
                v = vNext
                deepest = lift == .deadlift ? max(deepest, p) : min(deepest, p)
            }
            #expect(abs(p) < 1e-3, "back where it rested: \(p) m")
        }
        #expect(abs(deepest) >= 0.005 && abs(deepest) <= 0.0101, "moved \(deepest) m at rest")
        for rep in set.reps { #expect(abs((rep.quality.velocity?.rangeOfMotion ?? 0) - g.rangeOfMotion) < 1e-6) }
    }
}
