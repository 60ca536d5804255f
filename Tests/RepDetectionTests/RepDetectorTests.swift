#if canImport(Glibc)
    import Glibc
    import MotionSimulation
#elseif canImport(Darwin)
    import Darwin
#endif
import MotionCore
import RepDetection
import Testing

@Suite("RepDetector on synthetic motion")
struct RepDetectorTests {
    @Test("makeSamples(repCount: 10) counts exactly 10")
    func familiarTest() {
        #expect(repCount(SignalGenerator.makeSamples(repCount: 10)) == 10)
    }

    @Test("the count is exact for any rep count", arguments: [3, 4, 5, 8, 12, 25])
    func anyRepCount(count: Int) {
        #expect(repCount(SignalGenerator.makeSamples(repCount: count)) == count)
    }

    static let directions: [Vector3] = [.x, .y, .z, Vector3(1, 1, 1), Vector3(0.3, -1, 0.5)]

    // The sine starts and ends at zero acceleration (phase 0 or π), as motion from rest does. A sine that jumps
    // to its peak (phase π/2) at 0.2 Hz leaves a filter transient after its end that can add one rep.
    @Test(
        "exact counts from 0.2 to 1.5 Hz and 0.05 to 2 g, in any direction, with noise",
        arguments: [0.2, 0.3, 0.5, 1.0, 1.5], [0.05, 0.1, 0.5, 1.0, 2.0])
    func slowAndMediumReps(frequency: Double, amplitude: Double) {
        for direction in Self.directions {
            for phase in [0.0, Double.pi] {
                let samples = sineSet(
                    repCount: 10, frequency: frequency, amplitude: amplitude, direction: direction, phase: phase)
                #expect(repCount(samples) == 10, "\(frequency) Hz, \(amplitude) g along \(direction), phase \(phase)")
            }
        }
    }

    // At 2–3 Hz the smoothing (two 0.06 s stages) passes 64 % and 45 % of the swing, and the 25 Hz grid holds 12 and 8
    // points of a cycle. At 3 Hz and 0.1 g an edge cycle at the noise level added a rep in 2 of 10 cases (phase and
    // direction), so the envelope measured exact there starts at 0.5 g; at 2 Hz at 0.1 g.
    @Test(
        "exact counts at 2 Hz from 0.1 g and at 3 Hz from 0.5 g to 2 g, in any direction, with noise",
        arguments: [(2.0, 0.1), (2.0, 0.5), (2.0, 1.0), (2.0, 2.0), (3.0, 0.5), (3.0, 1.0), (3.0, 2.0)])
    func fastReps(frequency: Double, amplitude: Double) {
        for direction in Self.directions {
            for phase in [0.0, Double.pi] {
                let samples = sineSet(
                    repCount: 10, frequency: frequency, amplitude: amplitude, direction: direction, phase: phase)
                #expect(repCount(samples) == 10, "\(frequency) Hz, \(amplitude) g along \(direction), phase \(phase)")
            }
        }
    }

    @Test(
        "gravity along any axis changes nothing",
        arguments: [Vector3.x, .y, .z, Vector3(0, -1, 0), Vector3(0.5, 0.5, -0.7)])
    func gravityAnywhere(gravity: Vector3) {
        let samples = sineSet(
            repCount: 10, frequency: 0.8, amplitude: 0.3, direction: Vector3(1, 0.2, 0), gravity: gravity.normalized)
        #expect(repCount(samples) == 10)
    }

    @Test("the sample rate does not matter, from 12.5 Hz to 1.6 kHz", arguments: [12.5, 25, 50, 100, 400, 1600])
    func sampleRateIndependent(rate: Double) {
        let samples = sineSet(
            repCount: 10, frequency: 0.7, amplitude: 0.3, direction: Vector3(1, 1, 0), sampleRate: rate)
        #expect(repCount(samples) == 10)
    }

