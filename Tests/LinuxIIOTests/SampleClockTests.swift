@testable import LinuxIIO
import MotionCore
import Testing

@Suite("Sample timing")
struct SampleClockTests {
    private func samples(_ times: [Double]) -> [MotionSample] {
        times.map { MotionSample(timestamp: $0, ax: 0, ay: 0, az: 1) }
    }

    private func close(_ a: [MotionSample], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { abs($0.timestamp - $1) < 1e-9 }
    }

    @Test(
        "device timestamps that are 0, repeat or go backwards in the first records are replaced by host times",
        arguments: [[0.0, 0, 0, 0], [5.0, 5, 5, 5], [5.0, 5.01, 5.0, 5.03], [-1.0, 0.01, 0.02, 0.03]])
    func refused(_ times: [Double]) {
        var clock = SampleClock(deviceTimestamps: true, rate: 100)
        var batch = samples(times)
        #expect(clock.stamp(&batch, from: 0, readAt: 1000))
        #expect(clock.source == .host)
        #expect(close(batch, [999.97, 999.98, 999.99, 1000]), "spread back from the read at 100 Hz: \(batch)")
        // The next read continues after the last time given, even if it comes sooner than its records' spacing.
        var next = samples([0, 0])
        #expect(!clock.stamp(&next, from: 0, readAt: 1000.005))
        #expect(next[0].timestamp > 1000 && next[1].timestamp == 1000.005)
    }

    @Test("advancing device timestamps are kept, and judged over reads before any sample is let through")
    func accepted() {
        var clock = SampleClock(deviceTimestamps: true, rate: 100)
        var batch = samples([10.00, 10.01])
        #expect(!clock.stamp(&batch, from: 0, readAt: 1000))
        #expect(!clock.decided, "two records are not enough to judge")
        batch += samples([10.02, 10.03])
        #expect(clock.stamp(&batch, from: 2, readAt: 1000.02))
        #expect(clock.source == .device)
        #expect(batch.map(\.timestamp) == [10.00, 10.01, 10.02, 10.03])
    }

    @Test("records without a timestamp channel are timed on the host from the start")
    func noChannel() {
        var clock = SampleClock(deviceTimestamps: false, rate: 50)
        #expect(clock.decided && clock.source == .host)
        var batch = samples([0, 0, 0])
        _ = clock.stamp(&batch, from: 0, readAt: 20)
        #expect(close(batch, [19.96, 19.98, 20]))
    }
}
