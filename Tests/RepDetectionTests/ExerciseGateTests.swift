import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Generated motion for the exercise gate: gait and fidgeting count nothing, sets count exactly.
enum GeneratedMotion {
    /// A unit vector perpendicular to `up`.
    static func across(_ up: Vector3) -> Vector3 {
        let u = up.normalized
        let helper = abs(u.x) < 0.9 ? Vector3.x : Vector3.y
        let d = helper + u * -helper.dot(u)
        return d.normalized
    }

    /// Walks, jogs and stair climbs (`WalkingGenerator`) at a cadence, arm swing, bounce and heel strike.
    static func gait(
        strides: Double, swing: Double, bounce: Double, heel: Double, up: Vector3, seconds: Double = 60,
        rate: Double = 50, seed: UInt64 = 3
    ) -> [MotionSample] {
        var walk = WalkingGenerator()
        walk.strideFrequency = strides
        walk.swingDegrees = swing
        walk.bounce = bounce
        walk.heelStrike = heel
        walk.upDirection = up
        walk.walkSeconds = seconds
        walk.leadSeconds = 2
        walk.sampleRate = rate
        walk.seed = seed
        return walk.samples()
    }

    /// Slow fidgeting: `amplitude` g at 0.3 Hz, its size modulated at 0.07 Hz, across gravity, with white noise.
    static func fidget(amplitude: Double, seconds: Double, start: Double, up: Vector3, rate: Double, seed: UInt64)
        -> [MotionSample]
    {
        var random = SeededGenerator(seed: seed)
        let u = up.normalized, d = across(up)
        return SignalGenerator.samples(duration: seconds, sampleRate: rate, start: start) { t in
            let size = amplitude * (0.55 + 0.45 * sin(2 * .pi * 0.07 * (t - start)))
            let a = u + d * (size * sin(2 * .pi * 0.3 * (t - start)))
            return Vector3(
                a.x + random.nextGaussian(standardDeviation: 0.005),
                a.y + random.nextGaussian(standardDeviation: 0.005),
                a.z + random.nextGaussian(standardDeviation: 0.005))
        }.map { MotionSample(timestamp: $0.timestamp, ax: $0.ax, ay: $0.ay, az: $0.az) }
    }

    /// One acceleration cycle of an asymmetric rep at phase `p` (0…1): a slow eccentric (the first `eccentric` of
    /// the period) and a fast concentric; each half is a full sine of acceleration (start and end at rest), the
    /// concentric's `ratio` times as large, so each half moves and stops.
    static func asymmetricRep(_ p: Double, eccentric: Double, ratio: Double) -> Double {
        if p < eccentric { return -sin(2 * .pi * p / eccentric) }
        return ratio * sin(2 * .pi * (p - eccentric) / (1 - eccentric))
    }

    /// `count` asymmetric reps of `period` s and `amplitude` g (along a sensor tilted 25° from gravity), from
    /// `start`, with white noise of `noise` g.
    static func asymmetricSet(
        count: Int, period: Double, amplitude: Double, start: Double, up: Vector3, rate: Double, noise: Double,
        seed: UInt64
    ) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let u = up.normalized
        let direction = (u * cos(25 * .pi / 180) + across(up) * sin(25 * .pi / 180)).normalized
        return SignalGenerator.samples(duration: Double(count) * period, sampleRate: rate, start: start) { t in
            let p = ((t - start) / period).truncatingRemainder(dividingBy: 1)
            let a = u + direction * (amplitude * asymmetricRep(p, eccentric: 0.6, ratio: 1.6))
            return MotionSample(
                timestamp: t, ax: a.x + random.nextGaussian(standardDeviation: noise),
                ay: a.y + random.nextGaussian(standardDeviation: noise),
                az: a.z + random.nextGaussian(standardDeviation: noise))
        }
    }

    /// Stillness with white noise, in any orientation.
    static func still(seconds: Double, start: Double, up: Vector3, rate: Double, seed: UInt64) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let u = up.normalized
        return SignalGenerator.samples(duration: seconds, sampleRate: rate, start: start) { t in
            MotionSample(
                timestamp: t, ax: u.x + random.nextGaussian(standardDeviation: 0.004),
                ay: u.y + random.nextGaussian(standardDeviation: 0.004),
                az: u.z + random.nextGaussian(standardDeviation: 0.004))
        }
    }

    /// `samples` moved to start right after `after` (1/rate later).
    static func shifted(_ samples: [MotionSample], after: [MotionSample], rate: Double) -> [MotionSample] {
        guard let first = samples.first else { return [] }
        let offset = (after.last.map { $0.timestamp + 1 / rate } ?? 0) - first.timestamp
        return samples.map { MotionSample(timestamp: $0.timestamp + offset, ax: $0.ax, ay: $0.ay, az: $0.az) }
    }
}

