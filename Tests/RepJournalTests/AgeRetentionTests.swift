import Foundation
import Testing

@testable import RepJournal

/// Age retention after the wall clock was set forward: a board without a clock of its own journals a workout dated
/// by the time it last saved, then reaches a time server; those events are minutes old, not months.
@Suite("Age retention goes by the uptime for this run's events")
struct AgeRetentionTests {
    private static let day = 86_400.0

    @Test("events of this run journaled less than max_age ago by the uptime are kept, whatever their wall time")
    func misdatedEventsOfThisRunAreKept() throws {
        let journal = try EventJournal(path: scratchDirectory() + "/events.db", station: "a")
        // An earlier run's events, truly old (day 0), and a few of this run dated day 1 by a clock 40 days behind.
        for _ in 1...4 { _ = try journal.append(type: "rep", json: "{}", wall: 0) }
        var timeline = AppendTimeline(uptime: 100, newestID: try journal.newestID)
        for _ in 1...3 { _ = try journal.append(type: "rep", json: "{}", wall: Self.day) }
        // The clock is set to day 41; an hour of uptime later retention runs with max_age 30 days.
        timeline.mark(uptime: 3700, newestID: try journal.newestID)
        let deletable = timeline.newestDeletableByAge(age: 30 * Self.day, uptime: 3700)
        #expect(deletable == 4)
        let cutoff = 41 * Self.day - 30 * Self.day
        #expect(try journal.countDated(before: cutoff, above: deletable) == 3)
        #expect(try journal.prune(olderThan: cutoff, maxRows: nil, ageDeletableThrough: deletable) == 4)
        #expect(try journal.events(after: 0, limit: 100).map(\.id) == [5, 6, 7])
        // Without the timeline (as before) the workout went too.
        #expect(try journal.prune(olderThan: cutoff, maxRows: nil) == 3)
        #expect(try journal.events(after: 0, limit: 100).isEmpty)
    }

    @Test("once this run's events are max_age old by the uptime, age retention deletes them as any other")
    func eventsOldByTheUptimeGo() throws {
        var timeline = AppendTimeline(uptime: 0, newestID: 10)
        timeline.mark(uptime: 50, newestID: 20)  // ids 11…20 journaled by 50 s
        timeline.mark(uptime: 90, newestID: 30)  // ids 21…30 by 90 s
        #expect(timeline.newestDeletableByAge(age: 100, uptime: 120) == 10)  // nothing of this run is 100 s old
        #expect(timeline.newestDeletableByAge(age: 100, uptime: 150) == 20)  // the mark at 50 s is
        #expect(timeline.markCount == 2)  // the mark at 0 s is no longer needed
        #expect(timeline.newestDeletableByAge(age: 100, uptime: 189.9) == 20)
        #expect(timeline.newestDeletableByAge(age: 100, uptime: 190) == 30)
        #expect(timeline.markCount == 1)
        // Never below what was journaled before this run, which only the wall clock dates.
        #expect(timeline.newestDeletableByAge(age: 1000, uptime: 190) == 10)
    }

    @Test("a mark with nothing journaled since the last, or out of order, changes nothing")
    func marksOnlyMoveForward() {
        var timeline = AppendTimeline(uptime: 0, newestID: 5)
        timeline.mark(uptime: 10, newestID: 5)  // nothing journaled: the mark at 0 s says more
        #expect(timeline.markCount == 1)
        #expect(timeline.newestDeletableByAge(age: 5, uptime: 10) == 5)
        timeline.mark(uptime: 20, newestID: 9)
        timeline.mark(uptime: 15, newestID: 12)  // earlier than the last mark: ignored
        timeline.mark(uptime: 30, newestID: 8)  // fewer ids than the last mark: ignored
        #expect(timeline.markCount == 2)
        #expect(timeline.newestDeletableByAge(age: 5, uptime: 25) == 9)
    }
}
