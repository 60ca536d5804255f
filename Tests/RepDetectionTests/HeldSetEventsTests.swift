import MotionCore
import MotionSimulation
import Testing

@testable import RepDetection

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a subscriber receives of a set the gate's judgements would dismiss (docs/DETECTOR.md, "Live reps the set's end
/// would take back"): with the gate on, a set's events wait until its judgements so far keep it (the reps it counts
/// at its start, for its first judgements).
@Suite("Live reps the set's end would take back are held")
struct HeldSetEventsTests {
    /// The default detector with a gate whose tree judges every moment `probability` (the hand rules still decide
    /// what they decide).
    static func gated(_ probability: Double) -> RepDetectorConfiguration {
        var c = RepDetectorConfiguration()
        c.exerciseGate = .constant(probability: probability)
        return c
    }

    /// `count` asymmetric reps of `period` (tilted 25° from gravity, 0.02 g of noise) whose sizes vary from rep to rep
    /// (drawn from `sizes`, seeded), between 10 s and 12 s of stillness: no hand rule of the gate passes them unjudged
    /// (they are not steady, level or vertical repetition), so the gate's tree decides.
    static func unsteadySet(count: Int, period: Double, sizes: ClosedRange<Double>) -> [MotionSample] {
        let up = Vector3(0, 0, 1), rate = 50.0
        var random = SeededGenerator(seed: 4)
        let sizes = (0..<count).map { _ in Double.random(in: sizes, using: &random) }
        let direction = (up * cos(25 * .pi / 180) + GeneratedMotion.across(up) * sin(25 * .pi / 180)).normalized
        var samples = GeneratedMotion.still(seconds: 10, start: 0, up: up, rate: rate, seed: 1)
        let reps = SignalGenerator.samples(duration: Double(count) * period, sampleRate: rate, start: 0) { t in
            let k = min(count - 1, Int(t / period)), p = (t / period).truncatingRemainder(dividingBy: 1)
            let a = up + direction * (sizes[k] * GeneratedMotion.asymmetricRep(p, eccentric: 0.6, ratio: 1.6))
            return MotionSample(
                timestamp: t, ax: a.x + random.nextGaussian(standardDeviation: 0.02),
                ay: a.y + random.nextGaussian(standardDeviation: 0.02),
                az: a.z + random.nextGaussian(standardDeviation: 0.02))
        }
        samples += GeneratedMotion.shifted(reps, after: samples, rate: rate)
        let after = GeneratedMotion.still(seconds: 12, start: 0, up: up, rate: rate, seed: 2)
        samples += GeneratedMotion.shifted(after, after: samples, rate: rate)
        return samples
    }

    /// 12 slow reps of 3 s, 0.06–0.3 g.
    static let set = unsteadySet(count: 12, period: 3, sizes: 0.06...0.3)

    /// Checks what a client can rely on: sets numbered 1, 2, … without gaps; each set's start before its reps, its
    /// reps numbered 1, 2, … in order, and its end saying how many `rep` events it sent when that differs from its
    /// count; every rep's total one more than the last total sent (after a set's end, corrected to its count).
    static func expectConsistent(_ events: [WorkoutEvent], _ comment: Comment? = nil) {
        var set = 0, inSet = false, repsSent = 0, total = 0
        for event in events {
            switch event {
            case .setStarted(let s):
                #expect(!inSet && s.setNumber == set + 1, comment)
                set = s.setNumber
                inSet = true
                repsSent = 0
            case .rep(let r):
                #expect(inSet && r.setNumber == set && r.repInSet == repsSent + 1 && r.totalReps == total + 1, comment)
                repsSent += 1
                total = r.totalReps
            case .setEnded(let s):
                #expect(inSet && s.setNumber == set, comment)
                #expect((s.liveRepCount ?? s.repCount) == repsSent, comment)
                total += s.repCount - repsSent
                inSet = false
            }
        }
        #expect(!inSet, comment)
    }

    @Test("a set the gate judges 0.5 on average sends every rep as it comes, its final count equal to them")
    func keptSetSendsEveryRep() {
        let events = detect(Self.set, configuration: Self.gated(0.5))
        Self.expectConsistent(events)
        #expect(reps(events).count == 12)
        #expect(setCounts(events).map(\.final) == [12])
        #expect(setCounts(events).map(\.live) == [12])
    }

    @Test(
        "a set the gate judges 0.21 (above the 0.2 threshold, below the 0.4 a kept set must average) sends no rep: the reps it counts at its start wait for its first judgements, which would dismiss it, and its end drops every one"
    )
    func dismissedSetSendsNoRep() {
        let events = detect(Self.set, configuration: Self.gated(0.21))
        Self.expectConsistent(events)
        #expect(reps(events).isEmpty, "sent \(reps(events).count)")
        #expect(setCounts(events).map(\.final) == [0])
        #expect(setCounts(events).map(\.live) == [0])
        // While reps are held, the detector's total counts only those sent.
        var detector = RepDetector(configuration: Self.gated(0.21))
        var streamed: [WorkoutEvent] = []
        for sample in Self.set {
            detector.process(sample, into: &streamed)
            let sentSoFar = reps(streamed).count
            if detector.inSet {
                #expect(detector.totalReps == sentSoFar)
            }
        }
        detector.finish(into: &streamed)
        #expect(streamed == events)
        #expect(detector.totalReps == 0 && detector.setNumber == 1)
    }

