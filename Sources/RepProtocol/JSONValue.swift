/// A parsed JSON value (RFC 8259), for the small messages clients send. No Foundation.
public indirect enum JSONValue: Sendable, Equatable {
    /// A string.
    case string(String)
    /// A number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// `null`.
    case null
    /// An array.
    case array([JSONValue])
    /// An object (the parser refuses a key given twice).
    case object([String: JSONValue])

    /// The member `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string value, or nil.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The number, or nil.
    public var double: Double? {
        if case .number(let d) = self { return d }
        return nil
    }

    /// The number when it is a whole number that fits an `Int`, else nil.
    public var int: Int? { double.flatMap { Int(exactly: $0) } }

    /// The boolean, or nil.
    public var bool: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
}

/// Why a JSON text could not be parsed, with the byte offset.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 0-based byte offset where parsing stopped.
    public var offset: Int
    /// What was wrong.
    public var reason: String

    /// The reason, then `at byte OFFSET`.
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict, bounded JSON parser: nesting depth at most `maximumDepth`, strings and numbers per RFC 8259.
public struct JSONParser {
    /// The deepest nesting accepted (protects the stack against hostile input).
    public static let maximumDepth = 32

    private let bytes: [UInt8]
    private var index = 0
    /// The top-level member whose array elements' byte ranges are kept (`parse(_:keepingElementsOf:)`).
    private var keptMember: String?
    private var keeping = false
    private var keptRanges: [Range<Int>] = []

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses one JSON value filling all of `text` (surrounding white space allowed).
    public static func parse(_ text: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(Array(text))
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected data after the value") }
        return value
    }

    /// Parses a string's UTF-8.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue { try parse(Array(text.utf8)) }

    /// Parses one JSON object like `parse(_:)`, and also returns the text of each element of its member `key` when
    /// that is an array, exactly as written (member order and number forms kept): `history`'s events as repd sent
    /// them.
    public static func parse(
        _ text: some Collection<UInt8>, keepingElementsOf key: String
    ) throws(JSONParseError) -> (value: JSONValue, elements: [String]) {
        var parser = JSONParser(Array(text))
        parser.keptMember = key
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected data after the value") }
        let elements = parser.keptRanges.map { String(decoding: parser.bytes[$0], as: UTF8.self) }
        return (value, elements)
    }

    private func error(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth < Self.maximumDepth else { throw error("nesting deeper than \(Self.maximumDepth)") }
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws(JSONParseError) {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("invalid literal") }
            index += 1
        }
    }

    private mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var members: [String: JSONValue] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let keyOffset = index
            let key = try string()
            // A key given twice would mean whichever copy a reader happens to keep ({"cmd":"ping","cmd":"reset"} was a
            // reset): refused.
            guard members[key] == nil else {
                throw JSONParseError(offset: keyOffset, reason: "the key \"\(key.prefix(32))\" is given twice")
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipSpace()
            let keep = depth == 0 && key == keptMember
            if keep { keptRanges.removeAll() }
            keeping = keep
            members[key] = try value(depth: depth + 1)
            keeping = false
            skipSpace()
            guard index < bytes.count else { throw error("unexpected end in an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    private mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            let start = index
            let keep = keeping && depth == 1
            keeping = false  // only this array's own elements
            items.append(try value(depth: depth + 1))
            keeping = keep
            if keep { keptRanges.append(start..<index) }
            skipSpace()
            guard index < bytes.count else { throw error("unexpected end in an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func string() throws(JSONParseError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var run = index  // start of a run of plain bytes
        var plain: [UInt8] = []
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                plain.append(contentsOf: bytes[run..<index])
                index += 1
                guard let decoded = String(validating: plain, as: UTF8.self) else { throw error("invalid UTF-8") }
                scalars.append(contentsOf: decoded.unicodeScalars)
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte == UInt8(ascii: "\\") {
                plain.append(contentsOf: bytes[run..<index])
                guard let decoded = String(validating: plain, as: UTF8.self) else { throw error("invalid UTF-8") }
                scalars.append(contentsOf: decoded.unicodeScalars)
                plain.removeAll()
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(code) {
                        throw error("unpaired surrogate")
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid code point") }
                    scalars.append(scalar)
                default: throw error("invalid escape")
                }
                run = index
                continue
            }
            index += 1
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid hex digit")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func number() throws(JSONParseError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if (UInt8(ascii: "1")...UInt8(ascii: "9")).contains(bytes[index]) {
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        } else {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { throw error("invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            let digits = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > digits else { throw error("invalid number") }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw error("number out of range")
        }
        return value
    }
}