    @Test("irregular timestamps (±40 % jitter) do not create or swallow reps")
    func irregularTimestamps() {
        var random = SeededGenerator(seed: 9)
        let regular = sineSet(repCount: 12, frequency: 0.8, amplitude: 0.4, sampleRate: 50)
        var t = 0.0
        let jittered = regular.map { sample -> MotionSample in
            var s = sample
            t += 0.02 * Double.random(in: 0.6...1.4, using: &random)
            s.timestamp = t
            return s
        }
        // The signal is the same function of the index, so time stretches a little; the count must not change.
        #expect(repCount(jittered) == 12)
    }

    @Test("a dropout of several seconds inside a set does not create reps or lose the ones after it")
    func dropout() {
        let samples = sineSet(repCount: 20, frequency: 1, amplitude: 0.4)
        let withGap = samples.filter { $0.timestamp < 10.0 || $0.timestamp >= 13.0 }
        let counted = reps(detect(withGap))
        let times = counted.map(\.timestamp)
        #expect(counted.count >= 16 && counted.count <= 17, "3 of 20 cycles fall in the gap: counted \(counted.count)")
        #expect(times.filter { $0 > 13 }.count >= 8, "reps after the gap are counted")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.55 }, "no rep is counted twice")
    }

    @Test(
        "a dropout longer than a slow rep keeps the set going: the reps around it are counted, none twice",
        arguments: [10.0, 10.7, 11.4, 12.1])
    func dropoutLongerThanARep(gapStart: Double) {
        // 12 reps of 2.5 s (0.4 Hz) from t = 2 s; the sensor delivers nothing for 3 s, which hides the turn of
        // one or two reps. The set must not end at the gap (a pause is judged on the time the sensor saw): before
        // dropouts were left out of that judgement, every case here split into two sets.
        let samples = sineSet(repCount: 12, frequency: 0.4, amplitude: 0.3)
        let withGap = samples.filter { $0.timestamp < gapStart || $0.timestamp >= gapStart + 3 }
        let events = detect(withGap)
        let counted = reps(events)
        let sets = events.filter { if case .setStarted = $0 { true } else { false } }
        #expect(sets.count == 1, "one set, not two around the gap")
        // Up to two reps complete inside the gap, where nobody can see them; the rest are counted.
        #expect(
            counted.count >= 10 && counted.count <= 12, "counted \(counted.count) of 12: \(counted.map(\.timestamp))")
        #expect(counted.filter { $0.timestamp > gapStart + 3 }.count >= 5, "the reps after the gap are counted")
        let times = counted.map(\.timestamp)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 0.55 * 2.5 }, "no rep is counted twice")
    }

    @Test(
        "a recording that stops the moment its last rep ends counts that rep",
        arguments: [(4, 2.5), (4, 3.5), (6, 2.0), (6, 3.5), (9, 1.5), (9, 2.5)])
    func streamEndingWithTheLastRep(count: Int, period: Double) {
        for seed: UInt64 in 1...3 {
            let set = sineSet(
                repCount: count, frequency: 1 / period, amplitude: 0.2, extraSeconds: 0, seed: seed)
            #expect(repCount(set) == count, "seed \(seed)")
        }
    }

    @Test("a recording that stops 40 % into a rep does not count that rep", arguments: [1.5, 2.5, 3.5])
    func streamEndingInsideARep(period: Double) {
        let set = sineSet(repCount: 7, frequency: 1 / period, amplitude: 0.2, extraSeconds: 0)
        #expect(repCount(Array(set.dropLast(Int(0.6 * period * 50)))) == 6)
    }

    @Test("a still sensor counts nothing, in any orientation", arguments: [Vector3.z, .x, Vector3(0.6, -0.8, 0)])
    func stillSensor(gravity: Vector3) {
        let still = SignalGenerator.samples(duration: 120, sampleRate: 50) { t in
            MotionSample(timestamp: t, ax: gravity.x, ay: gravity.y, az: gravity.z)
        }
        #expect(detect(still).isEmpty)
    }

    @Test("pure noise counts nothing", arguments: [0.005, 0.01, 0.02], [UInt64(1), 2, 3])
    func pureNoise(level: Double, seed: UInt64) {
        let noise = sineSet(repCount: 0, frequency: 1, amplitude: 0, noise: level, extraSeconds: 120, seed: seed)
        #expect(repCount(noise) == 0)
    }

    @Test("samples whose time does not advance are ignored")
    func duplicateTimestamps() {
        var samples = SignalGenerator.makeSamples(repCount: 10)
        samples.insert(samples[100], at: 101)
        samples.insert(MotionSample(timestamp: 0, ax: 5, ay: 5, az: 5), at: 300)
        var detector = RepDetector()
        var events: [WorkoutEvent] = []
        detector.process(samples, into: &events)
        #expect(detector.ignoredSamples == 2)
        #expect(reps(events).count == 10)
    }

    @Test(
        "an absurd sample is ignored and counted, and the count is the same as without it",
        arguments: [
            MotionSample(timestamp: 0, ax: 1e300, ay: 0, az: 1),
            MotionSample(timestamp: 0, ax: 0, ay: -1e8, az: 1),
            MotionSample(timestamp: 0, ax: 0, ay: 0, az: .nan),
            MotionSample(timestamp: 0, ax: .infinity, ay: 0, az: 1),
            MotionSample(timestamp: 1.7e18, ax: 0, ay: 0, az: 1),  // nanoseconds read as seconds: trapped before
            MotionSample(timestamp: .nan, ax: 0, ay: 0, az: 1),
        ])
    func implausibleSamples(absurd: MotionSample) {
        let clean = SignalGenerator.makeSamples(repCount: 16)
        var samples = clean
        for index in [0, clean.count / 3, clean.count / 2] {  // the first sample, in a rep, and later
            var bad = absurd
            if bad.timestamp == 0 { bad.timestamp = samples[index].timestamp + 1e-4 }
            samples.insert(bad, at: index + 1)
        }
        samples.insert(absurd.shifted(by: 0), at: 0)
        var detector = RepDetector()
        var events: [WorkoutEvent] = []
        detector.process(samples, into: &events)
        detector.finish(into: &events)
        #expect(detector.ignoredSamples == 4)
        #expect(events == detect(clean))
    }

    @Test("rep events number reps within the set and in total, in time order")
    func repNumbering() {
        let counted = reps(detect(SignalGenerator.makeSamples(repCount: 10)))
        #expect(counted.map(\.repInSet) == Array(1...10))
        #expect(counted.map(\.totalReps) == Array(1...10))
        #expect(counted.allSatisfy { $0.setNumber == 1 })
        let times = counted.map(\.timestamp)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        let durations = counted.dropFirst().map(\.duration)
        #expect(durations.allSatisfy { abs($0 - 1 / 1.5) < 0.1 }, "\(durations)")
        #expect(counted.allSatisfy { $0.amplitude > 0.3 && $0.amplitude < 1.2 })
    }

    @Test("reset starts a new workout at set 1, rep 1")
    func reset() {
        var detector = RepDetector()
        var events: [WorkoutEvent] = []
        detector.process(SignalGenerator.makeSamples(repCount: 5), into: &events)
        detector.reset()
        #expect(detector.totalReps == 0 && detector.setNumber == 0)
        events.removeAll()
        detector.process(SignalGenerator.makeSamples(repCount: 6), into: &events)
        #expect(reps(events).map(\.totalReps) == Array(1...6))
    }
}