    @Test(
        "a set whose judgements dip below what a kept set must average and recover holds its reps meanwhile and sends them together when they recover"
    )
    func heldRepsGoOutWhenTheJudgementsRecover() {
        let batches = Self.batches(Self.set, configuration: Self.gated(0.25))
        let all = batches.flatMap(\.events)
        // Calls after the one with the set's first rep that sent two reps or more at once.
        let laterBursts = batches.map { reps($0.events).count }.drop { $0 == 0 }.dropFirst().filter { $0 >= 2 }.count
        Self.expectConsistent(all)
        #expect(laterBursts >= 1, "\(setCounts(all))")
        let sent = reps(all).count
        #expect(sent >= 3 && sent < 12, "sent \(sent)")
        #expect(setCounts(all).map(\.live) == [sent])
    }

    @Test(
        "a set the gate judges 0.5 sends the reps it counted at its start together once its first four judgements keep it, at a judgement within 1.5 s of its start, not with a later rep; the detector's total counts only the reps sent"
    )
    func firstRepsGoOutAtTheFirstJudgements() {
        let batches = Self.batches(Self.set, configuration: Self.gated(0.5))
        var started: SetEvent?
        var startTime = 0.0
        for batch in batches {
            for case .setStarted(let s) in batch.events where started == nil {
                started = s
                startTime = batch.time
            }
        }
        guard let started, let first = batches.first(where: { !reps($0.events).isEmpty }) else {
            Issue.record("no set started, or no rep sent: \(batches.map(\.events))")
            return
        }
        let all = batches.flatMap(\.events)
        // The first batch with reps holds the cycles the set counted at its start (and any counted since, held too);
        // it went out at a judgement, not with a rep of its own (a rep goes out 40–160 ms after it ends): its last rep
        // ended earlier than that, and the set's start went out within 1.5 s before (held until a later rep, they
        // would have waited a period, 3 s).
        let sent = reps(first.events)
        #expect(started.repCount >= 1 && sent.count >= started.repCount, "\(started), \(sent.count) sent")
        #expect(sent.allSatisfy { first.time - $0.timestamp > 0.2 }, "sent at \(first.time): \(sent.map(\.timestamp))")
        #expect(first.time > startTime && first.time - startTime < 1.5, "start \(startTime), reps \(first.time)")
        #expect(setCounts(all).map(\.live) == [12])
        // While the reps are held, the detector's total counts only those sent.
        var detector = RepDetector(configuration: Self.gated(0.5))
        var streamed: [WorkoutEvent] = []
        var sawHeld = false
        for sample in Self.set {
            detector.process(sample, into: &streamed)
            if detector.inSet {
                #expect(detector.totalReps == reps(streamed).count)
                if reps(streamed).isEmpty { sawHeld = true }
            }
        }
        #expect(sawHeld, "the set was open before its first reps went out")
    }

    @Test("with the gate off nothing is held: a set of two reps sends both and keeps them")
    func gateOffHoldsNothing() {
        var c = RepDetectorConfiguration()
        c.minimumExerciseLikelihood = 0
        let events = detect(sineSet(repCount: 2, frequency: 0.5, amplitude: 0.3), configuration: c)
        Self.expectConsistent(events)
        #expect(reps(events).count == 2)
        #expect(setCounts(events).map(\.final) == [2])
    }

    @Test("slow sets between fidgeting rests send consistent events with the gate on (default, three constant ones)")
    func eventsStayConsistent() {
        let up = Vector3(0, 0, 1), rate = 50.0
        var samples: [MotionSample] = []
        for n in 0..<3 {
            let reps = GeneratedMotion.asymmetricSet(
                count: 12, period: 3, amplitude: 0.18, start: 0, up: up, rate: rate, noise: 0.02, seed: UInt64(n))
            samples += GeneratedMotion.shifted(reps, after: samples, rate: rate)
            let rest = GeneratedMotion.fidget(
                amplitude: 0.04, seconds: 20, start: 0, up: up, rate: rate, seed: UInt64(n + 7))
            samples += GeneratedMotion.shifted(rest, after: samples, rate: rate)
        }
        let events = detect(samples)
        Self.expectConsistent(events)
        #expect(setCounts(events).map(\.final) == [12, 12, 12], "the default gate counts the three sets")
        for probability in [0.25, 0.35, 0.45] {
            let gated = detect(samples, configuration: Self.gated(probability))
            Self.expectConsistent(gated, "gate \(probability)")
            #expect(setCounts(gated).count >= 3, "gate \(probability): the three sets (and fidgets) start and end")
        }
    }

