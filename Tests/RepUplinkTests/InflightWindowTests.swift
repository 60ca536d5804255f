import Testing

@testable import RepUplink

@Suite("the uplink's in-flight window")
struct InflightWindowTests {
    @Test("the watermark stays below the oldest unacknowledged id when PUBACKs come out of order")
    func outOfOrder() {
        var window = InflightWindow(acked: 10)
        for (id, mid) in [(11, 1), (12, 2), (13, 3)] { window.sent(id: Int64(id), mid: Int32(mid)) }
        #expect(window.watermark == 10)
        #expect(window.acknowledged(mid: 2) == 12)
        #expect(window.watermark == 10)
        window.acknowledged(mid: 1)
        #expect(window.watermark == 12)
        window.acknowledged(mid: 3)
        #expect(window.watermark == 13)
        #expect(window.count == 0)
    }

    @Test("ids that retention removed leave no hole in the watermark")
    func gaps() {
        var window = InflightWindow(acked: 4)
        window.sent(id: 5, mid: 1)
        window.sent(id: 9, mid: 2)
        window.acknowledged(mid: 1)
        #expect(window.watermark == 8)
        window.acknowledged(mid: 2)
        #expect(window.watermark == 9)
    }

    @Test("after a reset, what was in flight goes out again from the watermark, and an unknown mid is not an event")
    func reset() {
        var window = InflightWindow(acked: 0)
        window.sent(id: 1, mid: 7)
        window.sent(id: 2, mid: 8)
        window.acknowledged(mid: 7)
        window.reset()
        #expect(window.count == 0)
        #expect(window.lastSent == 1)
        #expect(window.watermark == 1)
        #expect(window.acknowledged(mid: 8) == nil)
    }
}
