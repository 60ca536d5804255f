import Foundation
import MotionCore
import Testing

@testable import RepDetection

@Suite("SignalHistory's periodicity measure")
struct SignalHistoryTests {
    /// `seconds` of `value(t)` at `rate` Hz in a history that holds 40 s.
    static func history(seconds: Double, rate: Double, _ value: (Double) -> Double) -> SignalHistory {
        var history = SignalHistory(capacity: 8192, spacing: 0.005, periodicityPeriods: 3)
        for i in 0...Int(seconds * rate) {
            let t = Double(i) / rate
            history.append(time: t, value: value(t))
        }
        return history
    }

    @Test("a repeating wave correlates with itself one period earlier", arguments: [12.5, 100, 1600])
    func repeatingWave(rate: Double) {
        // Not a pure sine: a sharp push and a slow return, repeated every 1.3 s.
        var history = Self.history(seconds: 8, rate: rate) { t in
            let phase = t.truncatingRemainder(dividingBy: 1.3) / 1.3
            return phase < 0.25 ? sin(.pi * phase / 0.25) : -0.3 * sin(.pi * (phase - 0.25) / 0.75)
        }
        #expect(history.periodicity(endingAt: 8, period: 1.3) ?? 0 > 0.95)
        // The period handed in is measured from swing times and may be off; lags of 0.75–1.25 periods are searched.
        #expect(history.periodicity(endingAt: 8, period: 1.5) ?? 0 > 0.9)
    }

    @Test("noise does not correlate with itself one period earlier", arguments: [UInt64(1), 2, 3])
    func noise(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        // Noise smoothed a little, as the detector's own signal is, so that it swings like a fidget.
        var smooth = 0.0
        var history = Self.history(seconds: 8, rate: 100) { _ in
            smooth += 0.2 * (random.nextGaussian(standardDeviation: 0.1) - smooth)
            return smooth
        }
        #expect(history.periodicity(endingAt: 8, period: 1.0) ?? 1 < 0.4)
    }

    @Test("with less than two periods to compare it cannot judge and says so (nil)")
    func tooShort() {
        var history = Self.history(seconds: 3, rate: 100) { t in sin(2 * .pi * t) * (t < 1.5 ? 1 : -0.2) }
        #expect(history.periodicity(endingAt: 3, period: 1.2) == nil)
        var empty = SignalHistory(capacity: 64, spacing: 0.005, periodicityPeriods: 3)
        #expect(empty.periodicity(endingAt: 3, period: 1) == nil)
    }
}
