import Foundation
import MotionCore
import MotionSimulation
import Testing

@testable import RepDetection

@Suite("SignalHistory: recent points and their periodicity")
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

    @Test("after the ring has wrapped, a time range yields exactly its points, oldest first")
    func rangeAfterWrapping() {
        // 64 points a second for 3 s in a ring of 64: only the last second is kept, and it spans the wrap.
        var history = SignalHistory(capacity: 64, spacing: 0.005, periodicityPeriods: 3)
        for i in 0..<192 { history.append(time: Double(i) / 64, value: Double(i)) }
        var seen: [Double] = []
        history.forEach(in: 2.25..<2.5) { time, value in
            #expect(value == time * 64)
            seen.append(value)
        }
        #expect(seen == Array(stride(from: 144.0, to: 160, by: 1)))
        var all: [Double] = []
        history.forEach(in: 0..<10) { _, value in all.append(value) }
        #expect(all == Array(stride(from: 128.0, to: 192, by: 1)))
        var none = 0
        history.forEach(in: 1..<1.99) { _, _ in none += 1 }
        #expect(none == 0)
    }

    @Test("periodicity is the same whether the span to compare sits at the start of the ring or after it wrapped")
    func periodicityAfterWrapping() {
        // Growing and shrinking, so that comparing the wrong stretch would give another value.
        let wave = { (t: Double) in
            (1 + 0.5 * sin(t / 2)) * (sin(2 * .pi * t / 1.3) + 0.4 * sin(4 * .pi * t / 1.3 + 1))
        }
        var short = Self.history(seconds: 8, rate: 100, wave)
        // 60 s in a ring of 8192 points 5 ms apart (41 s): it has wrapped, with 52 s of signal before the span.
        var long = Self.history(seconds: 60, rate: 100) { t in wave(t - 52) }
        let expected = short.periodicity(endingAt: 8, period: 1.3)
        let measured = long.periodicity(endingAt: 60, period: 1.3)
        #expect(expected ?? 0 > 0.8)
        #expect(abs((measured ?? 0) - (expected ?? 1)) < 1e-9, "\(String(describing: measured)) vs \(String(describing: expected))")
    }
}
