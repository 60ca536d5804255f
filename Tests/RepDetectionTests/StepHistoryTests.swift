import Foundation
import Testing

@testable import RepDetection

@Suite("StepHistory's walking measures")
struct StepHistoryTests {
    /// `seconds` of motion at `rate` Hz, gravity along z: `vertical(t)` along z, `across(t)` along x; the principal
    /// axis signal is whichever of the two is larger at each moment, as the detector's projection would roughly be.
    static func history(
        seconds: Double, rate: Double, vertical: (Double) -> Double, across: (Double) -> Double
    ) -> StepHistory {
        // As the detector does: a point every 40 ms, or every sample when they come further apart.
        var history = StepHistory(seconds: 8, spacing: 0.04, periods: 3)
        var next = -Double.infinity
        for i in 0...Int(seconds * rate) {
            let t = Double(i) / rate
            guard t >= next else { continue }
            next = t + 0.04
            let v = vertical(t), h = across(t)
            history.append(time: t, value: abs(h) > abs(v) ? h : v, motion: (h, 0, v), down: (0, 0, 1))
        }
        return history
    }

    @Test("walking counted per stride: the bounce repeats every half period", arguments: [12.5, 100, 1600])
    func strideLikeWalking(rate: Double) throws {
        // The arm swings once per 1.05 s stride (across); the body bounces at each of its two steps (vertical).
        var history = Self.history(
            seconds: 8, rate: rate, vertical: { 0.2 * cos(2 * .pi * 2 * $0 / 1.05) },
            across: { 0.3 * sin(2 * .pi * $0 / 1.05) })
        let result = history.measure(endingAt: 8, period: 1.05)
        let measure = try #require(result)
        #expect(measure.strideLikeness > 0.95)
        #expect(measure.verticalShare > 0.3)
    }

    @Test(
        "walking counted per step: the bounce repeats every period, the arm swings back on the next step",
        arguments: [12.5, 100, 1600])
    func stepLikeWalking(rate: Double) throws {
        // Steps every 0.6 s bounce alike; the arm swings once per two steps.
        var history = Self.history(
            seconds: 6, rate: rate, vertical: { 0.3 * cos(2 * .pi * $0 / 0.6) },
            across: { 0.1 * sin(2 * .pi * $0 / 1.2) })
        let result = history.measure(endingAt: 6, period: 0.6)
        let measure = try #require(result)
        #expect(measure.periodSimilarity > 0.95)
        #expect(measure.acrossPeriodSimilarity < -0.95)
        #expect(measure.stepLikeness > 0.95)
    }

    @Test(
        "a rep moves down and up once per period and repeats every way: not like walking", arguments: [12.5, 100, 1600])
    func repIsNotWalking(rate: Double) throws {
        // A squat with the wrist tilting: 2 s reps, vertical and across motion in step.
        var history = Self.history(
            seconds: 10, rate: rate, vertical: { 0.25 * sin(2 * .pi * $0 / 2) },
            across: { 0.08 * sin(2 * .pi * $0 / 2 + 0.4) })
        let result = history.measure(endingAt: 10, period: 2)
        let measure = try #require(result)
        #expect(measure.strideLikeness < -0.95)
        #expect(measure.stepLikeness < -0.95)
        #expect(measure.verticalShare > 0.85)
    }

    @Test("the measures need two periods of motion, and a gap clears it")
    func needsMotion() {
        var short = Self.history(seconds: 1.5, rate: 100, vertical: { sin(2 * .pi * $0) }, across: { _ in 0 })
        let tooShort = short.measure(endingAt: 1.5, period: 1)
        #expect(tooShort == nil)
        var cleared = Self.history(seconds: 6, rate: 100, vertical: { sin(2 * .pi * $0) }, across: { _ in 0 })
        cleared.removeAll()
        let afterGap = cleared.measure(endingAt: 6, period: 1)
        #expect(afterGap == nil)
    }
}
