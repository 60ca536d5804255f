/// A recursive-descent reader for the TOML subset described on `TOMLDocument`. Configuration files are small, so
/// it works on an array of Unicode scalars and favours clear messages over speed.
struct TOMLParser {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var lineStart = 0
    private var arrayDepth = 0

    init(_ text: String) {
        // A byte-order mark, as some editors write, is not part of the text.
        let all = Array(text.unicodeScalars)
        scalars = all.first == "\u{FEFF}" ? Array(all.dropFirst()) : all
    }

    // MARK: - Document

    mutating func document() throws(TOMLSyntaxError) -> TOMLDocument {
        var document = TOMLDocument()
        var current: String?  // nil: the root table
        while true {
            skipBlanks()
            guard let c = peek else { return document }
            switch c {
            case "\n", "\r":
                try newline()
            case "#":
                try comment()
            case "[":
                let headerLine = line
                let name = try tableHeader()
                guard document.tables[name] == nil else {
                    throw error("table [\(name)] appears twice (first on line \(document.tables[name]!.line))")
                }
                document.tables[name] = .init(line: headerLine, entries: [:])
                current = name
                try endOfLine()
            default:
                let keyLine = line
                let keyColumn = column
                let key = try bareKey(what: "key")
                skipBlanks()
                guard peek == "=" else { throw error("expected '=' after the key '\(key)'") }
                advance()
                skipBlanks()
                let value = try self.value()
                let entry = TOMLDocument.Entry(value: value, line: keyLine)
                if let table = current {
                    if let first = document.tables[table]!.entries[key] {
                        throw TOMLSyntaxError(
                            line: keyLine, column: keyColumn,
                            reason: "key '\(key)' appears twice in [\(table)] (first on line \(first.line))")
                    }
                    document.tables[table]!.entries[key] = entry
                } else {
                    if let first = document.root[key] {
                        throw TOMLSyntaxError(
                            line: keyLine, column: keyColumn,
                            reason: "key '\(key)' appears twice (first on line \(first.line))")
                    }
                    document.root[key] = entry
                }
                try endOfLine()
            }
        }
    }

    private mutating func tableHeader() throws(TOMLSyntaxError) -> String {
        advance()  // [
        if peek == "[" { throw error("arrays of tables ([[…]]) are not used in repd's configuration") }
        skipBlanks()
        let name = try bareKey(what: "table name")
        skipBlanks()
        guard peek == "]" else {
            if peek == nil || peek == "\n" || peek == "\r" {
                throw error("the table header needs its closing ']' on the same line")
            }
            throw error("expected ']' after the table name '\(name)'")
        }
        advance()
        return name
    }

    private mutating func bareKey(what: String) throws(TOMLSyntaxError) -> String {
        let start = index
        while let c = peek, Self.isBareKeyCharacter(c) { advance() }
        let key = String(String.UnicodeScalarView(scalars[start..<index]))
        if let c = peek {
            if c == "." && !key.isEmpty {
                throw error("dotted keys are not used in repd's configuration: write [\(key)] and the key below it")
            }
            if c == "\"" || c == "'" { throw error("quoted keys are not used in repd's configuration") }
        }
        guard !key.isEmpty else {
            throw error(
                peek.map { "expected a \(what) (letters, digits, '_' or '-'), found \(Self.describe($0))" }
                    ?? "expected a \(what)")
        }
        if let c = peek, !(c == " " || c == "\t" || c == "=" || c == "]" || c == "\n" || c == "\r" || c == "#") {
            throw error("\(Self.describe(c)) is not allowed in a \(what) (letters, digits, '_' or '-')")
        }
        return key
    }

    /// After a header or value: blanks, an optional comment, then the end of the line or file.
    private mutating func endOfLine() throws(TOMLSyntaxError) {
        skipBlanks()
        if peek == "#" { try comment() }
        guard let c = peek else { return }
        guard c == "\n" || c == "\r" else {
            throw error("unexpected \(Self.describe(c)) after the value; one key = value per line")
        }
        try newline()
    }

    // MARK: - Values

    private mutating func value() throws(TOMLSyntaxError) -> TOMLValue {
        guard let c = peek else { throw error("expected a value after '='") }
        switch c {
        case "\"":
            if lookahead(1) == "\"" && lookahead(2) == "\"" {
                throw error("multi-line strings are not used in repd's configuration")
            }
            return .string(try singleLineString(quote: "\""))
        case "'":
            if lookahead(1) == "'" && lookahead(2) == "'" {
                throw error("multi-line strings are not used in repd's configuration")
            }
            return .string(try singleLineString(quote: "'"))
        case "[":
            return try array()
        case "{":
            throw error("inline tables ({ … }) are not used in repd's configuration")
        case "\n", "\r", "#":
            throw error("expected a value after '='")
        default:
            return try bareValue()
        }
    }