    @Test("held events wait in order, go out together on release, and a drop forgets them")
    func heldEventsKeepTheirOrder() {
        var held = HeldSetEvents()
        var out: [WorkoutEvent] = []
        held.startSet()
        held.hold()
        let start = WorkoutEvent.setStarted(SetEvent(setNumber: 1, timestamp: 0, repCount: 1))
        func rep(_ n: Int) -> WorkoutEvent {
            .rep(
                RepEvent(
                    setNumber: 1, repInSet: n, totalReps: n, timestamp: Double(n), duration: 1, amplitude: 0.2))
        }
        held.emit(start, into: &out)
        held.emit(rep(1), into: &out)
        #expect(out.isEmpty && held.heldReps == 1 && held.sentReps == 0)
        held.release(into: &out)
        #expect(out == [start, rep(1)] && held.sentReps == 1 && held.heldReps == 0 && !held.holding)
        held.emit(rep(2), into: &out)
        #expect(out.count == 3 && held.sentReps == 2)
        held.hold()
        held.emit(rep(3), into: &out)
        #expect(out.count == 3 && held.heldReps == 1)
        held.drop()
        #expect(held.heldReps == 0 && held.sentReps == 2)
        held.release(into: &out)
        #expect(out.count == 3)
    }
}

extension HeldSetEventsTests {
    /// A gate of two leaves on the motion's size (`log_rms`): motion above e^`logRMS` g RMS is judged 0.21 (below what
    /// a kept set must average), smaller motion 0.99.
    static func judgedBySize(below logRMS: Double) -> RepDetectorConfiguration {
        var c = RepDetectorConfiguration()
        c.exerciseGate = ExerciseGateModel(
            feature: [2, -1, -1], threshold: [logRMS, 0, 0], left: [1, 0, 0], right: [2, 0, 0],
            score: [0, log(0.99 / 0.01), log(0.21 / 0.79)])
        return c
    }

    /// 5 reps of 2 s, 0.15–0.3 g.
    static let shortSet = unsteadySet(count: 5, period: 2, sizes: 0.15...0.3)

    /// The events of each `process` call that sent any, in order, with the time of the sample it processed.
    static func batches(
        _ samples: [MotionSample], configuration: RepDetectorConfiguration
    ) -> [(time: Double, events: [WorkoutEvent])] {
        var detector = RepDetector(configuration: configuration)
        var batches: [(time: Double, events: [WorkoutEvent])] = []
        for sample in samples {
            var events: [WorkoutEvent] = []
            detector.process(sample, into: &events)
            if !events.isEmpty { batches.append((sample.timestamp, events)) }
        }
        var last: [WorkoutEvent] = []
        detector.finish(into: &last)
        if !last.isEmpty { batches.append((samples.last?.timestamp ?? 0, last)) }
        return batches
    }

    @Test(
        "a set whose judgements would dismiss it at its last rep, and whose judgements after that rep (the motion fading at the set's pace, judged 0.99) keep it at its end, sends the held rep just before its end and counts it"
    )
    func repHeldAtTheLastRepGoesOutWhenTheEndKeepsTheSet() {
        let batches = Self.batches(Self.shortSet, configuration: Self.judgedBySize(below: -1.875))
        let events = batches.flatMap(\.events)
        Self.expectConsistent(events)
        #expect(setCounts(events).map(\.final) == [5])
        #expect(setCounts(events).map(\.live) == [5])
        // Four reps went out as they came; the fifth waited and went out with the set's end, just before it, seconds
        // after its own time (the set ends 8 s after its last rep).
        let isEnd: (WorkoutEvent) -> Bool = { if case .setEnded = $0 { true } else { false } }
        guard let ending = batches.first(where: { $0.events.contains(where: isEnd) }) else {
            Issue.record("the set never ended: \(events)")
            return
        }
        #expect(reps(ending.events).map(\.repInSet) == [5])
        #expect(ending.events.count == 2)
        if let rep = reps(ending.events).first { #expect(ending.time - rep.timestamp > 5, "sent at \(ending.time)") }
        #expect(reps(events).count - reps(ending.events).count == 4)
    }

    @Test(
        "the same set, with the motion fading judged 0.21 as well (a lower size threshold), is dismissed at its end and its held rep is never sent"
    )
    func repHeldAtTheLastRepIsDroppedWhenTheEndDismissesTheSet() {
        let events = Self.batches(Self.shortSet, configuration: Self.judgedBySize(below: -2.0)).flatMap(\.events)
        Self.expectConsistent(events)
        #expect(setCounts(events).map(\.final) == [0])
        #expect(setCounts(events).map(\.live) == [4])
        #expect(reps(events).count == 4)
    }
}
