import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("The exercise gate and a slow stride whose two steps bounce the wrist alike (stairs, a hand on the rail)")
struct StrideBounceTests {
    /// A moment of a real stair climb (WISDM, person 1608, 100.2 s into the stairs recording; `repctl eval
    /// --features`): a stride of 1.6 s whose steps (0.8 s, past the step lags) bounce the wrist alike along gravity,
    /// 85 % of the energy there, no step rhythm, the arm hardly swinging back. The built-in tree accepted it (0.99), and
    /// that climb counted 18 (docs/DETECTOR.md, "A slow stride's bounce is refused").
    static let stairs = ExerciseGateFeatures(
        logPeriod: 0.47000, logRMS: -1.86920, periodicity: 0.92322, verticalShare: 0.84900, verticalHalf: 0.91090,
        acrossHalf: -0.41725, verticalFull: 0.96165, acrossFull: 0.65102, logSharpness: 0.84770,
        logVerticalSharpness: 0.85852, steadiness: 0.92881, pauseShare: 0.0875, stepRhythm: 0,
        verticalStepRhythm: 0, stepPeriod: 0)

    @Test(
        """
        a stride of 1.3–1.9 s whose motion along gravity repeats half a period later (0.85) and holds half the \
        energy is refused whatever the tree says; the bounds are inclusive
        """
    )
    func slowStrideBounceIsRefused() {
        #expect(ExerciseGateModel.trained.probability(of: Self.stairs) >= 0.2, "the tree alone accepted it")
        #expect(!Self.stairs.isSteadyRepetition)
        // No other rule refuses it: gait's signature needs the swing to reverse (-0.6) and a step rhythm.
        #expect(
            !Self.stairs.isGait && !Self.stairs.isArmSwing && !Self.stairs.isStrideSwing
                && !Self.stairs.isTooSmallForItsPace)
        #expect(Self.stairs.isStrideBounce)
        #expect(ExerciseGateModel.trained.judgement(of: Self.stairs) == 0)
        #expect(ExerciseGateModel.constant(probability: 0.99).judgement(of: Self.stairs) == 0)
        // The period's bounds, and on the 40 ms grid the lags just inside (33 and 47 points) and outside them.
        for (seconds, inside) in [(1.3, true), (1.9, true), (1.32, true), (1.88, true), (1.28, false), (1.92, false)] {
            #expect(Self.stairs.with { $0.logPeriod = log(seconds) }.isStrideBounce == inside, "\(seconds) s")
        }
        #expect(Self.stairs.with { $0.verticalHalf = 0.85 }.isStrideBounce)
        #expect(!Self.stairs.with { $0.verticalHalf = 0.84 }.isStrideBounce)
        #expect(Self.stairs.with { $0.verticalShare = 0.5 }.isStrideBounce)
        #expect(!Self.stairs.with { $0.verticalShare = 0.49 }.isStrideBounce)
    }

    @Test("steady repetition is judged first: the same climb as steady as a machine passes")
    func steadyRepetitionComesFirst() {
        let steady = Self.stairs.with {
            $0.periodicity = 0.96
            $0.steadiness = 0.95
        }
        #expect(steady.isStrideBounce && steady.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.judgement(of: steady) == 1)
    }

    @Test(
        "sines along gravity at a slow stride's period (0.55 and 0.75 Hz, 0.3 g) count every rep: a sine reverses half a period later",
        arguments: [0.55, 0.75])
    func verticalSinesAtThatPeriodCount(frequency: Double) {
        let samples = sineSet(repCount: 10, frequency: frequency, amplitude: 0.3, direction: .z, gravity: .z)
        #expect(repCount(samples) == 10)
    }

    /// 15 irregular reps (each 0.85–1.15 of `period` long and 0.7–1.3 of `size` large), each two dips along gravity,
    /// the second half as deep as the first (alternating lunges, one leg then the other, whose sides differ), and with
    /// `sway` a sway across gravity once a rep, that share of the size.
    static func alternatingReps(period: Double, size: Double, sway: Double = 0, seed: UInt64) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let schedule = RepSchedule(
            count: 15, period: period, lead: 4, length: 0.85...1.15, size: 0.7...1.3, random: &random)
        return schedule.samples(rate: 50, tail: 10) { t, under in
            let (down, across) =
                under.map {
                    let s = schedule.sizes[$0.rep] * size
                    return (s * ($0.p < 0.5 ? 1 : 0.5) * sin(4 * .pi * $0.p), s * sway * sin(2 * .pi * $0.p))
                } ?? (0, 0)
            let noise = { random.nextGaussian(standardDeviation: 0.01) }
            return MotionSample(timestamp: t, ax: across + noise(), ay: noise(), az: 1 + down + noise())
        }
    }

    @Test(
        """
        alternating dips along gravity (the second half as deep as the first) at 1.6 and 2.4 s a pair count each dip \
        (26–30 of 30) with the gate as without it; with a sway across gravity once a pair the walking rule takes \
        them for steps at 1.6 s, gate or not
        """, arguments: [0.2, 0.4])
    func alternatingDipsCountAsWithoutTheGate(size: Double) {
        var off = RepDetectorConfiguration()
        off.minimumExerciseLikelihood = 0
        for seed: UInt64 in [1, 2] {
            for period in [1.6, 2.4] {
                let dips = Self.alternatingReps(period: period, size: size, seed: seed)
                let gated = repCount(dips)
                #expect((26...30).contains(gated), "\(size) g, seed \(seed), \(period) s")
                #expect(repCount(dips, configuration: off) == gated, "\(size) g, seed \(seed), \(period) s, gate off")
            }
            let swaying = Self.alternatingReps(period: 1.6, size: size, sway: 1.0 / 3, seed: seed)
            #expect(repCount(swaying) == 0, "\(size) g, seed \(seed), swaying")
            #expect(repCount(swaying, configuration: off) == 0, "\(size) g, seed \(seed), swaying, gate off")
        }
    }
}
