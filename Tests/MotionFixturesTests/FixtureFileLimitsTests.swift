import MotionCore
import MotionFixtures
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes `count` bytes of `byte` to `path`, a chunk at a time.
private func writeBytes(_ byte: UInt8, count: Int, after prefix: String = "", to path: String) {
    let file = fopen(path, "w")!
    fputs(prefix, file)
    let chunk = [UInt8](repeating: byte, count: 1 << 16)
    var left = count
    while left > 0 {
        let n = min(left, chunk.count)
        _ = chunk.withUnsafeBytes { fwrite($0.baseAddress, 1, n, file) }
        left -= n
    }
    fclose(file)
}

@Suite("Fixture files that are not recordings")
struct FixtureFileLimitsTests {
    @Test("a file of NULs without a line end stops at its first line, after 64 KiB, not all of it held")
    func nulsWithoutLineEnd() throws {
        let path = temporaryDirectory() + "/zeros.csv"
        writeBytes(0, count: 3 << 20, to: path)
        #expect(throws: FixtureError(file: path, line: 1, reason: .lineTooLong(limit: 65536))) {
            try FixtureFileReader.forEachSample(path: path) { _ in }
        }
        let message = "\(FixtureError(file: path, line: 1, reason: .lineTooLong(limit: 65536)))"
        #expect(message.hasPrefix("\(path):1: the line is longer than 65536 bytes: not a recording?"), "\(message)")
    }

    @Test("a long line after good rows is refused with its number, whether it ends or not, read or parsed")
    func longLineAfterRows() throws {
        let rows = "t,ax,ay,az\n0,0,0,1\n"
        let path = temporaryDirectory() + "/long.csv"
        writeBytes(UInt8(ascii: "1"), count: 200_000, after: rows, to: path)
        #expect(throws: FixtureError(file: path, line: 3, reason: .lineTooLong(limit: 65536))) {
            try FixtureFileReader.read(path: path)
        }
        // A whole line of 65537 bytes (it fits the read buffer) and one of exactly 65536 (allowed: not a number).
        let long = rows + "0.1," + String(repeating: "x", count: 65529) + ",0,1\n"
        #expect(throws: FixtureError(file: "mem", line: 3, reason: .lineTooLong(limit: 65536))) {
            try FixtureFileReader.parse(long, name: "mem")
        }
        let path2 = temporaryDirectory() + "/long2.csv"
        writeText(long, to: path2)
        #expect(throws: FixtureError(file: path2, line: 3, reason: .lineTooLong(limit: 65536))) {
            try FixtureFileReader.read(path: path2)
        }
        let longest = rows + "0.1," + String(repeating: "x", count: 65528) + ",0,1\n"
        #expect(
            throws: FixtureError(
                file: "mem", line: 3, reason: .notANumber(column: "ax", text: String(repeating: "x", count: 40) + "…"))
        ) { try FixtureFileReader.parse(longest, name: "mem") }
    }

    @Test(
        "an error quotes at most 40 characters of the field or line, control characters written out",
        arguments: [
            (
                "t,ax,ay,az\n0,0,0,1\n0.1," + String(repeating: "x", count: 60_000) + ",0,1\n", 3,
                FixtureError.Reason.notANumber(column: "ax", text: String(repeating: "x", count: 40) + "…")
            ),
            (
                "t,ax,ay,az\n0,0,0,1\n" + String(repeating: "9", count: 50_000) + ",0,0,1\n", 3,
                .notFinite(column: "t", text: String(repeating: "9", count: 40) + "…")
            ),
            ("t,ax,ay,az\n0,\u{1}bad\u{7F},0,1\n", 2, .notANumber(column: "ax", text: "\\x01bad\\x7f")),
            (
                "0," + String(repeating: "5", count: 60_000) + "\n", 1,
                .missingHeader(found: "0," + String(repeating: "5", count: 38) + "…")
            ),
            (
                "t,ax,ay,az," + String(repeating: "\u{1}", count: 60_000) + "\n", 1,
                .unknownColumn(String(repeating: "\\x01", count: 40) + "…")
            ),
        ])
    func quotesAreShort(text: String, line: Int, reason: FixtureError.Reason) throws {
        let path = temporaryDirectory() + "/quoted.csv"
        writeText(text, to: path)
        #expect(throws: FixtureError(file: path, line: line, reason: reason)) { try FixtureFileReader.read(path: path) }
        #expect(throws: FixtureError(file: "mem", line: line, reason: reason)) {
            try FixtureFileReader.parse(text, name: "mem")
        }
        #expect(FixtureError(file: "mem", line: line, reason: reason).description.utf8.count < 250)
    }

    @Test("a FIFO, a device or a folder is refused at once with what it is, not waited on or read without end")
    func notRegularFiles() throws {
        let fifo = temporaryDirectory() + "/f.csv"
        #expect(mkfifo(fifo, 0o600) == 0)
        Task.detached {
            // Before the fix the open waited for a writer: one comes after 3 s, so the test fails, not hangs.
            try? await Task.sleep(for: .seconds(3))
            let fd = open(fifo, O_RDWR | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        let note = " (a recording is a CSV file: t,ax,ay,az)"
        for (path, kind) in [(fifo, "a FIFO"), ("/dev/zero", "a character device"), ("/", "a directory")] {
            #expect(throws: FixtureError(file: path, line: 0, reason: .io("\(kind), not a regular file" + note))) {
                try FixtureFileReader.read(path: path)
            }
        }
    }
}
