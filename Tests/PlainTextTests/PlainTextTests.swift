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
