import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The exercise gate and a jump rope's rhythm (one landing a turn, the hands turning with every jump)")
struct JumpRhythmTests {
    /// A moment of a real rope-skipping set (cara P5, a clean set of 7, 4.64 s in; `repctl eval --features`): a turn
    /// every 0.68 s, the step rhythm at the period itself, the motion along gravity nearly a sine at the period (0.10),
    /// the motion across gravity repeating one period later (0.82), 1.09 g RMS. The built-in tree put it with jogging
    /// (its leaf of step rhythms that do not reverse half a period later, under 1.15 g) and refused it (0.07); the set
    /// then counted 0, its 5 live reps taken back (docs/DETECTOR.md, "A jump rope's rhythm passes").
    static let ropeSkip = ExerciseGateFeatures(
        logPeriod: -0.38566, logRMS: 0.08744, periodicity: 0.89750, verticalShare: 0.38577, verticalHalf: 0.30556,
        acrossHalf: -0.19826, verticalFull: 0.88855, acrossFull: 0.81933, logSharpness: 0.08984,
        logVerticalSharpness: 0.10436, steadiness: 0.73842, pauseShare: 0.02667, stepRhythm: 0.94125,
        verticalStepRhythm: 0.59755, stepPeriod: 0.68)

    /// A moment of a real jog (WISDM, person 1604, 52.5 s in; `repctl eval --features`) whose step rhythm the tracker
    /// found at the stride's period (0.72 s): strong (1.01 g), periodic, its swing repeating across gravity one period
    /// later (0.90), not gait's signature (its steps repeat only 0.20 half a period back), but bouncing twice a period
    /// along gravity (sharpness 0.54; ln 2 is 0.69). Of the 757 moments of WISDM's jogs that hold all of a jump rope's
    /// rhythm but the smoothness along gravity and that no other rule refuses, this is the median one of person 1604's.
    static let jogAtItsStride = ExerciseGateFeatures(
        logPeriod: -0.32850, logRMS: 0.01142, periodicity: 0.94752, verticalShare: 0.26121, verticalHalf: 0.20193,
        acrossHalf: -0.72738, verticalFull: 0.88041, acrossFull: 0.89769, logSharpness: 0.28613,
        logVerticalSharpness: 0.54113, steadiness: 0.92237, pauseShare: 0, stepRhythm: 1.40706,
        verticalStepRhythm: 1.46678, stepPeriod: 0.72)

    @Test(
        """
        a step rhythm at the period (within 10 %), motion along gravity at most 0.35 sharp, across gravity repeating \
        one period later (0.6), 0.4 g RMS and a periodicity of 0.8 pass whatever the tree says; the bounds are inclusive
        """
    )
    func ropeSkipPasses() {
        let skip = Self.ropeSkip
        #expect(ExerciseGateModel.trained.probability(of: skip) < 0.2, "the tree alone refused it")
        #expect(!skip.isSteadyRepetition)
        #expect(!skip.isTooSmallForItsPace && !skip.isGait && !skip.isArmSwing && !skip.isStrideSwing)
        #expect(!skip.isStrideBounce)
        #expect(skip.isJumpRhythm)
        #expect(ExerciseGateModel.trained.judgement(of: skip) == 1)
        #expect(ExerciseGateModel.constant(probability: 0.01).judgement(of: skip) == 1)
        // The step rhythm's distance from the period, as a ratio either way (the period 0.68 s).
        for (step, inside) in [
            (0.68 * 1.099, true), (0.68 / 1.099, true), (0.68 * 1.101, false), (0.68 / 1.101, false),
        ] {
            #expect(skip.with { $0.stepPeriod = step }.isJumpRhythm == inside, "step rhythm at \(step) s")
        }
        #expect(!skip.with { $0.stepPeriod = 0 }.isJumpRhythm, "no step rhythm")
        #expect(skip.with { $0.logVerticalSharpness = 0.35 }.isJumpRhythm)
        #expect(!skip.with { $0.logVerticalSharpness = 0.36 }.isJumpRhythm)
        #expect(skip.with { $0.acrossFull = 0.6 }.isJumpRhythm)
        #expect(!skip.with { $0.acrossFull = 0.59 }.isJumpRhythm)
        #expect(skip.with { $0.logRMS = log(0.4) }.isJumpRhythm)
        #expect(!skip.with { $0.logRMS = log(0.39) }.isJumpRhythm)
        #expect(skip.with { $0.periodicity = 0.8 }.isJumpRhythm)
        #expect(!skip.with { $0.periodicity = 0.79 }.isJumpRhythm)
    }

