import PlainText
import SystemPackage
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A FIFO made in a fresh scratch folder; after `seconds` something opens it for writing and closes it, so a reader
/// that waits for a writer (what the code did before it refused FIFOs) ends at last, and the test fails instead of
/// hanging.
func fifoThatEndsAWait(after seconds: Double = 3) -> String {
    let path = Scratch.directory("fifo") + "/f.toml"
    _ = mkfifo(path, 0o600)
    Task.detached {
        try? await Task.sleep(for: .seconds(seconds))
        let fd = open(path, O_RDWR | O_NONBLOCK)
        if fd >= 0 { close(fd) }
    }
    return path
}

@Suite("Text files")
struct TextFileTests {
    @Test("a FIFO is refused at once as a FIFO, not waited on for a writer")
    func fifoRefused() throws {
        let path = fifoThatEndsAWait()
        #expect(throws: TextFileError.notRegularFile(kind: "a FIFO")) { try TextFile.readBytes(path) }
        #expect(TextFileError.notRegularFile(kind: "a FIFO").description == "a FIFO, not a regular file")
    }

    @Test(
        "a device or a folder is refused with what it is, before any read",
        arguments: [("/dev/zero", "a character device"), ("/dev/null", "a character device"), ("/", "a directory")])
    func notRegularFiles(path: String, kind: String) {
        #expect(throws: TextFileError.notRegularFile(kind: kind)) { try TextFile.read(path) }
    }

    @Test("a regular file is read whole, a missing one gives the system's error, a large one the limit")
    func regularFiles() throws {
        let path = Scratch.file("text")
        try TextFile.write("a = 1\n", to: path)
        #expect(try TextFile.read(path) == "a = 1\n")
        // Reads after the open block again: O_NONBLOCK was only for the open.
        let fd = try TextFile.openRegularFile(path)
        defer { try? fd.close() }
        #expect(fcntl(fd.rawValue, F_GETFL) & O_NONBLOCK == 0)
        #expect(throws: TextFileError.tooLarge(limit: 3)) { try TextFile.readBytes(path, limit: 3) }
        #expect(throws: TextFileError.system(.noSuchFileOrDirectory)) { try TextFile.read(path + ".missing") }
        #expect(TextFileError.system(.noSuchFileOrDirectory).description == "No such file or directory")
    }
}
