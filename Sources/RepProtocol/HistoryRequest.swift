/// A `history` command: which journaled events a client asks for. Every condition given must hold.
///
/// Words: `history [after=ID] [before=ID] [from=UNIX] [to=UNIX] [limit=N] [latest] [rep,set,sensor]`.
/// JSON: `{"cmd":"history","after":41,"from":1732400000,"limit":50,"latest":true,"events":["rep"]}`.
public struct HistoryRequest: Sendable, Equatable {
    /// The most events one reply carries; ask again with `after` (the reply's last id) for more.
    public static let maximumLimit = 200
    /// How many events a reply carries when `limit` is not given.
    public static let defaultLimit = 100

    /// Only events with an id above this (0: from the oldest the journal holds).
    public var after: Int64
    /// Only events with an id below this.
    public var before: Int64?
    /// Only events published at or after this Unix time (seconds).
    public var from: Double?
    /// Only events published before this Unix time (seconds).
    public var to: Double?
    /// Event types (`rep`, `set`, `sensor`; `samples` are never journaled).
    public var kinds: Set<EventKind>
    /// At most this many events (1...maximumLimit).
    public var limit: Int
    /// The newest `limit` matching events instead of the oldest; they still come oldest first.
    public var latest: Bool

    /// Creates a request.
    public init(
        after: Int64 = 0, before: Int64? = nil, from: Double? = nil, to: Double? = nil,
        kinds: Set<EventKind> = EventKind.defaults, limit: Int = HistoryRequest.defaultLimit, latest: Bool = false
    ) {
        self.after = after
        self.before = before
        self.from = from
        self.to = to
        self.kinds = kinds
        self.limit = limit
        self.latest = latest
    }

    /// The journal's message types for `kinds`.
    public var types: [String] {
        var types: [String] = []
        if kinds.contains(.set) { types += ["set_start", "set_end"] }
        if kinds.contains(.rep) { types.append("rep") }
        if kinds.contains(.sensor) { types.append("sensor") }
        return types
    }

    /// The words form, as `history` sends it and `parse(words:)` reads it back.
    public var line: String {
        var words = ["history"]
        if after > 0 { words.append("after=\(after)") }
        if let before { words.append("before=\(before)") }
        if let from { words.append("from=\(from)") }
        if let to { words.append("to=\(to)") }
        words.append("limit=\(limit)")
        if latest { words.append("latest") }
        words.append(EventKind.allCases.filter(kinds.contains).map(\.rawValue).joined(separator: ","))
        return words.joined(separator: " ")
    }

    /// Reads the words after `history`.
    static func parse(words: [String]) throws(ProtocolError) -> HistoryRequest {
        var request = HistoryRequest()
        var kinds: [String] = []
        var given: Set<String> = []
        for word in words {
            guard let equals = word.firstIndex(of: "=") else {
                if word == "latest" {
                    guard given.insert(word).inserted else { throw ProtocolError("history: latest is given twice") }
                    request.latest = true
                } else {
                    kinds += word.split(separator: ",").map(String.init)
                }
                continue
            }
            let key = String(word[..<equals])
            let value = String(word[word.index(after: equals)...])
            if key == "latest" { throw ProtocolError("history: latest takes no value (write just latest)") }
            guard given.insert(key).inserted else {
                throw ProtocolError("history: \(String(key.prefix(32))) is given twice")
            }
            switch key {
            case "after": request.after = try id(value, "after")
            case "before": request.before = try id(value, "before")
            case "from": request.from = try time(Double(value), "from", text: value)
            case "to": request.to = try time(Double(value), "to", text: value)
            case "limit": request.limit = try limit(Int(value), text: value)
            default:
                throw ProtocolError(
                    "history: unknown argument \"\(String(key.prefix(32)))\" (after, before, from, to, limit, latest, event types)"
                )
            }
        }
        if !kinds.isEmpty { request.kinds = try eventKinds(kinds) }
        return request
    }

    /// Reads the members of a JSON `history` command.
    static func parse(json members: [String: JSONValue]) throws(ProtocolError) -> HistoryRequest {
        let allowed = ["cmd", "after", "before", "from", "to", "limit", "latest", "events"]
        if let unknown = members.keys.filter({ !allowed.contains($0) }).sorted().first {
            throw ProtocolError("unknown field \"\(String(unknown.prefix(32)))\"")
        }
        var request = HistoryRequest()
        func wholeID(_ name: String) throws(ProtocolError) -> Int64? {
            guard let value = members[name] else { return nil }
            guard let number = value.double, let id = eventID(exactly: number) else {
                throw ProtocolError("\"\(name)\" must be an event id (a whole number ≥ 0)")
            }
            return id
        }
        if let after = try wholeID("after") { request.after = after }
        request.before = try wholeID("before")
        if let value = members["from"] { request.from = try time(value.double, "from", text: shown(value)) }
        if let value = members["to"] { request.to = try time(value.double, "to", text: shown(value)) }
        if let value = members["limit"] { request.limit = try limit(value.int, text: shown(value)) }
        switch members["latest"] {
        case nil: break
        case .bool(let latest)?: request.latest = latest
        default: throw ProtocolError("\"latest\" must be true or false")
        }
        switch members["events"] {
        case nil: break
        case .array(let items)?:
            var names: [String] = []
            for item in items {
                guard let name = item.stringValue else { throw ProtocolError("\"events\" must hold strings") }
                names.append(name)
            }
            request.kinds = try eventKinds(names)
        default: throw ProtocolError("\"events\" must be an array of rep, set, sensor")
        }
        return request
    }

    private static func id(_ text: String, _ name: String) throws(ProtocolError) -> Int64 {
        guard let id = Int64(text), id >= 0 else {
            throw ProtocolError(
                "history: \(name) needs an event id (a whole number ≥ 0), not \"\(String(text.prefix(32)))\"")
        }
        return id
    }

    private static func time(_ value: Double?, _ name: String, text: String) throws(ProtocolError) -> Double {
        guard let value, value.isFinite, value >= 0 else {
            throw ProtocolError("history: \(name) needs a Unix time in seconds, not \"\(String(text.prefix(32)))\"")
        }
        return value
    }

    /// A client's JSON value as an error quotes it: a number as written (300, 2.5), a string as it is, else its kind.
    static func shown(_ value: JSONValue) -> String {
        switch value {
        case .number(let d): return d.isFinite && d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)"
        case .string(let s): return s
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    private static func limit(_ value: Int?, text: String) throws(ProtocolError) -> Int {
        guard let value, (1...maximumLimit).contains(value) else {
            throw ProtocolError("history: limit must be 1 to \(maximumLimit), not \"\(String(text.prefix(32)))\"")
        }
        return value
    }

    private static func eventKinds(_ names: [String]) throws(ProtocolError) -> Set<EventKind> {
        var kinds = Set<EventKind>()
        for name in names {
            guard let kind = EventKind(rawValue: name), kind != .samples else {
                throw ProtocolError("history: unknown event type \"\(String(name.prefix(32)))\" (rep, set, sensor)")
            }
            kinds.insert(kind)
        }
        guard !kinds.isEmpty else { throw ProtocolError("history: \"events\" needs at least one of rep, set, sensor") }
        return kinds
    }
}