@Suite("RepDetector on real-life disturbances")
struct RepDetectorDisturbanceTests {
    /// 1 s still, a large movement of `jolt` g along `joltDirection` (one slow 2.5 s cycle, like lifting a bar out of
    /// the rack), 1 s still, then 8 reps of 0.15 g at 0.8 Hz on y, then 6 s still; 50 Hz, gravity on z.
    static func setAfterLargeMovement(jolt: Double, joltDirection: Vector3 = .y) -> [MotionSample] {
        let joltStart = 1.0, joltLength = 2.5, repsStart = 4.5, frequency = 0.8, reps = 8
        let repsEnd = repsStart + Double(reps) / frequency
        var random = SeededGenerator(seed: 7)
        return SignalGenerator.samples(duration: repsEnd + 6, sampleRate: 50) { t in
            var a = Vector3.z
            if t >= joltStart, t < joltStart + joltLength {
                a = a + joltDirection * (jolt * sin(2 * .pi * (t - joltStart) / joltLength))
            }
            if t >= repsStart, t < repsEnd {
                a = a + Vector3.y * (0.15 * sin(2 * .pi * frequency * (t - repsStart)))
            }
            let ax = a.x + random.nextGaussian(standardDeviation: 0.005)
            let ay = a.y + random.nextGaussian(standardDeviation: 0.005)
            return MotionSample(timestamp: t, ax: ax, ay: ay, az: a.z + random.nextGaussian(standardDeviation: 0.005))
        }
    }

