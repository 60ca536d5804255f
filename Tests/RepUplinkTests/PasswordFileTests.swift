import Foundation
import TestScratch
import Testing

@testable import RepUplink

@Suite("the broker password file")
struct PasswordFileTests {
    private func file(_ text: String, mode: mode_t) throws -> String {
        let path = Scratch.file("password")
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test("one line is the password, without its newline")
    func reads() throws {
        #expect(try PasswordFile.read(file("s3cret word\n", mode: 0o600)) == "s3cret word")
        #expect(try PasswordFile.read(file("s3cret", mode: 0o640)) == "s3cret")
    }

    @Test("a file written on Windows: its line end (\\r\\n) and Notepad's byte order mark are not part of the password")
    func windowsLineEnds() throws {
        #expect(try PasswordFile.read(file("s3cret\r\n", mode: 0o600)) == "s3cret")
        #expect(try PasswordFile.read(file("\u{FEFF}s3cret word\r\n", mode: 0o600)) == "s3cret word")
        let twoLines = try file("a\r\nb\r\n", mode: 0o600)
        #expect(PasswordFile.problem(twoLines) == .severalLines)
        #expect(PasswordFile.problem(try file("\r\n", mode: 0o600)) == .empty)
    }

    @Test("a file other users can read, an empty file, two lines or no file are refused, naming the file")
    func refuses() throws {
        let readable = try file("s3cret\n", mode: 0o644)
        #expect(
            throws: UplinkError(
                .passwordFile,
                "uplink.password_file \(readable) has mode 644: other users can read it; make it 600 or 640 (chmod o= \(readable))"
            )
        ) {
            try PasswordFile.read(readable)
        }
        let empty = try file("\n", mode: 0o600)
        #expect(throws: UplinkError(.passwordFile, "uplink.password_file \(empty) is empty")) {
            try PasswordFile.read(empty)
        }
        let two = try file("a\nb\n", mode: 0o600)
        #expect(
            throws: UplinkError(
                .passwordFile, "uplink.password_file \(two) has more than one line (it holds only the password)")
        ) {
            try PasswordFile.read(two)
        }
        #expect(throws: UplinkError(.passwordFile, "uplink.password_file /nonexistent/pw: No such file or directory")) {
            try PasswordFile.read("/nonexistent/pw")
        }
    }

    @Test("a FIFO is refused at once as a FIFO (its read waited for a writer: the uplink hung), a folder as a folder")
    func notRegularFiles() throws {
        let fifo = Scratch.file("password")
        #expect(mkfifo(fifo, 0o600) == 0)
        Task.detached {
            // Before the fix the open waited for a writer: one comes after 3 s, so the test fails, not hangs.
            try? await Task.sleep(for: .seconds(3))
            let fd = open(fifo, O_RDWR | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        #expect(PasswordFile.problem(fifo) == .notRegularFile("a FIFO"))
        #expect(
            throws: UplinkError(
                .passwordFile, "uplink.password_file \(fifo) is a FIFO, not a regular file (it holds only the password)"
            )
        ) {
            try PasswordFile.read(fifo)
        }
        let folder = Scratch.directory("password")
        chmod(folder, 0o700)
        #expect(PasswordFile.problem(folder) == .notRegularFile("a directory"))
    }
}