/// The per-set final and live counts.
func setCounts(_ events: [WorkoutEvent]) -> [(final: Int, live: Int)] {
    events.compactMap { if case .setEnded(let s) = $0 { (s.repCount, s.liveRepCount ?? s.repCount) } else { nil } }
}

/// The gate is on by default (`minimumExerciseLikelihood` 0.2, docs/DETECTOR.md); these tests show what it does
/// with the defaults, and what the detector does without it.
@Suite("The exercise gate (on by default on a wrist or arm)")
struct ExerciseGateTests {
    /// The sensor's orientations: the same motion seen in other axes (the detector finds gravity and splits the
    /// motion along and across it, so these test that no axis is taken for granted; the motion itself, and how much
    /// of it lies along gravity, is set by the generator's stride, swing, bounce and heel strike).
    static let ups: [Vector3] = [.z, Vector3(0.3, -1, 0.5), Vector3(1, 0.2, -0.4)]
    static let gated = RepDetectorConfiguration()
    static let ungated: RepDetectorConfiguration = {
        var c = RepDetectorConfiguration()
        c.minimumExerciseLikelihood = 0
        return c
    }()
    /// Neither the gate nor the walking rule: what the generated gait counts as reps with nothing to refuse it (the
    /// premise of the tests that it counts nothing).
    static let unguarded: RepDetectorConfiguration = {
        var c = ungated
        c.maximumWalkingLikeness = 2
        return c
    }()

    @Test("the gate is on by default, at the threshold the training chose")
    func onByDefault() {
        #expect(RepDetectorConfiguration().minimumExerciseLikelihood == 0.2)
    }

