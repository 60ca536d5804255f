/// The events sent to the broker and not yet acknowledged, and from them the newest id up to which every event
/// is acknowledged (the id the uplink stores and resumes after).
///
/// Events go out in id order; PUBACKs may come in any order. Ids may jump (retention pruned what was between), so
/// the watermark is "just below the oldest unacknowledged id", or the last id sent when nothing is pending.
///
/// A PUBACK that never comes (a broker that lost it) holds the watermark, and every later id waits in `pending`
/// until the connection ends: `overdue(now:limit:)` tells the worker when to end it.
struct InflightWindow {
    private var idByMID: [Int32: Int64] = [:]
    /// Sent ids, oldest first, not yet acknowledged (some after the first may be).
    private var pending: [Int64] = []
    /// When each of `pending` was sent, in the same order.
    private var sentAt: [ContinuousClock.Instant] = []
    private var ackedOutOfOrder: Set<Int64> = []
    /// The newest id sent (or, before anything was sent, the stored watermark).
    private(set) var lastSent: Int64

    /// A window resuming after `acked`.
    init(acked: Int64) { lastSent = acked }

    /// Events in flight.
    var count: Int { idByMID.count }

    /// Every id up to this one is acknowledged.
    var watermark: Int64 { pending.first.map { $0 - 1 } ?? lastSent }

    /// Event `id` went out as message `mid`, at `time`.
    mutating func sent(id: Int64, mid: Int32, at time: ContinuousClock.Instant = .now) {
        precondition(id > lastSent, "events go out in id order")
        idByMID[mid] = id
        pending.append(id)
        sentAt.append(time)
        lastSent = id
    }

    /// The oldest unacknowledged event, when its acknowledgement is lost: the broker acknowledged events sent after it
    /// and it went out more than `limit` before `now` (a broker acknowledges in the order it received: MQTT 3.1.1
    /// and 5, 4.6), or it went out more than twice `limit` before `now` (nothing was sent after it, or nothing after
    /// it was acknowledged either: one event in flight at a time, or a broker that takes one at a time). Its id, how
    /// long ago it was sent, and how many later events were acknowledged.
    func overdue(now: ContinuousClock.Instant, limit: Duration) -> (id: Int64, waited: Duration, later: Int)? {
        guard let id = pending.first, let time = sentAt.first else { return nil }
        let waited = now - time
        guard waited > (ackedOutOfOrder.isEmpty ? limit * 2 : limit) else { return nil }
        return (id, waited, ackedOutOfOrder.count)
    }

    /// The event id sent as message `mid` and not yet acknowledged (nil for a message that is not an event).
    func eventID(mid: Int32) -> Int64? { idByMID[mid] }

    /// The broker acknowledged message `mid`; returns the event's id (nil for a message that is not an event,
    /// such as the status).
    @discardableResult
    mutating func acknowledged(mid: Int32) -> Int64? {
        guard let id = idByMID.removeValue(forKey: mid) else { return nil }
        if pending.first == id {
            pending.removeFirst()
            sentAt.removeFirst()
            while let first = pending.first, ackedOutOfOrder.remove(first) != nil {
                pending.removeFirst()
                sentAt.removeFirst()
            }
        } else {
            ackedOutOfOrder.insert(id)
        }
        return id
    }

    /// The connection ended: whatever was in flight goes out again after the watermark.
    mutating func reset() {
        let mark = watermark
        idByMID = [:]
        pending = []
        sentAt = []
        ackedOutOfOrder = []
        lastSent = mark
    }
}
