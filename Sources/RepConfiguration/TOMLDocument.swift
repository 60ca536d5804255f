/// The TOML that repd's configuration file uses, read without Foundation.
///
/// repd's configuration is a handful of tables of scalar keys. The maintained Swift TOML package (TOMLKit) links
/// full Foundation and with it 30+ MB of ICU data into a static binary, and its C++ core aborts on some malformed
/// input; so repd reads this subset of TOML 1.0 itself and says exactly what it does not accept:
///
/// - comments (`#`), blank lines, LF or CRLF line ends;
/// - `[table]` headers with a bare key (`A-Za-z0-9_-`), each table at most once;
/// - `key = value` lines with a bare key, each key at most once per table;
/// - values: basic strings `"…"` (escapes `\b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX`), literal strings `'…'`,
///   integers (decimal with `_` between digits, `0x`, `0o`, `0b`), floats (`1.5`, `-2e-3`, `inf`, `nan`),
///   `true`/`false`, and arrays of these (over several lines, trailing comma allowed, comments between items).
///
/// Not accepted, each with its own message: dotted or quoted keys, arrays of tables (`[[x]]`), inline tables
/// (`{ }`), multi-line strings, dates and times. Every error carries the line and column.
struct TOMLDocument: Sendable, Equatable {
    /// A value with the line it starts on.
    struct Entry: Sendable, Equatable {
        var value: TOMLValue
        var line: Int
    }

    /// A `[table]`: its header's line and its keys.
    struct Table: Sendable, Equatable {
        var line: Int
        var entries: [String: Entry]
    }

    /// Keys before the first table header.
    var root: [String: Entry] = [:]
    /// The tables, by name.
    var tables: [String: Table] = [:]

    /// Parses `text`; the first problem found is thrown with its line and column.
    static func parse(_ text: String) throws(TOMLSyntaxError) -> TOMLDocument {
        var parser = TOMLParser(text)
        return try parser.document()
    }
}

/// A TOML value of the kinds repd's configuration uses.
enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case bool(Bool)
    case array([TOMLValue])

    /// What the value is, for messages ("a string", "an array").
    var kind: String {
        switch self {
        case .string: "a string"
        case .integer: "a whole number"
        case .float: "a number"
        case .bool: "true or false"
        case .array: "an array"
        }
    }
}

/// Where and why a configuration file is not TOML repd can read.
struct TOMLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// 1-based line.
    var line: Int
    /// 1-based column, in characters.
    var column: Int
    /// What is wrong.
    var reason: String

    var description: String { "column \(column): \(reason)" }
}