    /// A one-line string: basic (`"`, with escapes) or literal (`'`, taken as written). Tabs are allowed in both;
    /// other control characters are not.
    private mutating func singleLineString(quote: Unicode.Scalar) throws(TOMLSyntaxError) -> String {
        let escapes = quote == "\""
        advance()  // the opening quote
        var result = String.UnicodeScalarView()
        while true {
            guard let c = peek, c != "\n", c != "\r" else {
                throw error("the string has no closing \(Self.describe(quote)) on its line")
            }
            advance()
            if c == quote { return String(result) }
            if escapes, c == "\\" {
                result.append(try escape())
                continue
            }
            if Self.isControl(c), c != "\t" {
                throw error(
                    "control character \(Self.describe(c)) in a string\(escapes ? "; write it as an escape" : "")",
                    back: 1)
            }
            result.append(c)
        }
    }

    /// The character after a backslash in a basic string, and any hex digits it needs.
    private mutating func escape() throws(TOMLSyntaxError) -> Unicode.Scalar {
        guard let e = peek else { throw error("the string has no closing '\"' on its line") }
        advance()
        switch e {
        case "b": return "\u{8}"
        case "t": return "\t"
        case "n": return "\n"
        case "f": return "\u{C}"
        case "r": return "\r"
        case "\"": return "\""
        case "\\": return "\\"
        case "u": return try unicodeEscape(digits: 4, column: column - 2)
        case "U": return try unicodeEscape(digits: 8, column: column - 2)
        default: throw error("unknown escape '\\\(e)' in a string", back: 2)
        }
    }

