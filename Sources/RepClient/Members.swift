import RepProtocol

/// The members of one JSON object of a server line, read as the types the protocol gives them; every failure names
/// the member by its path from the line (`status.ring.capacity`).
struct Members {
    let values: [String: JSONValue]
    /// The object's path: the line's type, then members and indices (`set_end.quality[2]`).
    let path: String

    init(_ values: [String: JSONValue], path: String) {
        self.values = values
        self.path = path
    }

    func path(of key: String) -> String { "\(path).\(key)" }

    private func missing(_ key: String, _ what: String) -> ServerLineError {
        ServerLineError(reason: "missing (\(what))", member: path(of: key))
    }

    private func wrong(_ key: String, _ what: String) -> ServerLineError {
        ServerLineError(reason: "expected \(what)", member: path(of: key))
    }

    /// The member converted by `convert`; nil when absent (or `null`); an error when present but not `what`.
    private func optional<T>(_ key: String, _ what: String, _ convert: (JSONValue) -> T?) throws(ServerLineError) -> T?
    {
        guard let value = values[key], value != .null else { return nil }
        guard let converted = convert(value) else { throw wrong(key, what) }
        return converted
    }

    private func required<T>(_ key: String, _ what: String, _ convert: (JSONValue) -> T?) throws(ServerLineError) -> T {
        guard let value = try optional(key, what, convert) else { throw missing(key, what) }
        return value
    }

    func optionalDouble(_ key: String) throws(ServerLineError) -> Double? { try optional(key, "a number", \.double) }
    func optionalInt(_ key: String) throws(ServerLineError) -> Int? { try optional(key, "a whole number", \.int) }
    func optionalString(_ key: String) throws(ServerLineError) -> String? {
        try optional(key, "a string", \.stringValue)
    }

    /// An event id: a whole number ≥ 0.
    func optionalID(_ key: String) throws(ServerLineError) -> Int64? {
        try optional(key, "an event id (a whole number ≥ 0)") {
            $0.double.flatMap { Int64(exactly: $0) }.flatMap { $0 >= 0 ? $0 : nil }
        }
    }

    func double(_ key: String) throws(ServerLineError) -> Double { try required(key, "a number", \.double) }
    func int(_ key: String) throws(ServerLineError) -> Int { try required(key, "a whole number", \.int) }
    func string(_ key: String) throws(ServerLineError) -> String { try required(key, "a string", \.stringValue) }
    func bool(_ key: String) throws(ServerLineError) -> Bool { try required(key, "true or false", \.bool) }

    func id(_ key: String) throws(ServerLineError) -> Int64 {
        guard let id = try optionalID(key) else { throw missing(key, "an event id (a whole number ≥ 0)") }
        return id
    }

    /// A whole number that may be negative (a count that can run below zero, such as a backlog).
    func int64(_ key: String) throws(ServerLineError) -> Int64 {
        try required(key, "a whole number") { $0.double.flatMap { Int64(exactly: $0) } }
    }

    func array(_ key: String) throws(ServerLineError) -> [JSONValue] {
        try required(key, "an array") {
            if case .array(let items) = $0 { return items }
            return nil
        }
    }

    func object(_ key: String) throws(ServerLineError) -> Members {
        let members = try required(key, "an object") {
            if case .object(let members) = $0 { return members }
            return nil
        }
        return Members(members, path: path(of: key))
    }

    /// Item `index` of the array member `key`, which must be an object.
    func element(_ item: JSONValue, at index: Int, of key: String) throws(ServerLineError) -> Members {
        let elementPath = "\(path(of: key))[\(index)]"
        guard case .object(let members) = item else {
            throw ServerLineError(reason: "expected an object", member: elementPath)
        }
        return Members(members, path: elementPath)
    }
}