    @Test(
        "walks at 0.8–1.1 strides/s count nothing, whatever the wrist's orientation and the heel strike",
        arguments: [0.8, 0.95, 1.1], [0.2, 0.6, 1.0])
    func walksCountNothing(strides: Double, heel: Double) {
        for up in Self.ups {
            let samples = GeneratedMotion.gait(strides: strides, swing: 20, bounce: 0.2, heel: heel, up: up)
            let events = detect(samples, configuration: Self.gated)
            #expect(
                reps(events).isEmpty, "\(strides) strides/s, heel \(heel) g, up \(up): \(reps(events).count) live reps")
            let unguarded = repCount(samples, configuration: Self.unguarded)
            #expect(unguarded >= 20, "the premise: unrefused, the walk counts (\(unguarded))")
        }
    }

    @Test(
        """
        generated jogs at 1.3–1.6 strides/s (1.5 g RMS, harder than any real jog in ../shared) count nothing: \
        gait's signature is refused (the live reps of their first seconds are taken back at the set's end)
        """,
        arguments: [1.3, 1.6], [0.6, 1.2])
    func jogsCountNothing(strides: Double, heel: Double) {
        for up in Self.ups {
            let samples = GeneratedMotion.gait(strides: strides, swing: 40, bounce: 0.6, heel: heel, up: up)
            let events = detect(samples, configuration: Self.gated)
            let counted = setCounts(events).map(\.final).reduce(0, +)
            #expect(counted == 0, "\(strides) strides/s, heel \(heel) g, up \(up): \(counted)")
            // The live reps that are taken back come in the first seconds, before the gate has judged the jog (its
            // window: 3 s or two periods, then one period more); the 60 s that follow send none.
            let live = reps(events)
            #expect(
                live.count <= 12 && live.allSatisfy { $0.timestamp < 15 },
                "\(strides) strides/s, heel \(heel) g: live reps at \(live.map(\.timestamp))")
            let unguarded = repCount(samples, configuration: Self.unguarded)
            #expect(unguarded >= 20, "the premise: unrefused, the jog counts (\(unguarded))")
        }
    }

    @Test(
        """
        gait's signature is refused whatever the tree says: steps repeating along gravity half a period back (0.4), \
        the swing reversing across it (-0.6), a clear step rhythm along gravity (1.0), 5 % of the energy along gravity
        """)
    func gaitSignatureIsRefused() {
        // A moment of a generated jog at 1.3 strides/s (measured with repctl plot before this rule), which the tree
        // judged 0.95.
        let jog = ExerciseGateFeatures(
            logPeriod: log(0.76), logRMS: log(1.5), periodicity: 0.98, verticalShare: 0.15, verticalHalf: 0.68,
            acrossHalf: -0.87, verticalFull: 0.92, acrossFull: 0.97, steadiness: 0.98, verticalStepRhythm: 1.5)
        #expect(jog.isGait)
        #expect(!jog.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.probability(of: jog) > 0.9)
        #expect(ExerciseGateModel.trained.judgement(of: jog) == 0)
        var edge = jog
        edge.verticalHalf = 0.4
        edge.acrossHalf = -0.6
        edge.verticalStepRhythm = 1.0
        edge.verticalShare = 0.05
        #expect(edge.isGait)
        var stepsDiffer = edge
        stepsDiffer.verticalHalf = 0.39
        var noSwing = edge
        noSwing.acrossHalf = -0.59
        var faintSteps = edge
        faintSteps.verticalStepRhythm = 0.99
        // A 1-2 g sine across gravity at 0.8-1 Hz: its apparent gravity tilts to and fro, which makes a rhythm along
        // gravity at twice its rate that looks like steps, with 0.5-3.1 % of the energy.
        var swingAlone = edge
        swingAlone.verticalShare = 0.049
        let kept = [
            ("steps differ", stepsDiffer), ("no swing", noSwing), ("faint steps", faintSteps),
            ("swing alone", swingAlone),
        ]
        for (name, moment) in kept {
            #expect(!moment.isGait, "\(name)")
        }
        // Steady repetition is judged first: a slow, strong moment (2 s or more, 0.15 g RMS or more, periodicity and
        // steadiness 0.85 or more) that also holds gait's signature passes.
        var slowStrong = jog
        slowStrong.logPeriod = log(2.2)
        #expect(slowStrong.isGait)
        #expect(slowStrong.isSteadyRepetition)
        #expect(ExerciseGateModel.trained.judgement(of: slowStrong) == 1)
    }

    @Test(
        """
        large sines across gravity at 0.8–1 Hz (1 and 2 g), whose apparent gravity tilts at twice their rate, \
        count exactly
        """,
        arguments: [0.8, 1.0], [1.0, 2.0])
    func largeSinesAcrossGravityCount(frequency: Double, amplitude: Double) {
        let samples = sineSet(
            repCount: 10, frequency: frequency, amplitude: amplitude, direction: .x, gravity: .z, noise: 0.01)
        #expect(repCount(samples, configuration: Self.gated) == 10)
    }

    @Test(
        "stair climbs (slow strides, a strong bounce, a small swing) count nothing at 0.85 and 0.95 strides/s; at 0.7 a known issue",
        arguments: [0.7, 0.85, 0.95], [0.3, 0.8])
    func stairsCountNothing(strides: Double, heel: Double) {
        for up in Self.ups {
            let samples = GeneratedMotion.gait(strides: strides, swing: 10, bounce: 0.35, heel: heel, up: up)
            let counted = repCount(samples, configuration: Self.gated)
            let unguarded = repCount(samples, configuration: Self.unguarded)
            #expect(unguarded >= 20, "the premise: unrefused, the climb counts (\(unguarded))")
            if strides >= 0.85 {
                #expect(counted == 0, "\(strides) strides/s, heel \(heel) g, up \(up)")
            } else {
                // Measured: 0.7 strides/s counts in every orientation; real stairs of 26 people count 0 in 92 %. A
                // slow climb whose tracked period is a step is a vertical sine at the step rate (docs/DETECTOR.md,
                // "Gait's signature is refused").
                withKnownIssue("the gate lets generated stair climbs at 0.7 strides/s through") {
                    #expect(counted == 0, "\(strides) strides/s, heel \(heel) g, up \(up)")
                }
            }
        }
    }

    @Test("a minute of slow fidgeting (0.04 g at 0.3 Hz, waxing and waning at 0.07 Hz) counts nothing")
    func fidgetingCountsNothing() {
        for (n, up) in Self.ups.enumerated() {
            let samples = GeneratedMotion.fidget(
                amplitude: 0.04, seconds: 60, start: 0, up: up, rate: 50, seed: UInt64(n + 1))
            #expect(repCount(samples, configuration: Self.gated) == 0, "up \(up)")
        }
    }

    @Test(
        "slow asymmetric sets between fidgeting rests count exactly, the final count equal to the live one, each rep sent as it comes"
    )
    func slowAsymmetricSets() {
        for (n, up) in Self.ups.enumerated() {
            let rate = 50.0
            var samples = GeneratedMotion.still(seconds: 3, start: 0, up: up, rate: rate, seed: 1)
            for set in 0..<3 {
                let reps = GeneratedMotion.asymmetricSet(
                    count: 12, period: 3, amplitude: 0.18, start: 0, up: up, rate: rate, noise: 0.02,
                    seed: UInt64(10 * n + set))
                samples += GeneratedMotion.shifted(reps, after: samples, rate: rate)
                let rest = GeneratedMotion.fidget(
                    amplitude: 0.04, seconds: 20, start: 0, up: up, rate: rate, seed: UInt64(set + 7))
                samples += GeneratedMotion.shifted(rest, after: samples, rate: rate)
            }
            let sent = detectLive(samples, configuration: Self.gated)
            let counts = setCounts(sent.map(\.event))
            #expect(counts.map(\.final) == [12, 12, 12], "up \(up): \(counts)")
            #expect(counts.allSatisfy { $0.final == $0.live }, "up \(up): \(counts)")
            // Live: each rep went out as it came (measured: within 3.2 s, a rep of 3 s), not held until its set ended
            // (8 s after its last rep, so 8 s late or more).
            let delays = sent.filter { if case .rep = $0.event { true } else { false } }.map(\.delay)
            print(
                "slow asymmetric sets, up \(up): reps sent \(delays.min() ?? .nan)–\(delays.max() ?? .nan) s after their time"
            )
            #expect(delays.count == 36 && delays.allSatisfy { $0 < 4 }, "up \(up): rep delays \(delays)")
            // With the gate off, the sets count exactly too, final equal to live (the set-end recount
            // keeps a steady live count); the fidgeting rests are another matter (below).
            let all = setCounts(detect(samples, configuration: Self.ungated))
            let off = all.filter { $0.live >= 8 }
            print("slow asymmetric sets, gate off, up \(up): \(all)")
            #expect(off.map(\.final) == [12, 12, 12], "gate off, up \(up): \(off)")
            #expect(off.allSatisfy { $0.final == $0.live }, "gate off, up \(up): \(off)")
            withKnownIssue("with the gate off, each fidgeting rest counts a set of 1-2 reps") {
                #expect(all.count == 3, "gate off, up \(up): \(all)")
            }
            // No more than that: at most one small set in each rest.
            let rests = all.filter { $0.live < 8 }
            #expect(
                rests.count <= 3 && rests.allSatisfy { $0.final <= 2 && $0.live <= 2 }, "gate off, up \(up): \(all)")
        }
    }

    @Test("the gate's decision and features are there for plots while the motion is periodic, and only then")
    func gateDiagnostics() {
        let samples = sineSet(repCount: 10, frequency: 0.5, amplitude: 0.3)
        var detector = RepDetector(configuration: Self.gated)
        var events: [WorkoutEvent] = []
        var judged = 0, still = 0
        for sample in samples {
            detector.process(sample, into: &events)
            if let p = detector.exerciseLikelihood {
                judged += 1
                #expect((0...1).contains(p))
                #expect(detector.gateFeatures != nil)
            } else if sample.timestamp < 1.5 {
                still += 1
            }
        }
        #expect(judged > 100 && still > 0, "judged \(judged), still \(still)")
    }

    @Test("a gate model that is not a tree is refused by the configuration's validation")
    func invalidModelIsRefused() {
        var c = RepDetectorConfiguration()
        c.exerciseGate = ExerciseGateModel(feature: [0], threshold: [0], left: [0], right: [0], score: [0.5])
        #expect(throws: RepDetectorConfigurationError.self) { try c.validate() }
        c.exerciseGate = .trained
        #expect(c.exerciseGate.isValid)
        #expect(throws: Never.self) { try c.validate() }
    }

    @Test(
        """
        steady clean repetition passes the gate unjudged only with no step rhythm in the 3-D motion and at most 0.5 \
        along gravity (an arm swinging across gravity hides a walk's steps from the 3-D motion)
        """)
    func steadyCleanRepetitionHoldsNoStepRhythm() {
        // A moment like those of the WISDM walk with a 1 s arm swing (docs/DETECTOR.md), its steps left out.
        let swing = ExerciseGateFeatures(
            logPeriod: 0, logRMS: log(0.22), periodicity: 0.97, verticalShare: 0.05, steadiness: 0.93)
        #expect(swing.isSteadyRepetition)
        var faint = swing
        faint.verticalStepRhythm = 0.5
        #expect(faint.isSteadyRepetition)
        var walk = swing
        walk.verticalStepRhythm = 0.9
        #expect(!walk.isSteadyRepetition, "the walk's steps along gravity")
        var stepping = swing
        stepping.stepRhythm = 0.4
        stepping.stepPeriod = 0.5
        #expect(!stepping.isSteadyRepetition, "a step in the 3-D motion")
    }
}
