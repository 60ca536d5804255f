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

    @Test(
        "an event whose PUBACK never came while later ones did is overdue once it waited longer than the limit, and not before"
    )
    func overdue() {
        let start = ContinuousClock.now
        var window = InflightWindow(acked: 0)
        window.sent(id: 1, mid: 1, at: start)
        window.sent(id: 2, mid: 2, at: start + .seconds(1))
        window.sent(id: 3, mid: 3, at: start + .seconds(2))
        // Nothing acknowledged yet: a slow broker, not yet a lost acknowledgement (that takes twice the limit).
        #expect(window.overdue(now: start + .seconds(60), limit: .seconds(30)) == nil)
        window.acknowledged(mid: 2)
        window.acknowledged(mid: 3)
        #expect(window.overdue(now: start + .seconds(30), limit: .seconds(30)) == nil, "not past the limit yet")
        let late = window.overdue(now: start + .seconds(31), limit: .seconds(30))
        #expect(late?.id == 1 && late?.later == 2 && late?.waited == .seconds(31))
        #expect(window.watermark == 0, "the lost acknowledgement holds the progress")
        // Going on after the reset, from the watermark: the window judges only what went out after.
        window.reset()
        #expect(window.overdue(now: start + .seconds(100), limit: .seconds(30)) == nil)
        window.sent(id: 1, mid: 4, at: start + .seconds(100))
        window.acknowledged(mid: 4)
        #expect(window.watermark == 1, "event 1 acknowledged at last; 2 and 3 go out again after it")
    }

    @Test(
        "an event whose PUBACK never came, with nothing acknowledged after it (one in flight at a time), is overdue after twice the limit"
    )
    func overdueAlone() {
        let start = ContinuousClock.now
        var window = InflightWindow(acked: 0)
        window.sent(id: 1, mid: 1, at: start)
        window.acknowledged(mid: 1)
        window.sent(id: 2, mid: 2, at: start + .seconds(10))
        #expect(window.overdue(now: start + .seconds(70), limit: .seconds(30)) == nil, "twice the limit, not over")
        let late = window.overdue(now: start + .seconds(71), limit: .seconds(30))
        #expect(late?.id == 2 && late?.later == 0 && late?.waited == .seconds(61))
        #expect(window.watermark == 1)
    }

    @Test("acknowledged in order, nothing is overdue however long the connection lasts")
    func inOrderIsNeverOverdue() {
        let start = ContinuousClock.now
        var window = InflightWindow(acked: 0)
        for id in 1...5 {
            window.sent(id: Int64(id), mid: Int32(id), at: start + .seconds(id))
            window.acknowledged(mid: Int32(id))
        }
        #expect(window.overdue(now: start + .seconds(3600), limit: .seconds(30)) == nil)
        #expect(window.watermark == 5 && window.count == 0)
    }
}
