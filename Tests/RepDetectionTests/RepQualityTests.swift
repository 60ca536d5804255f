import MotionCore
import MotionSimulation
import RepDetection
import Testing

/// The figures of each rep: `rep` events' live ones and the final ones in `setEnded`.
private func qualities(_ events: [WorkoutEvent]) -> (live: [RepQuality?], final: [SetQuality]) {
    var live: [RepQuality?] = [], final: [SetQuality] = []
    for event in events {
        switch event {
        case .rep(let r): live.append(r.quality)
        case .setEnded(let s): if let q = s.quality { final.append(q) }
        case .setStarted: break
        }
    }
    return (live, final)
}

private func configuration(_ placement: SensorPlacement) -> RepDetectorConfiguration {
    var c = RepDetectorConfiguration()
    c.placement = placement
    return c
}

@Suite("per-rep quality")
struct RepQualityTests {
    @Test("phase rules: a rep of constant velocities has exactly their durations, range and mean concentric velocity")
    func kinematicsOfSteps() throws {
        // At 1 kHz: 0.5 s still, down at 0.5 m/s for 1 s, 0.3 s still, up at 1 m/s for 0.5 s, 0.5 s still.
        var t: [Double] = [], v: [Double] = [], p: [Double] = []
        var position = 0.0
        for i in 0..<2800 {
            let time = Double(i) / 1000
            let velocity = time >= 0.5 && time < 1.5 ? -0.5 : time >= 1.8 && time < 2.3 ? 1.0 : 0
            t.append(time)
            v.append(velocity)
            p.append(position)
            position += velocity / 1000
        }
        let m = try #require(RepKinematics.measure(times: t, velocity: v, position: p))
        #expect(m.startsAtTop)
        #expect(abs(m.rangeOfMotion - 0.5) < 0.002)
        let c = try #require(m.concentric), e = try #require(m.eccentric)
        #expect(abs(c.end - c.start - 0.5) < 0.002 && abs(e.end - e.start - 1.0) < 0.002)
        #expect(abs(c.mean - 1.0) < 0.005 && abs(c.peak - 1.0) < 1e-9)
        #expect(abs((m.turnaroundPause ?? 0) - 0.3) < 0.002)
    }

    @Test(
        "a squat set measured on the bar at 100 Hz: every rep's mean velocity and range of motion near the truth, live and at the set's end"
    )
    func squatOnTheBar() throws {
        var generator = BarbellGenerator()
        generator.reps = 5
        generator.firstMeanVelocity = 0.7
        generator.tiltDegrees = 5
        let set = generator.generate()
        var detector = RepDetector(configuration: configuration(.bar))
        var events: [WorkoutEvent] = []
        detector.process(set.samples, into: &events)
        detector.finish(into: &events)
        let (live, final) = qualities(events)
        let measured = try #require(final.first)
        #expect(
            live.count == 5 && measured.reps.count == 5,
            "5 reps, each measured: \(live.count) live, \(measured.reps.count) final")
        for (truth, q) in zip(set.reps, measured.reps) {
            let t = try #require(truth.quality.velocity), v = try #require(q.velocity)
            #expect(
                abs(v.meanConcentric - t.meanConcentric) < 0.05,
                "mean velocity \(v.meanConcentric) vs \(t.meanConcentric)")
            #expect(abs(v.rangeOfMotion - t.rangeOfMotion) < 0.04, "range \(v.rangeOfMotion) vs \(t.rangeOfMotion)")
            #expect(q.startsAtTop == true && q.eccentric != nil && q.concentric != nil)
        }
        for (truth, q) in zip(set.reps, live) {
            let v = try #require(q?.velocity, "a live rep on the bar has velocities")
            #expect(abs(v.meanConcentric - truth.quality.velocity!.meanConcentric) < 0.05)
        }
        #expect(
            abs((measured.velocityLoss ?? 0) - set.velocityLoss) < 3,
            "velocity loss \(measured.velocityLoss ?? -1) vs \(set.velocityLoss)")
        #expect(
            measured.reps.dropFirst().allSatisfy { $0.pauseTop != nil },
            "every rep after the first has its pause at the top")
    }

    @Test("a deadlift starts at the bottom: concentric first, its pause on the floor before each rep")
    func deadliftStartsAtTheBottom() throws {
        var generator = BarbellGenerator()
        generator.lift = .deadlift
        generator.reps = 4
        let events = detect(generator.generate().samples, configuration: configuration(.bar))
        let measured = try #require(qualities(events).final.first)
        #expect(measured.reps.count == 4)
        #expect(measured.reps.allSatisfy { $0.startsAtTop == false })
        #expect(measured.reps.dropFirst().allSatisfy { $0.pauseBottom != nil })
    }

    @Test("on the wrist (the default) a rep gets its tempo only: no velocity, no range of motion, no excuse")
    func wristTempoOnly() throws {
        let events = detect(BarbellGenerator().generate().samples)
        let (live, final) = qualities(events)
        #expect(!live.isEmpty)
        for q in live + (final.first?.reps ?? []) {
            let q = try #require(q)
            #expect(q.velocity == nil && q.velocityUnavailable == nil)
            #expect(q.concentric != nil && q.eccentric != nil)
        }
        #expect(final.first?.velocityLoss == nil)
    }

    @Test("at 12.5 Hz a sensor on the bar gets no velocity, and the reps and the set say why")
    func lowRate() throws {
        var generator = BarbellGenerator()
        generator.sampleRate = 12.5
        let events = detect(generator.generate().samples, configuration: configuration(.bar))
        let (live, final) = qualities(events)
        #expect(!live.isEmpty)
        for q in live { #expect(q?.velocity == nil && q?.velocityUnavailable == "sample rate too low") }
        let set = try #require(final.first)
        #expect(set.velocityUnavailable == "sample rate too low" && set.velocityLoss == nil)
    }

    @Test("measuring quality changes no count and no rep time")
    func countsUnchanged() {
        let samples =
            BarbellGenerator().generate().samples + WorkoutGenerator.demo.generate().samples.map { $0.shifted(by: 60) }
        func strip(_ events: [WorkoutEvent]) -> [WorkoutEvent] {
            events.map { event in
                switch event {
                case .rep(var r): r.quality = nil; return .rep(r)
                case .setEnded(var s): s.quality = nil; return .setEnded(s)
                case .setStarted: return event
                }
            }
        }
        #expect(
            strip(detect(samples, configuration: configuration(.bar)))
                == strip(detect(samples, configuration: configuration(.arm))))
    }
}
