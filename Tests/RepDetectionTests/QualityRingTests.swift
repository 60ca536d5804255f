import MotionCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@testable import RepDetection

@Suite("The per-rep quality's sample ring")
struct QualityRingTests {
    /// Records `seconds` of still samples at `rate` and returns the ring's size.
    private func capacityAfter(seconds: Double, rate: Double) -> Int {
        var analyzer = RepQualityAnalyzer(placement: .bar, method: .magnitude, minimumVelocityRate: 40)
        let n = Int(seconds * rate)
        for i in 0..<n { analyzer.record(MotionSample(timestamp: 100 + Double(i) / rate, ax: 0, ay: 0, az: 1)) }
        return analyzer.capacity
    }

    @Test(
        "the ring grows only to hold a minute of samples, at most 2^16",
        arguments: [(12.5, 1 << 12), (100.0, 1 << 13), (400.0, 1 << 15), (1600.0, 1 << 16)])
    func sizedByTime(rate: Double, expected: Int) {
        #expect(capacityAfter(seconds: 150, rate: rate) == expected)
    }

    @Test("a ring that grew still holds the last minute: a rep 50 s back is measured")
    func keepsSamplesAcrossGrowth() throws {
        var analyzer = RepQualityAnalyzer(placement: .bar, method: .magnitude, minimumVelocityRate: 40)
        let rate = 100.0
        // Still for 10 s, one 2 s rep (the bar 0.4 m up and back: x = h(1 − cos 2πt/T)/2), then still for 50 s;
        // the ring grows from 2^12 (41 s) to 2^13 on the way.
        var t = 0.0
        func add(_ az: Double) {
            analyzer.record(MotionSample(timestamp: t, ax: 0, ay: 0, az: az))
            t += 1 / rate
        }
        for _ in 0..<1000 { add(1) }
        let repStart = t
        let height = 0.4, period = 2.0
        let peak = height / 2 * (2 * Double.pi / period) * (2 * Double.pi / period) / 9.80665  // g
        for i in 0..<200 { add(1 + peak * cos(2 * Double.pi * Double(i) / 200)) }
        let repEnd = t
        for _ in 0..<5000 { add(1) }
        #expect(analyzer.capacity == 1 << 13)
        let result = analyzer.measure(start: repStart, end: repEnd, period: 2, fixedStart: false)
        #expect(result != nil, "the rep's samples are still held after the ring grew")
    }

    @Test(
        "a ring that grows after it wrapped (a gap in the samples) holds only what it held: no empty slots count as samples"
    )
    func growsAfterWrapping() {
        var analyzer = RepQualityAnalyzer(placement: .bar, method: .magnitude, minimumVelocityRate: 40)
        // 20 s at 100 Hz, then the sensor is away for 50 s, then 45 s more: at 4096 samples the oldest is 91 s
        // old (the ring wraps without growing); at 6096 the sample about to go is 41 s old and the ring grows.
        for i in 0..<2000 { analyzer.record(MotionSample(timestamp: Double(i) / 100, ax: 0, ay: 0, az: 1)) }
        for i in 0..<4500 { analyzer.record(MotionSample(timestamp: 70 + Double(i) / 100, ax: 0, ay: 0, az: 1)) }
        #expect(analyzer.capacity == 1 << 13)
        #expect(analyzer.oldestTimestamp == 70, "the first 2000 samples were overwritten before the ring grew")
        #expect(analyzer.measure(start: 5, end: 7, period: 2, fixedStart: false) == nil)
    }
}