    @Test("a large movement just before a set does not hide the set's reps", arguments: [0.5, 1.0, 1.5])
    func largeMovementBeforeSet(jolt: Double) {
        #expect(repCount(Self.setAfterLargeMovement(jolt: jolt)) == 8)
    }

    /// Swings in a steady beat (one cycle every 1.1 s, from 3 s on) that each look different from the one before,
    /// like someone fidgeting: bumps of (center s, half-width s, g) on y, then 10 s still; 50 Hz, gravity on z.
    static func fidgetsInStep() -> [MotionSample] {
        let cycles: [[(Double, Double, Double)]] = [
            [(0.10, 0.10, 0.30), (0.70, 0.30, -0.15)],
            [(0.40, 0.40, 0.12), (0.90, 0.08, -0.35)],
            [(0.05, 0.05, 0.40), (0.30, 0.05, -0.30), (0.55, 0.05, 0.30), (0.85, 0.15, -0.20)],
            [(0.50, 0.30, 0.15), (1.00, 0.10, -0.30)],
        ]
        var bumps: [(center: Double, halfWidth: Double, g: Double)] = []
        for (index, cycle) in cycles.enumerated() {
            for bump in cycle { bumps.append((3 + 1.1 * Double(index) + bump.0, bump.1, bump.2)) }
        }
        var random = SeededGenerator(seed: 11)
        return SignalGenerator.samples(duration: 3 + 1.1 * Double(cycles.count) + 10, sampleRate: 50) { t in
            var y = 0.0
            for bump in bumps where abs(t - bump.center) < bump.halfWidth {
                y += bump.g * 0.5 * (1 + cos(.pi * (t - bump.center) / bump.halfWidth))
            }
            return MotionSample(
                timestamp: t, ax: random.nextGaussian(standardDeviation: 0.003),
                ay: y + random.nextGaussian(standardDeviation: 0.003),
                az: 1 + random.nextGaussian(standardDeviation: 0.003))
        }
    }

    @Test("swings that fall into step but do not look alike start no set")
    func fidgetsInStepAreNotReps() {
        #expect(detect(Self.fidgetsInStep()).isEmpty)
    }

    @Test("inside a set the tracked period is the reps' period and the periodicity is high")
    func trackedPeriod() {
        var detector = RepDetector()
        var events: [WorkoutEvent] = []
        let samples = sineSet(repCount: 8, frequency: 0.8, amplitude: 0.3)
        // Up to the middle of the sixth rep (2 s of stillness first).
        detector.process(samples.filter { $0.timestamp < 2 + 5.5 / 0.8 }, into: &events)
        #expect(detector.inSet)
        #expect(abs(detector.period - 1.25) < 0.05, "period \(detector.period)")
        #expect(detector.periodicity > 0.9, "periodicity \(detector.periodicity)")
        #expect((detector.match ?? 0) > -1)
    }
}

@Suite("RepDetector on reps that are not one clean bump")
struct RepShapeTests {
    /// `count` reps of `period` s along y whose motion has harmonics: a fundamental plus a second and third bump per
    /// rep (a press with a lockout, a burpee's several movements), framed by 2 s and 8 s of stillness; 50 Hz.
    static func harmonicReps(count: Int, period: Double, second: Double, third: Double) -> [MotionSample] {
        var random = SeededGenerator(seed: 5)
        let active = Double(count) * period
        return SignalGenerator.samples(duration: 2 + active + 8, sampleRate: 50) { t in
            var y = 0.0
            if t >= 2, t < 2 + active {
                let phase = 2 * Double.pi * (t - 2) / period
                y = 0.2 * sin(phase) + second * sin(2 * phase + 0.7) + third * sin(3 * phase + 1.9)
            }
            return MotionSample(
                timestamp: t, ax: random.nextGaussian(standardDeviation: 0.005),
                ay: y + random.nextGaussian(standardDeviation: 0.005),
                az: 1 + random.nextGaussian(standardDeviation: 0.005))
        }
    }

