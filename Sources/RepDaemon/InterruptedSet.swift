import RepJournal
import RepProtocol

/// A set the last run of repd left open: it stopped without ending it (a crash, `kill -9`, the OOM killer, a power
/// cut), so no `set_end` followed its `set_start` and reps. Left so, an app or the fleet that replays the journal
/// would hold that set open for good; repd journals its end at its next start instead, marked `interrupted`.
enum InterruptedSet {
    /// Journals the end of the set the journal's newest workout event leaves open (`reps`: the reps that set sent;
    /// `t` and `wall`: its last event's) and returns it; nil when none is open, or its event does not read.
    static func close(in journal: EventJournal) throws(JournalError) -> (set: Int, reps: Int)? {
        let newest = JournalQuery(types: ["set_start", "rep", "set_end"], limit: 1, latest: true)
        guard let last = try journal.events(matching: newest).first, last.type != "set_end",
            let event = try? JSONParser.parse(last.json), let set = event["set"]?.int, let t = event["t"]?.double
        else { return nil }
        let reps = last.type == "rep" ? (event["rep"]?.int ?? 0) : 0
        let line = ServerMessage.interruptedSetEnd(set: set, reps: reps, t: t, wall: last.wall)
        _ = try journal.append(type: "set_end", json: String(line.dropLast()), wall: last.wall)
        return (set, reps)
    }
}
