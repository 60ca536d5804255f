import MotionCore
import MotionFixtures
import MotionSimulation
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh directory for one test (removed with the test process's scratch folder).
func temporaryDirectory() -> String {
    Scratch.directory("fixtures")
}

func writeText(_ text: String, to path: String) {
    let file = fopen(path, "w")!
    fputs(text, file)
    fclose(file)
}

@Suite("Fixture files")
struct FixtureFileTests {
    @Test("writing then reading gives identical samples, bit for bit")
    func roundTrip() throws {
        var random = SeededGenerator(seed: 7)
        var samples: [MotionSample] = []
        var t = 0.0
        for _ in 0..<5000 {
            t += Double.random(in: 0.0001..<0.1, using: &random)
            let scale = [1e-300, 1e-9, 1e-3, 1.0, 499].randomElement(using: &random)!  // a fixture holds ±1000 g
            samples.append(
                MotionSample(
                    timestamp: t,
                    ax: Double.random(in: -2...2, using: &random) * scale,
                    ay: Double.random(in: -2...2, using: &random),
                    az: Double(Int.random(in: -3...3, using: &random))))
        }
        samples.append(
            MotionSample(timestamp: t + 1, ax: -0.0, ay: .leastNonzeroMagnitude, az: -MotionSample.accelerationLimit))
        let path = temporaryDirectory() + "/round.csv"
        try FixtureFileWriter.write(samples, to: path)
        let back = try FixtureFileReader.read(path: path)
        #expect(back.count == samples.count)
        #expect(back.map(\.timestamp.bitPattern) == samples.map(\.timestamp.bitPattern))
        #expect(back.map(\.ax.bitPattern) == samples.map(\.ax.bitPattern))
        #expect(back.map(\.ay.bitPattern) == samples.map(\.ay.bitPattern))
        #expect(back.map(\.az.bitPattern) == samples.map(\.az.bitPattern))
    }

    @Test("a file larger than one read chunk is read whole, lines split across chunks included")
    func largeFileAcrossChunks() throws {
        let samples = rampSamples(count: 40_000, interval: 0.001)
        let path = temporaryDirectory() + "/large.csv"
        try FixtureFileWriter.write(samples, to: path)
        var count = 0
        try FixtureFileReader.forEachSample(path: path) { sample in
            #expect(sample == samples[count])
            count += 1
        }
        #expect(count == samples.count)
    }

    @Test("the writer leaves nothing under the final name until finish")
    func writerIsAtomic() throws {
        let path = temporaryDirectory() + "/atomic.csv"
        let writer = try FixtureFileWriter(path: path)
        try writer.append(rampSamples(count: 3))
        #expect(access(path, F_OK) != 0)
        #expect(access(path + ".partial", F_OK) == 0)
        try writer.finish()
        #expect(access(path, F_OK) == 0)
        #expect(access(path + ".partial", F_OK) != 0)
        #expect(try FixtureFileReader.read(path: path).count == 3)
    }

    @Test("CRLF line ends, spaces, blank lines, any column order and no final newline are accepted")
    func lenientLayout() throws {
        let text = "az, t ,ax,ay\r\n1.0,0,0.5,-0.5\r\n\r\n1,0.02,0.25,1e-3"
        let samples = try FixtureFileReader.parse(text)
        #expect(
            samples == [
                MotionSample(timestamp: 0, ax: 0.5, ay: -0.5, az: 1),
                MotionSample(timestamp: 0.02, ax: 0.25, ay: 0.001, az: 1),
            ])
    }

    @Test(
        "bad input is refused with its line number and reason",
        arguments: [
            ("", 0, FixtureError.Reason.emptyFile),
            ("\n\n", 0, .emptyFile),
            ("0,1,2,3\n", 1, .missingHeader(found: "0,1,2,3")),
            ("t,ax,ay,az,gx\n0,0,0,1,0\n", 1, .unknownColumn("gx")),
            ("t,ax,ay\n", 1, .missingColumn("az")),
            ("t,ax,ax,az\n", 1, .duplicateColumn("ax")),
            ("t,ax,ay,az\n", 1, .noSamples),
            ("t,ax,ay,az\n0,0,0,1\n0.1,0,0\n", 3, .wrongFieldCount(expected: 4, found: 3)),
            ("t,ax,ay,az\n0,0,0,1,9\n", 2, .wrongFieldCount(expected: 4, found: 5)),
            ("t,ax,ay,az\n0,0,0,1\n0.1,zero,0,1\n", 3, .notANumber(column: "ax", text: "zero")),
            ("t,ax,ay,az\n0,0,,1\n", 2, .notANumber(column: "ay", text: "")),
            ("t,ax,ay,az\n0,0,0,nan\n", 2, .notFinite(column: "az", text: "nan")),
            ("t,ax,ay,az\n0,inf,0,1\n", 2, .notFinite(column: "ax", text: "inf")),
            ("t,ax,ay,az\n0,1e999,0,1\n", 2, .notFinite(column: "ax", text: "1e999")),
            ("t,ax,ay,az\n1,0,0,1\n2,0,0,1\n1.5,0,0,1\n", 4, .timeWentBackwards(previous: 2, found: 1.5)),
            ("t,ax,ay,az\n0,0,0,1\n0.02,1e300,0,1\n", 3, .outOfRange(column: "ax", text: "1e300")),
            ("t,ax,ay,az\n0,0,0,-1000.5\n", 2, .outOfRange(column: "az", text: "-1000.5")),
            (
                "t,ax,ay,az\n0,0,0,1\n1733480000000000000,0,0,1\n", 3,
                .outOfRange(column: "t", text: "1733480000000000000")
            ),
            ("\u{FEFF}t,ax,ay\n", 1, .missingColumn("az")),
        ])
    func badInput(text: String, line: Int, reason: FixtureError.Reason) throws {
        let path = temporaryDirectory() + "/bad.csv"
        writeText(text, to: path)
        #expect(throws: FixtureError(file: path, line: line, reason: reason)) {
            try FixtureFileReader.read(path: path)
        }
        #expect(throws: FixtureError(file: "mem", line: line, reason: reason)) {
            try FixtureFileReader.parse(text, name: "mem")
        }
    }

    @Test("a byte order mark before the header is skipped, and ±1000 g and ±10¹² s are still read")
    func byteOrderMarkAndLimits() throws {
        let samples = try FixtureFileReader.parse("\u{FEFF}t,ax,ay,az\n-1e12,1000,-1000,1\n1e12,0,0,1\n", name: "mem")
        #expect(
            samples == [
                MotionSample(timestamp: -1e12, ax: 1000, ay: -1000, az: 1),
                MotionSample(timestamp: 1e12, ax: 0, ay: 0, az: 1),
            ])
    }

    @Test("an out-of-range value's message says which units were expected")
    func outOfRangeMessages() {
        let time = FixtureError(file: "ns.csv", line: 3, reason: .outOfRange(column: "t", text: "1733480000000000000"))
        #expect(time.description.hasPrefix("ns.csv:3: t: '1733480000000000000' is beyond ±10¹² s"))
        #expect(time.description.contains("seconds"))
        let value = FixtureError(file: "a.csv", line: 2, reason: .outOfRange(column: "ax", text: "1e300"))
        #expect(
            value.description == "a.csv:2: ax: '1e300' is beyond ±1000 g: accelerations are in g (1 g = 9.80665 m/s²)")
    }

    @Test("a missing file is an I/O error naming the path")
    func missingFile() {
        #expect {
            try FixtureFileReader.read(path: "/nonexistent/x.csv")
        } throws: { error in
            guard let error = error as? FixtureError, case .io(let message) = error.reason else { return false }
            return error.file == "/nonexistent/x.csv" && message.contains("cannot open")
        }
    }

    @Test("the error message reads file:line: reason")
    func errorDescription() {
        let error = FixtureError(file: "set.csv", line: 12, reason: .notANumber(column: "ay", text: "x"))
        #expect(error.description == "set.csv:12: ay: 'x' is not a number")
    }
}
