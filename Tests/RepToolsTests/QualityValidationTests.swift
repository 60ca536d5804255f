import RepDetection
import RepTools
import Testing

@Suite("per-rep quality against generated barbell sets")
struct QualityValidationTests {
    @Test("at 100 Hz with 10° of bar tilt and 0.02 g bias, squat, bench and deadlift sets from 0.3 and 1.5 m/s meet the goals: mean velocity ≤ 0.03 m/s and ROM ≤ 2 cm RMS, velocity loss within 3 points")
    func goalsOnASmallGrid() {
        let outcomes = QualityValidation.grid(quick: true).map { QualityValidation.run($0) }
        let summary = QualityValidation.Summary(outcomes)
        #expect(summary.sets == 6)
        #expect(summary.matched == summary.trueReps, "every rep measured: \(summary.matched) of \(summary.trueReps)")
        #expect(summary.velocityRMS <= 0.03, "mean concentric velocity RMS \(summary.velocityRMS) m/s")
        #expect(summary.liveVelocityRMS <= 0.03, "live: \(summary.liveVelocityRMS) m/s")
        #expect(summary.romRMS <= 0.02, "range of motion RMS \(summary.romRMS) m")
        #expect(summary.lossMaximum <= 3, "velocity loss off by up to \(summary.lossMaximum) points")
    }

    @Test("without a gyro, the length of the acceleration beats its projection on gravity when the bar tilts 10°")
    func magnitudeBeatsProjectionUnderTilt() {
        let grid = QualityValidation.grid(quick: true)
        let magnitude = QualityValidation.Summary(grid.map { QualityValidation.run($0) })
        let projection = QualityValidation.Summary(grid.map { QualityValidation.run($0, method: .projection) })
        #expect(magnitude.romRMS < projection.romRMS, "ROM RMS \(magnitude.romRMS) vs \(projection.romRMS) m")
    }
}
