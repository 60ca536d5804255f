import PlainText

/// A station the station display (`repd-web`) shows, as `web.socket` or `--socket` names it: `PATH`, or
/// `NAME=PATH` (a path may contain '=' after its first '/'). The name is what the page shows ("Rack 1") and what
/// `?station=NAME` picks (the page encodes it in the address): up to 64 bytes of text, without control characters
/// or white space at either end; without one the station is called what repd calls it.
public struct WebStation: Sendable, Equatable, CustomStringConvertible {
    /// repd's socket; empty: repd's default for clients.
    public var socketPath: String
    /// The station's name; nil: the name repd gives it.
    public var name: String?

    /// The station reading `socketPath`, called `name`.
    public init(socketPath: String, name: String? = nil) {
        self.socketPath = socketPath
        self.name = name
    }

    /// What is wrong with an entry.
    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        /// The entry (quoted) and why it cannot be used.
        public var description: String
    }

    /// Parses `PATH` or `NAME=PATH`; an empty path or name, a name with a control character, white space at either
    /// end or more than 64 bytes, and a path longer than a Unix socket's address holds are refused.
    public init(parsing entry: String) throws(Invalid) {
        let quoted = "'" + LogText.excerpt(entry, limit: 120) + "'"
        if let equals = entry.firstIndex(of: "="), !entry[..<equals].contains("/") {
            name = String(entry[..<equals])
            socketPath = String(entry[entry.index(after: equals)...])
        } else {
            name = nil
            socketPath = entry
        }
        if let name, name.isEmpty {
            throw Invalid(description: "\(quoted): expected PATH or NAME=PATH (the name before '=' is empty)")
        }
        guard !socketPath.isEmpty else {
            throw Invalid(description: "\(quoted): expected PATH or NAME=PATH (the path is empty)")
        }
        if let name, let problem = Self.nameProblem(name) { throw Invalid(description: "\(quoted): \(problem)") }
        let bytes = socketPath.utf8.count
        let longest = DaemonConfiguration.longestSocketPath
        guard bytes <= longest else {
            throw Invalid(
                description: "\(quoted): the path is \(bytes) bytes; a Unix socket's path holds at most \(longest)")
        }
    }

    /// Why `name` cannot name a station (nil when it can).
    public static func nameProblem(_ name: String) -> String? {
        let quoted = "'" + LogText.excerpt(name, limit: 80) + "'"
        guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) else {
            return "the station name \(quoted) holds a control character"
        }
        guard let first = name.first, let last = name.last, !first.isWhitespace, !last.isWhitespace else {
            return "the station name \(quoted) begins or ends with white space"
        }
        guard name.utf8.count <= 64 else { return "the station name \(quoted) is longer than 64 bytes" }
        return nil
    }

    /// Why `stations` cannot all be shown (nil when they can): two that the user gave the same name, of which
    /// `?station=NAME` would reach only one.
    public static func repeatedName(_ stations: [WebStation]) -> String? {
        var seen: [String: WebStation] = [:]
        for station in stations {
            guard let name = station.name else { continue }
            if let first = seen[name] {
                return
                    "'\(LogText.escaped(first.description))' and '\(LogText.escaped(station.description))' both name station '\(name)' (?station=\(name) reaches only one): "
                    + "give each its own name"
            }
            seen[name] = station
        }
        return nil
    }

    /// `NAME=PATH`, or `PATH` without a name.
    public var description: String { name.map { "\($0)=\(socketPath)" } ?? socketPath }
}
