/// Event types a client can subscribe to.
public enum EventKind: String, Sendable, CaseIterable, Hashable {
    /// `rep` events.
    case rep
    /// `set_start` and `set_end` events.
    case set
    /// `sensor` events (connected, lost, back, polling, error, finished).
    case sensor
    /// `samples` batches (raw samples, for recording and live plots).
    case samples

    /// What a new client receives until it subscribes otherwise.
    public static let defaults: Set<EventKind> = [.rep, .set, .sensor]
}

/// A command a client sends, one per line.
public enum ClientCommand: Sendable, Equatable {
    /// Ask for the daemon's status.
    case status
    /// Choose the event types to receive; with `since`, first the journaled events after that id (replay), then
    /// live ones, with no gap and no duplicate between them.
    case subscribe(Set<EventKind>, since: Int64? = nil)
    /// Start a new workout: the open set is closed, counts restart.
    case reset
    /// Ask for a `pong` (liveness).
    case ping
    /// Ask for journaled events (one `history` reply).
    case history(HistoryRequest)
}

/// Why a client line was refused. The connection stays open unless the line was too long.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, for the client's `error` reply.
    public var reason: String

    /// Creates the error.
    public init(_ reason: String) { self.reason = reason }

    /// The reason alone.
    public var description: String { reason }
}

extension ClientCommand {
    /// The longest line a client may send, in bytes (without the newline).
    public static let maximumLineLength = 4096

    /// The words form, as a client sends it and `parse(line:)` reads it back (without the newline): `status`,
    /// `subscribe rep,set since=42`, `history after=41 limit=50 rep`, `reset`, `ping`.
    public var line: String {
        switch self {
        case .status: "status"
        case .reset: "reset"
        case .ping: "ping"
        case .history(let request): request.line
        case .subscribe(let kinds, let since):
            "subscribe " + EventKind.allCases.filter(kinds.contains).map(\.rawValue).joined(separator: ",")
                + (since.map { " since=\($0)" } ?? "")
        }
    }

    /// Parses one line: a JSON object `{"cmd":"status"}`, `{"cmd":"subscribe","events":["rep","set"]}`,
    /// `{"cmd":"subscribe","since":42}`, `{"cmd":"reset"}`, `{"cmd":"ping"}`, or the same as plain words (`status`,
    /// `subscribe rep,set`, `subscribe since=42`, `reset`, `ping`) for people typing into `socat`. A `subscribe`
    /// with `since` and no event types subscribes to the defaults.
    public static func parse(line: some Collection<UInt8>) throws(ProtocolError) -> ClientCommand {
        let bytes = Array(line)
        guard bytes.count <= maximumLineLength else {
            throw ProtocolError("line longer than \(maximumLineLength) bytes")
        }
        var start = 0
        var end = bytes.count
        while start < end, [0x20, 0x09, 0x0D].contains(bytes[start]) { start += 1 }
        while end > start, [0x20, 0x09, 0x0D].contains(bytes[end - 1]) { end -= 1 }
        let trimmed = bytes[start..<end]
        guard let first = trimmed.first else { throw ProtocolError("empty line") }
        if first == UInt8(ascii: "{") { return try parseJSON(trimmed) }
        guard let text = String(validating: trimmed, as: UTF8.self) else {
            throw ProtocolError("the line is not UTF-8")
        }
        let words = text.split(omittingEmptySubsequences: true) { $0 == " " || $0 == "\t" }
        let name = String(words[0])
        if name == "history" { return .history(try HistoryRequest.parse(words: words.dropFirst().map(String.init))) }
        var since: Int64?
        var arguments = Array(words.dropFirst())
        if name == "subscribe", let index = arguments.firstIndex(where: { $0.hasPrefix("since=") }) {
            since = try sinceID(String(arguments[index].dropFirst("since=".count)))
            arguments.remove(at: index)
            guard !arguments.contains(where: { $0.hasPrefix("since=") }) else {
                throw ProtocolError("subscribe: since is given twice")
            }
        }
        let events = arguments.joined(separator: ",").split(separator: ",").map(String.init)
        return try command(
            named: name, events: name == "subscribe" ? events : nil, since: since,
            extra: name != "subscribe" && words.count > 1)
    }

