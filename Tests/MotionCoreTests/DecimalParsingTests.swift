import MotionCore
import Testing

@Suite("Decimal parsing in fixtures")
struct DecimalParsingTests {
    private func parseOne(_ text: String) throws -> Double {
        try FixtureFileReader.parse("t,ax,ay,az\n0,\(text),0,0", name: "n")[0].ax
    }

    @Test("numbers parse exactly as the standard library parses them")
    func matchesStandardLibrary() throws {
        var random = SeededGenerator(seed: 3)
        var texts = ["0", "-0", "+1.5", "1.", ".5", "-.5", "1e3", "1E-3", "12345678901234567890", "0.1", "0.30000000000000004",
                     "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "123456789012345.6", "00001.000100",
                     "9007199254740993", "0.000000000000000000000000001", "3.000000033"]
        for _ in 0..<3000 {
            let value = Double(bitPattern: random.next())
            if value.isFinite { texts.append("\(value)") }
            texts.append("\(Double.random(in: -20...20, using: &random))")
            texts.append(String(Int.random(in: -99999...99999, using: &random)) + "." + String(Int.random(in: 0...999, using: &random)))
        }
        for text in texts {
            let parsed = try parseOne(text)
            #expect(parsed.bitPattern == Double(text)!.bitPattern, "\(text)")
        }
    }

    @Test("malformed numbers are refused", arguments: ["", "-", ".", "1e", "1e+", "1.2.3", "0x", "1,5", "1 2", "e5", "--1"])
    func malformed(text: String) {
        #expect(throws: FixtureError.self) { try parseOne(text) }
    }
}