    @Test(
        """
        a jog whose step rhythm lies at its stride bounces twice a period along gravity: the tree judges it, and \
        refuses it
        """
    )
    func jogAtItsStrideIsLeftToTheTree() {
        let jog = Self.jogAtItsStride
        #expect(!jog.isJumpRhythm)
        #expect(jog.with { $0.logVerticalSharpness = 0.35 }.isJumpRhythm, "all but the smoothness along gravity")
        #expect(!jog.isSteadyRepetition && !jog.isGait && !jog.isStrideSwing && !jog.isArmSwing)
        #expect(!jog.isStrideBounce && !jog.isTooSmallForItsPace)
        #expect(ExerciseGateModel.trained.judgement(of: jog) < 0.2)
    }

    @Test(
        """
        the refusals come first: a jump rope's rhythm that also holds gait's signature (steps repeating half a period \
        back, the swing reversing, a clear step rhythm along gravity) is refused
        """
    )
    func refusalsComeFirst() {
        let gait = Self.ropeSkip.with {
            $0.verticalHalf = 0.5
            $0.acrossHalf = -0.7
            $0.verticalStepRhythm = 1.2
        }
        #expect(gait.isJumpRhythm && gait.isGait)
        #expect(ExerciseGateModel.trained.judgement(of: gait) == 0)
    }

    /// 20 turns of a jump rope (`period` s each, 0.9–1.1 of it and 0.8–1.2 of `size` g, irregular like a real set) seen
    /// from a wrist whose `up` axis reads gravity: the hand circles in the plane of gravity and a horizontal direction
    /// once a turn (`size` g), and the body lands once a turn (a bounce along gravity of half `size`, a little after
    /// the hand's lowest point, smooth: the sharpness limit holds by construction; the real moment `ropeSkip` is the
    /// case the tree refused); 4 s of stillness before, 10 s after, 0.02 g of noise, 50 Hz.
    static func ropeSkipping(period: Double, size: Double, up: Vector3, seed: UInt64) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let schedule = RepSchedule(
            count: 20, period: period, lead: 4, length: 0.9...1.1, size: 0.8...1.2, random: &random)
        let u = up.normalized, d = GeneratedMotion.across(up)
        return schedule.samples(rate: 50, tail: 10) { t, under in
            var a = u
            if let under {
                let s = schedule.sizes[under.rep] * size, phase = 2 * Double.pi * under.p
                a = a + d * (s * cos(phase)) + u * (s * sin(phase) + 0.5 * s * cos(phase - 0.6))
            }
            let noise = { random.nextGaussian(standardDeviation: 0.02) }
            return MotionSample(timestamp: t, ax: a.x + noise(), ay: a.y + noise(), az: a.z + noise())
        }
    }

    @Test(
        """
        generated rope skipping at 0.45–0.7 s a turn and 0.8–1.2 g, in any orientation, counts 17–20 of its 20 turns \
        with a gate whose tree refuses every moment (the jump rope's rhythm passes it; without that rule it counts 0), \
        17–20 with the built-in gate too, and 20 without a gate
        """,
        arguments: [0.45, 0.7], [0.8, 1.2])
    func generatedRopeSkippingCounts(period: Double, size: Double) {
        var refusing = RepDetectorConfiguration()
        refusing.exerciseGate = .constant(probability: 0.01)
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        for (n, up) in ExerciseGateTests.ups.enumerated() {
            let samples = Self.ropeSkipping(period: period, size: size, up: up, seed: UInt64(n + 1))
            // The first turns' judgements still hold the stillness before them (faint, hardly periodic: refused), and
            // at 0.45 s a turn the set's start then passes over up to three turns; the jump rope's rhythm passes the
            // rest.
            let counted = repCount(samples, configuration: refusing)
            #expect((17...20).contains(counted), "\(period) s, \(size) g, up \(up): \(counted) with the tree refusing")
            let gated = repCount(samples)
            #expect((17...20).contains(gated), "\(period) s, \(size) g, up \(up): \(gated) with the built-in gate")
            let ungated = repCount(samples, configuration: off)
            #expect(ungated == 20, "\(period) s, \(size) g, up \(up): \(ungated) without a gate")
        }
    }
}
