import MotionCore
import MotionFixtures
import MotionSimulation
import PlainText
import Testing

@Suite("Decimal parsing in fixtures")
struct DecimalParsingTests {
    /// The number `DecimalParser` reads from `text`, checked to be what a fixture row reads too when it is within a
    /// fixture's range (±1000 g; a fixture refuses a larger one, with its line).
    private func parseOne(_ text: String) throws -> Double {
        var copy = text
        let parsed = copy.withUTF8 { DecimalParser.parse(UnsafeRawBufferPointer($0)) }
        let fixture = Result { try FixtureFileReader.parse("t,ax,ay,az\n0,\(text),0,0", name: "n")[0].ax }
        guard let parsed else { return try fixture.get() }  // the fixture's error
        if abs(parsed) <= MotionSample.accelerationLimit {
            #expect(try fixture.get().bitPattern == parsed.bitPattern, "\(text)")
        } else {
            #expect(throws: FixtureError(file: "n", line: 2, reason: .outOfRange(column: "ax", text: text))) {
                try fixture.get()
            }
        }
        return parsed
    }

    @Test("numbers parse exactly as the standard library parses them")
    func matchesStandardLibrary() throws {
        var random = SeededGenerator(seed: 3)
        var texts = [
            "0", "-0", "+1.5", "1.", ".5", "-.5", "1e3", "1E-3", "12345678901234567890", "0.1", "0.30000000000000004",
            "2.2250738585072014e-308", "4.9e-324", "1.7976931348623157e308", "123456789012345.6", "00001.000100",
            "9007199254740993", "0.000000000000000000000000001", "3.000000033",
        ]
        for _ in 0..<3000 {
            let value = Double(bitPattern: random.next())
            if value.isFinite { texts.append("\(value)") }
            texts.append("\(Double.random(in: -20...20, using: &random))")
            texts.append(
                String(Int.random(in: -99999...99999, using: &random)) + "."
                    + String(Int.random(in: 0...999, using: &random)))
        }
        for text in texts {
            let parsed = try parseOne(text)
            #expect(parsed.bitPattern == Double(text)!.bitPattern, "\(text)")
        }
    }

    @Test("16 to 19 significant digits at every exponent fixtures use parse exactly as the standard library does")
    func longMantissas() throws {
        var random = SeededGenerator(seed: 11)
        var texts: [String] = []
        var expected: [Double] = []
        for index in 0..<60_000 {
            let text: String
            if index % 2 == 0 {
                // Shortest round-trip text of random doubles between 1e-12 and 1e12 (mostly 16-17 digits).
                let exponent = Double.random(in: -12...12, using: &random)
                var value = Double.random(in: 1..<10, using: &random)
                for _ in 0..<Int(abs(exponent)) { value = exponent < 0 ? value / 10 : value * 10 }
                text = "\(index % 4 == 0 ? -value : value)"
            } else {
                // Random 16-19 digit mantissas with a random decimal point and exponent.
                let digits = (0..<Int.random(in: 16...19, using: &random)).map { _ in
                    String(Int.random(in: 0...9, using: &random))
                }
                let point = Int.random(in: 1..<digits.count, using: &random)
                text =
                    "1" + digits[..<point].joined() + "." + digits[point...].joined() + "e"
                    + String(Int.random(in: -30...20, using: &random))
            }
            texts.append(text)
            expected.append(Double(text)!)
        }
        var mismatches = 0
        for (text, value) in zip(texts, expected) {
            var copy = text
            let parsed = copy.withUTF8 { DecimalParser.parse(UnsafeRawBufferPointer($0)) }
            if parsed?.bitPattern != value.bitPattern { mismatches += 1 }
        }
        #expect(mismatches == 0)
        // The same through a fixture, for those a fixture holds (±1000 g): 40 % of them.
        let held = zip(texts, expected).filter { abs($0.1) <= MotionSample.accelerationLimit }
        let rows = held.enumerated().map { "\($0.offset),\($0.element.0),0,0" }
        let samples = try FixtureFileReader.parse((["t,ax,ay,az"] + rows).joined(separator: "\n"), name: "long")
        #expect(held.count > 20_000)
        #expect(samples.map(\.ax.bitPattern) == held.map(\.1.bitPattern))
    }

    @Test(
        "malformed numbers are refused",
        arguments: ["", "-", ".", "1e", "1e+", "1.2.3", "0x", "1,5", "1 2", "e5", "--1"])
    func malformed(text: String) {
        #expect(throws: FixtureError.self) { try parseOne(text) }
    }
}
