import RepDetection
import RepTools
import Testing

@Suite("per-rep quality against generated barbell sets")
struct QualityValidationTests {
    /// The goals, checked on `outcomes` grouped by each dimension's value (a pooled figure could hide one bad rate,
    /// tilt, bias, lift or speed), and pooled: what misses them, one line each. `unmeasured`: the share of reps a
    /// group may leave without figures.
    static func missedGoals(_ outcomes: [QualityValidation.Outcome], unmeasured: Double) -> [String] {
        let groups: [(QualityValidation.Condition) -> String] = [
            { "\(Int($0.rate)) Hz" }, { "tilt \(Int($0.tiltDegrees))°" }, { "bias \($0.bias) g" }, { $0.lift.rawValue },
            { "\($0.velocity) m/s" }, { _ in "all" },
        ]
        var missed: [String] = []
        for key in groups {
            for value in Set(outcomes.map { key($0.condition) }).sorted() {
                let s = QualityValidation.Summary(outcomes.filter { key($0.condition) == value })
                if Double(s.trueReps - s.matched) > unmeasured * Double(s.trueReps) {
                    missed.append("\(value): \(s.matched) of \(s.trueReps) reps measured")
                }
                if !(s.velocityRMS <= 0.03) {
                    missed.append("\(value): mean concentric velocity RMS \(s.velocityRMS) m/s")
                }
                if !(s.liveVelocityRMS <= 0.03) { missed.append("\(value): live \(s.liveVelocityRMS) m/s") }
                if !(s.romRMS <= 0.02) { missed.append("\(value): range of motion RMS \(s.romRMS) m") }
                if s.lossSets < s.sets || !(s.lossMaximum <= 3) {
                    missed.append(
                        "\(value): velocity loss off by up to \(s.lossMaximum) points in \(s.lossSets) of \(s.sets) sets"
                    )
                }
            }
        }
        return missed
    }

    @Test(
        "on the 216 sets of docs/QUALITY.md at 100–1600 Hz, each rate, tilt (0, 5, 10°), bias (0, 0.02 g), lift and speed (0.3, 0.8, 1.5 m/s) meets the goals on its own: mean velocity ≤ 0.03 m/s and ROM ≤ 2 cm RMS, velocity loss within 3 points, at most 2 % of reps unmeasured; tempo within 0.02 s RMS"
    )
    func goalsOnTheGrid() {
        let grid = QualityValidation.grid(quick: false).filter { $0.rate >= 100 }
        #expect(grid.count == 216)
        let outcomes = grid.map { QualityValidation.run($0) }
        let missed = Self.missedGoals(outcomes, unmeasured: 0.02)
        #expect(missed.isEmpty, "\(missed.joined(separator: "\n"))")
        // The issue sets no goal for the tempo; this guards what was measured (0.004–0.007 s, docs/QUALITY.md).
        let s = QualityValidation.Summary(outcomes)
        for (name, rms) in [
            ("concentric", s.concentricRMS), ("eccentric", s.eccentricRMS), ("pause bottom", s.pauseBottomRMS),
            ("pause top", s.pauseTopRMS),
        ] {
            #expect(rms <= 0.02, "\(name) RMS \(rms) s")
        }
    }

    // Since 2026-12-02 (the detector begins a set's cycles at its first rest, and no longer takes a paused squat's
    // cycle for a pair of lunges), reps paused 1 s and a bar that moves at rest meet the goals in every group.
    @Test(
        "paused (1 s) and moving-rest sets meet the goals: each style on 18 sets covering every rate, tilt, bias, lift and speed",
        arguments: [QualityValidation.Style.paused(1), .restMotion(0.01)])
    func pausedAndMovingRestMeetTheGoals(style: QualityValidation.Style) {
        let outcomes = QualityValidation.coveringGrid(style: style).map { QualityValidation.run($0) }
        let missed = Self.missedGoals(outcomes, unmeasured: 0.02)
        #expect(missed.isEmpty, "\(missed.joined(separator: "\n"))")
    }

    @Test(
        "touch-and-go and paused (2 s) sets miss the goals (docs/QUALITY.md says so), by no more than measured: each style on 18 sets covering every rate, tilt, bias, lift and speed",
        arguments: [QualityValidation.Style.touchAndGo, .paused(2)])
    func otherStylesMissTheGoals(style: QualityValidation.Style) {
        let outcomes = QualityValidation.coveringGrid(style: style).map { QualityValidation.run($0) }
        withKnownIssue(
            "repd still windows some touch-and-go reps and reps paused 2 s from turnaround to turnaround (deadlifts most), and leaves more than 2 % of some groups' reps unmeasured (docs/QUALITY.md)"
        ) {
            let missed = Self.missedGoals(outcomes, unmeasured: 0.02)
            #expect(missed.isEmpty, "\(missed.joined(separator: "\n"))")
        }
        // How far they miss, bounded (measured 2026-12-06, all 18 sets of each style together: touch-and-go 104 of 108
        // reps measured, mean velocity RMS 0.020 m/s, ROM RMS 0.033 m, velocity loss off by up to 4.9 points; paused
        // 2 s 105 of 108, 0.016 m/s, 0.011 m, 7.7 points): a change that makes them miss by much more fails here.
        let s = QualityValidation.Summary(outcomes)
        print(
            "quality, \(style): \(s.matched) of \(s.trueReps) reps measured, velocity RMS \(s.velocityRMS) m/s (live \(s.liveVelocityRMS)), ROM RMS \(s.romRMS) m, loss off by up to \(s.lossMaximum) points in \(s.lossSets) of \(s.sets) sets"
        )
        #expect(Double(s.matched) >= 0.95 * Double(s.trueReps), "\(s.matched) of \(s.trueReps) reps measured")
        #expect(
            s.velocityRMS <= 0.03 && s.liveVelocityRMS <= 0.03,
            "velocity RMS \(s.velocityRMS), live \(s.liveVelocityRMS)")
        #expect(s.romRMS <= 0.05, "ROM RMS \(s.romRMS) m")
        #expect(
            s.lossSets == s.sets && s.lossMaximum <= 10,
            "loss off by up to \(s.lossMaximum) in \(s.lossSets) of \(s.sets)")
    }

    @Test("without a gyro, the length of the acceleration beats its projection on gravity when the bar tilts 10°")
    func magnitudeBeatsProjectionUnderTilt() {
        let grid = QualityValidation.grid(quick: true)
        let magnitude = QualityValidation.Summary(grid.map { QualityValidation.run($0) })
        let projection = QualityValidation.Summary(grid.map { QualityValidation.run($0, method: .projection) })
        #expect(magnitude.romRMS < projection.romRMS, "ROM RMS \(magnitude.romRMS) vs \(projection.romRMS) m")
    }
}