    /// `\\u` or `\\U` and its hex digits; errors point at the backslash (`column`).
    private mutating func unicodeEscape(digits: Int, column: Int) throws(TOMLSyntaxError) -> Unicode.Scalar {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard let c = peek, let digit = Self.hexValue(c) else {
                throw TOMLSyntaxError(
                    line: line, column: column, reason: "'\\\(digits == 4 ? "u" : "U")' needs \(digits) hex digits")
            }
            advance()
            value = value * 16 + digit
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw TOMLSyntaxError(
                line: line, column: column,
                reason: "U+\(String(value, radix: 16, uppercase: true)) is not a Unicode scalar value")
        }
        // TOML allows it, but no setting of repd can hold one: a path would end at it (the system reads C strings),
        // so "/var/lib/j\u0000x.db" would silently be /var/lib/j.
        guard value != 0 else {
            throw TOMLSyntaxError(
                line: line, column: column, reason: "'\\u0000' (NUL): no setting can hold one (a path would end there)")
        }
        return scalar
    }

    /// Arrays deeper than this are refused: the reader is recursive and a configuration never needs them.
    static let maximumArrayDepth = 16

    private mutating func array() throws(TOMLSyntaxError) -> TOMLValue {
        let openLine = line
        arrayDepth += 1
        defer { arrayDepth -= 1 }
        guard arrayDepth <= Self.maximumArrayDepth else {
            throw error("arrays nested more than \(Self.maximumArrayDepth) deep are not used in repd's configuration")
        }
        advance()  // [
        var items: [TOMLValue] = []
        while true {
            try skipArraySpace(openLine: openLine)
            if peek == "]" {
                advance()
                return .array(items)
            }
            items.append(try value())
            try skipArraySpace(openLine: openLine)
            switch peek {
            case ","?: advance()
            case "]"?:
                advance()
                return .array(items)
            case let c?: throw error("expected ',' or ']' in the array, found \(Self.describe(c))")
            case nil: throw error("the array opened on line \(openLine) has no closing ']'")
            }
        }
    }

    /// Blanks, newlines and comments between array items.
    private mutating func skipArraySpace(openLine: Int) throws(TOMLSyntaxError) {
        while true {
            skipBlanks()
            switch peek {
            case "\n"?, "\r"?: try newline()
            case "#"?: try comment()
            case nil: throw error("the array opened on line \(openLine) has no closing ']'")
            default: return
            }
        }
    }

    /// Numbers and booleans: everything up to a blank, comma, bracket, comment or line end.
    private mutating func bareValue() throws(TOMLSyntaxError) -> TOMLValue {
        let startColumn = column
        let start = index
        while let c = peek, !(c == " " || c == "\t" || c == "," || c == "]" || c == "#" || c == "\n" || c == "\r") {
            advance()
        }
        let text = String(String.UnicodeScalarView(scalars[start..<index]))
        func fail(_ reason: String) -> TOMLSyntaxError {
            TOMLSyntaxError(line: line, column: startColumn, reason: reason)
        }
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        if let first = text.unicodeScalars.first,
            !(first == "+" || first == "-" || first == "." || ("0"..."9").contains(first))
        {
            if text.hasPrefix("True") || text.hasPrefix("False") || text.hasPrefix("TRUE") || text.hasPrefix("FALSE") {
                throw fail("'\(text)' is not a value: booleans are lowercase true or false")
            }
            throw fail("'\(text)' is not a value: strings need quotes, e.g. \"\(text)\"")
        }
        let head = Array(text.unicodeScalars.prefix(5))
        if text.contains(":")
            || head.count == 5 && head[4] == "-" && head[..<4].allSatisfy({ ("0"..."9").contains($0) })
        {
            throw fail("dates and times are not used in repd's configuration")
        }
        if let value = Self.integer(text) { return .integer(value) }
        if let value = Self.float(text) { return .float(value) }
        if Self.integer(text, wide: true) != nil {
            throw fail("'\(text)' does not fit a 64-bit integer (-9223372036854775808…9223372036854775807)")
        }
        let digits = text.drop { $0 == "+" || $0 == "-" }
        if digits.count > 1, digits.first == "0", digits.dropFirst().first?.isNumber == true {
            throw fail(
                "'\(text)' is not a number: TOML numbers have no leading zeros (octal is 0o…; socket.mode is a string, \"0660\")"
            )
        }
        throw fail("'\(text)' is not a number")
    }

    /// TOML integers: optional sign, no leading zeros, `_` only between digits; or 0x/0o/0b without a sign. 64 bits
    /// on every platform (`Int` is 32 on armv7); `wide` accepts any length, to tell "too large" from "not a number".
    static func integer(_ text: String, wide: Bool = false) -> Int64? {
        var s = Substring(text)
        func value(_ digits: some StringProtocol, radix: Int, negative: Bool = false) -> Int64? {
            let plain = digits.filter { $0 != "_" }
            guard !plain.isEmpty, plain.allSatisfy({ $0.isASCII && ($0.hexDigitValue ?? radix) < radix }) else {
                return nil
            }
            return wide ? 0 : Int64((negative ? "-" : "") + plain, radix: radix)
        }
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where s.hasPrefix(prefix) {
            let digits = s.dropFirst(2)
            // Int64(_:radix:) would take a sign ("0x+100"); TOML allows none after the prefix.
            guard validUnderscores(digits) else { return nil }
            return value(digits, radix: radix)
        }
        var negative = false
        if s.first == "+" || s.first == "-" {
            negative = s.first == "-"
            s = s.dropFirst()
        }
        guard validUnderscores(s), s.allSatisfy({ $0 == "_" || $0.isASCII && $0.isNumber }) else { return nil }
        if s.count > 1, s.first == "0" { return nil }
        return value(s, radix: 10, negative: negative)
    }

    /// TOML floats: an integer part, then a fraction and/or an exponent, digits on both sides of the dot.
    static func float(_ text: String) -> Double? {
        var s = Substring(text)
        if s.first == "+" || s.first == "-" { s = s.dropFirst() }
        let exponentIndex = s.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = exponentIndex.map { s[..<$0] } ?? s
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2,
            parts.allSatisfy({
                !$0.isEmpty && validUnderscores($0) && $0.allSatisfy { $0 == "_" || $0.isASCII && $0.isNumber }
            })
        else { return nil }
        if parts[0].count > 1, parts[0].first == "0" { return nil }
        if let e = exponentIndex {
            var exponent = s[s.index(after: e)...]
            if exponent.first == "+" || exponent.first == "-" { exponent = exponent.dropFirst() }
            guard !exponent.isEmpty, validUnderscores(exponent),
                exponent.allSatisfy({ $0 == "_" || $0.isASCII && $0.isNumber })
            else { return nil }
        } else if parts.count == 1 {
            return nil  // an integer, not a float
        }
        return Double(text.filter { $0 != "_" })
    }

    private static func validUnderscores(_ s: Substring) -> Bool {
        guard !s.isEmpty, s.first != "_", s.last != "_" else { return false }
        return !s.contains("__")
    }

    // MARK: - Characters

    private var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }
    private func lookahead(_ n: Int) -> Unicode.Scalar? { index + n < scalars.count ? scalars[index + n] : nil }
    private var column: Int { index - lineStart + 1 }
    private mutating func advance() { index += 1 }

    private mutating func skipBlanks() {
        while let c = peek, c == " " || c == "\t" { advance() }
    }

    private mutating func newline() throws(TOMLSyntaxError) {
        if peek == "\r" {
            advance()
            guard peek == "\n" else { throw error("a carriage return must be followed by a line feed", back: 1) }
        }
        advance()
        line += 1
        lineStart = index
    }

    private mutating func comment() throws(TOMLSyntaxError) {
        while let c = peek, c != "\n" {
            if c == "\r", lookahead(1) == "\n" { return }
            if Self.isControl(c), c != "\t" { throw error("control character \(Self.describe(c)) in a comment") }
            advance()
        }
    }

    private func error(_ reason: String, back: Int = 0) -> TOMLSyntaxError {
        TOMLSyntaxError(line: line, column: column - back, reason: reason)
    }

    private static func isBareKeyCharacter(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) || c == "_" || c == "-"
    }

    private static func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || c.value == 0x7F }

    private static func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": c.value - 48
        case "a"..."f": c.value - 87
        case "A"..."F": c.value - 55
        default: nil
        }
    }

    static func describe(_ c: Unicode.Scalar) -> String {
        if c.value < 0x20 || c.value == 0x7F || c.value > 0x7E {
            return "U+" + String(c.value, radix: 16, uppercase: true).leftPadded(to: 4)
        }
        return "'\(Character(c))'"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
