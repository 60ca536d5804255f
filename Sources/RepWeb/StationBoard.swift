import NIOCore
import RepClient
import RepProtocol

/// Every station's state, and the browsers it is shown to: each change goes out to every browser as that station's
/// whole state (one SSE `message` whose data is `StationState.json` plus its `index`), so a page that missed
/// anything is whole again with the next message.
public actor StationBoard {
    private var stations: [StationState]
    private let hub: EventStreamHub
    private let started: Double

    /// A board of `stations` (in the order given) shown through `hub`.
    public init(stations: [StationState], hub: EventStreamHub) {
        precondition(!stations.isEmpty, "at least one station")
        self.stations = Self.named(stations)
        self.hub = hub
        self.started = wallClock()
    }

    /// The stations' states now.
    public var states: [StationState] { stations }

    /// Applies repd's messages (what one read brought) to station `index`, in order; if they changed anything, the
    /// station's new state goes out to every browser once (a replay of hundreds of events is one message, not
    /// hundreds).
    public func apply(_ messages: [(line: ServerLine, json: JSONValue)], to index: Int) {
        let name = stations[index].reportedName
        var changed = false
        for message in messages where stations[index].apply(message.line, json: message.json) { changed = true }
        if stations[index].reportedName != name {
            // repd named (or renamed) the station: every unlabelled station's name may move.
            let named = Self.named(stations)
            for other in stations.indices where named[other].name != stations[other].name {
                stations[other].name = named[other].name
                if other != index { publish(other) }
            }
            changed = true
        }
        if changed { publish(index) }
    }

    /// `stations` with each unlabelled one named what repd calls it (`reportedName`), numbered `-2`, `-3`… when a
    /// label the user gave or a station before it (in the order given on the command line) has that name already:
    /// two repds on one host, both named after it, stay apart for `?station=`, the first keeping the plain name.
    public static func named(_ stations: [StationState]) -> [StationState] {
        var result = stations
        var taken = Set(stations.filter(\.labelled).map(\.name))
        for index in result.indices where !result[index].labelled {
            let base = result[index].reportedName
            var candidate = base
            var n = 2
            while taken.contains(candidate) {
                candidate = "\(base)-\(n)"
                n += 1
            }
            result[index].name = candidate
            taken.insert(candidate)
        }
        return result
    }

    /// Sets the link state of station `index`, with why it is down (`problem`: see `StationState.linkProblem`); a
    /// change goes out to every browser.
    public func setLink(_ link: StationState.Link, problem: String? = nil, of index: Int) {
        if stations[index].setLink(link, problem: problem) { publish(index) }
    }

    /// The id to resume after for station `index` (nil before any journaled event), and the identity of the journal
    /// it came from (the last `hello`'s).
    public func resumePoint(of index: Int) -> (lastID: Int64?, journal: String?) {
        (stations[index].lastID, stations[index].journal)
    }

    /// Records the identity of the journal station `index`'s repd writes, from its `hello`.
    public func setJournal(_ journal: String?, of index: Int) { stations[index].journal = journal }

    /// Forgets the ids of station `index` (its repd's journal was replaced: ids start again).
    public func forgetIDs(of index: Int) { stations[index].lastID = nil }

    /// A new browser: it gets every station's state first, then each change.
    public func subscribe(channel: any Channel) -> EventStreamHub.Client? {
        hub.add(channel: channel, first: stations.indices.map(message))
    }

    /// `/api/status`: repd-web's own figures and every station's state.
    public func status() -> String {
        JSONWriter.Value.object([
            ("service", .string("repd-web")),
            ("version", .string(repdVersion)),
            ("uptime_s", .number(((wallClock() - started) * 1000).rounded() / 1000)),
            ("browsers", .integer(hub.count)),
            ("browsers_dropped", .integer(hub.droppedCount)),
            ("stations", .array(stations.enumerated().map { index, state in withIndex(state.json, index) })),
        ]).text + "\n"
    }

    private func publish(_ index: Int) { hub.broadcast(message(index)) }

    private func message(_ index: Int) -> ByteBuffer {
        EventStreamHub.event(data: withIndex(stations[index].json, index).text)
    }

    private func withIndex(_ value: JSONWriter.Value, _ index: Int) -> JSONWriter.Value {
        guard case .object(let members) = value else { return value }
        return .object([("index", .integer(index))] + members)
    }
}
