/// When this run of repd journaled its events, by a clock that only moves forward (the system's uptime,
/// `CLOCK_BOOTTIME`), so that retention by age does not go by the wall clock alone.
///
/// An event's `wall` is the wall clock when it was journaled. A board with no clock of its own (a Raspberry Pi)
/// starts with the time it last saved, days or months behind, until a time server is reached: the events of a workout
/// before that carry the old date, and once the clock is set forward, age retention (`journal.max_age_days`) took them
/// for old events and deleted them within the hour, before anyone (the uplink, a station's history) had them. The
/// timeline marks, now and then, the newest id against the uptime; retention by age then deletes only events this run
/// journaled at least that long ago by the uptime, besides those of earlier runs (which only the wall clock dates).
///
/// Marks are kept only back to the newest one older than the age limit: a few hundred for a month of hourly marks.
public struct AppendTimeline: Sendable {
    /// The newest id journaled before this run (its events are dated by the wall clock alone).
    public let newestBeforeRun: Int64
    /// (uptime in seconds, newest id journaled by then), oldest first.
    private var marks: [(uptime: Double, newestID: Int64)]

    /// A timeline that starts at `uptime`, when the journal held ids up to `newestID`.
    public init(uptime: Double, newestID: Int64) {
        newestBeforeRun = newestID
        marks = [(uptime, newestID)]
    }

    /// Notes that ids up to `newestID` were journaled by `uptime` (never earlier than the last mark).
    public mutating func mark(uptime: Double, newestID: Int64) {
        // Never empty (made with one mark; dropping keeps the newest old one). A mark with nothing journaled since
        // the last changes nothing: the older one says more.
        let last = marks[marks.count - 1]
        guard uptime >= last.uptime, newestID > last.newestID else { return }
        marks.append((uptime, newestID))
    }

    /// The newest id that may be deleted for its age `age` (seconds) at `uptime`: every event of this run above it
    /// was journaled less than `age` ago by the uptime, whatever its `wall` says. At least `newestBeforeRun`. Drops
    /// the marks no later call needs (those before the newest one at least `age` old).
    public mutating func newestDeletableByAge(age: Double, uptime: Double) -> Int64 {
        let cutoff = uptime - age
        guard let newestOld = marks.lastIndex(where: { $0.uptime <= cutoff }) else { return newestBeforeRun }
        let id = marks[newestOld].newestID
        if newestOld > 0 { marks.removeFirst(newestOld) }
        return max(id, newestBeforeRun)
    }

    /// How many marks are kept (tests).
    public var markCount: Int { marks.count }
}