    /// A `since` id: a whole number ≥ 0.
    private static func sinceID(_ text: String) throws(ProtocolError) -> Int64 {
        guard let id = Int64(text), id >= 0 else {
            throw ProtocolError("since needs an event id (a whole number ≥ 0), not \"\(String(text.prefix(32)))\"")
        }
        return id
    }

    private static func parseJSON(_ bytes: ArraySlice<UInt8>) throws(ProtocolError) -> ClientCommand {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch { throw ProtocolError("malformed JSON: \(error)") }
        guard case .object(let members) = value else { throw ProtocolError("expected a JSON object") }
        guard let cmd = members["cmd"] else { throw ProtocolError("missing \"cmd\" (a string)") }
        guard let name = cmd.stringValue else { throw ProtocolError("\"cmd\" must be a string (the command's name)") }
        if name == "history" { return .history(try HistoryRequest.parse(json: members)) }
        var events: [String]?
        var since: Int64?
        if name == "subscribe" {
            if let value = members["since"] {
                guard let number = value.double, let id = eventID(exactly: number) else {
                    throw ProtocolError("\"since\" must be an event id (a whole number ≥ 0)")
                }
                since = id
            }
            switch members["events"] {
            case .array(let items)?:
                events = []
                for item in items {
                    guard let event = item.stringValue else { throw ProtocolError("\"events\" must hold strings") }
                    events!.append(event)
                }
                // Given but empty is refused, with `since` too: only a subscribe without "events" means the
                // defaults (an app that sent its user's empty choice got every default type).
                guard !items.isEmpty else {
                    throw ProtocolError("subscribe needs at least one event type (rep, set, sensor, samples)")
                }
            case nil where since != nil: events = []
            default: throw ProtocolError("subscribe needs \"events\": an array of rep, set, sensor, samples")
            }
        }
        // Only subscribe takes fields besides "cmd": a reset sent with stray fields is a client's bug, not a reset.
        let allowed = ["cmd"] + (name == "subscribe" ? ["events", "since"] : [])
        let unknown = members.keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty || !commandNames.contains(name) else {
            let only = name == "subscribe" ? "cmd, events and since" : "only \"cmd\""
            throw ProtocolError(
                "unknown field \"\(String(unknown[0].prefix(32)))\" (\(String(name.prefix(32))) takes \(only))")
        }
        return try command(named: name, events: events, since: since, extra: false)
    }

    /// The commands a client may send.
    private static let commandNames = ["status", "subscribe", "history", "reset", "ping"]

    private static func command(
        named name: String, events: [String]?, since: Int64? = nil, extra: Bool
    ) throws(ProtocolError) -> ClientCommand {
        guard commandNames.contains(name) else {
            throw ProtocolError(
                "unknown command \"\(String(name.prefix(64)))\" (\(commandNames.joined(separator: ", ")))")
        }
        guard !extra else { throw ProtocolError("\(name) takes no arguments") }
        switch name {
        case "status": return .status
        case "reset": return .reset
        case "ping": return .ping
        default:
            if since != nil, events?.isEmpty ?? true { return .subscribe(EventKind.defaults, since: since) }
            guard let events, !events.isEmpty else {
                throw ProtocolError("subscribe needs at least one event type (rep, set, sensor, samples)")
            }
            var kinds = Set<EventKind>()
            for event in events {
                guard let kind = EventKind(rawValue: event) else {
                    throw ProtocolError("unknown event type \"\(event)\" (rep, set, sensor, samples)")
                }
                kinds.insert(kind)
            }
            return .subscribe(kinds, since: since)
        }
    }
}

/// An event id given as a JSON number: a whole number ≥ 0. JSON numbers are doubles, so the largest ids (from 2⁶³ − 1,
/// the words form's largest, which as a double is 2⁶³) read as `Int64.max`: no id is above it either way.
func eventID(exactly number: Double) -> Int64? {
    guard number >= 0, number.rounded() == number else { return nil }
    return number >= 0x1p63 ? (number == 0x1p63 ? Int64.max : nil) : Int64(exactly: number)
}
