import PlainText
import Testing

@Suite("Plain text")
struct PlainTextTests {
    @Test(
        "parseDecimal reads numbers as sysfs prints them, white space around allowed",
        arguments: [
            ("0.009576806\n", 0.009576806), ("-2", -2.0), ("+1.5", 1.5), (" 1e-3\t", 0.001),
            ("3.000000033", 3.000000033),
        ])
    func decimals(text: String, value: Double) {
        #expect(parseDecimal(text) == value)
    }

    @Test(
        "parseDecimal refuses what is not a finite decimal",
        arguments: ["", " ", "nan", "inf", "0x10", "1,5", "1 2", "e"])
    func notDecimals(text: String) {
        #expect(parseDecimal(text) == nil)
    }

    @Test(
        "trimming removes only the chosen characters, and only at the edges",
        arguments: [("  a b \n", "a b"), ("\0monotonic\n\0", "monotonic"), ("x", "x"), (" \t", ""), ("", "")])
    func trimming(text: String, expected: String) {
        #expect(text.trimming { $0.isWhitespace || $0 == "\0" } == expected)
    }
}

/// The excerpt cases, typed outside the @Test attribute: Swift 6.0.3 (Debian trixie's) could not type-check them there
/// in reasonable time (docs/PACKAGING.md, "Tests").
private let excerptCases: [(String, String)] = [
    ("short", "short"), ("", ""), (String(repeating: "7", count: 40), String(repeating: "7", count: 40)),
    (String(repeating: "7", count: 41), String(repeating: "7", count: 40) + "…"),
    (String(repeating: "9", count: 5_000_000), String(repeating: "9", count: 40) + "…"),
    ("a\u{0}b\nc\u{7F}\u{85}", "a\\x00b\\nc\\x7f\\u{85}"),
    (String(repeating: "é", count: 50), String(repeating: "é", count: 40) + "…"),
]

@Suite("Log text")
struct LogTextTests {
    @Test(
        "an excerpt keeps at most the limit of characters, writes control characters out and marks a cut with …",
        arguments: excerptCases)
    func excerpt(text: String, expected: String) {
        #expect(LogText.excerpt(text) == expected)
        var copy = text
        let fromBytes = copy.withUTF8 { LogText.excerpt(utf8: UnsafeRawBufferPointer($0)) }
        #expect(fromBytes == expected)
    }
}