    @Test("a rep with two or three bumps counts once", arguments: [(0.2, 0.0), (0.15, 0.15), (0.25, 0.1)])
    func harmonicsCountOnce(second: Double, third: Double) {
        for period in [1.5, 2.5] {
            let samples = Self.harmonicReps(count: 10, period: period, second: second, third: third)
            let counted = repCount(samples)
            #expect(counted == 10, "\(period) s, harmonics \(second)/\(third) g: counted \(counted)")
        }
    }

    /// Alternating-side reps (left lunge, right lunge): every rep moves the same way along y (the main motion of
    /// 0.3 g) while the side-to-side motion on x (`side` g) changes sign from one rep to the next; 50 Hz.
    static func alternatingReps(count: Int, period: Double, side: Double) -> [MotionSample] {
        var random = SeededGenerator(seed: 9)
        let active = Double(count) * period
        return SignalGenerator.samples(duration: 2 + active + 8, sampleRate: 50) { t in
            var x = 0.0, y = 0.0
            if t >= 2, t < 2 + active {
                let rep = Int((t - 2) / period)
                let phase = 2 * Double.pi * (t - 2) / period
                y = 0.3 * sin(phase)
                x = (rep % 2 == 0 ? side : -side) * (1 - cos(phase)) / 2
            }
            return MotionSample(
                timestamp: t, ax: x + random.nextGaussian(standardDeviation: 0.005),
                ay: y + random.nextGaussian(standardDeviation: 0.005),
                az: 1 + random.nextGaussian(standardDeviation: 0.005))
        }
    }

    @Test("alternating-side reps count every rep when the sides differ by up to a quarter of the motion")
    func alternatingSides() {
        for side in [0.0, 0.05, 0.075] {
            let counted = repCount(Self.alternatingReps(count: 12, period: 1.6, side: side))
            #expect(counted == 12, "side \(side) g: counted \(counted)")
        }
    }

    @Test("a setup movement before a set counts the set's reps only", arguments: [0.5, 1.0, 1.5])
    func setupMovementIsNotARep(jolt: Double) {
        let counted = repCount(RepDetectorDisturbanceTests.setAfterLargeMovement(jolt: jolt))
        #expect(abs(counted - 8) <= 1, "counted \(counted)")
    }

    @Test("set_end carries the final count; the live count, when different, is the set's rep events")
    func liveAndFinalCounts() {
        var workout = WorkoutGenerator()
        workout.sets = 3
        workout.repsPerSet = [6, 9, 12]
        for seed: UInt64 in 1...6 {
            workout.seed = seed
            let events = detect(workout.generate().samples)
            var live: [Int: Int] = [:]
            var final = 0
            for event in events {
                switch event {
                case .rep(let rep): live[rep.setNumber, default: 0] += 1
                case .setEnded(let set):
                    final += set.repCount
                    if let counted = set.liveRepCount {
                        #expect(counted != set.repCount)
                        #expect(counted == live[set.setNumber, default: 0], "seed \(seed), set \(set.setNumber)")
                    } else {
                        #expect(set.repCount == live[set.setNumber, default: 0], "seed \(seed), set \(set.setNumber)")
                    }
                case .setStarted: break
                }
            }
            var detector = RepDetector()
            var scratch: [WorkoutEvent] = []
            detector.process(workout.generate().samples, into: &scratch)
            detector.finish(into: &scratch)
            #expect(detector.totalReps == final, "totalReps follows the final counts")
            #expect(final == 27, "seed \(seed): \(final)")
        }
    }
}
