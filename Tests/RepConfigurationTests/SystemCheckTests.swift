import Foundation
import Testing
import TestScratch

@testable import RepConfiguration

@Suite("The configuration checked against this system")
struct SystemCheckTests {
    private func configuration(_ text: String) throws -> (DaemonConfiguration, String) {
        let path = Scratch.file("repd", suffix: ".toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (try DaemonConfiguration.load(path: path), path)
    }

    @Test("a socket group that does not exist is named with the file and line")
    func missingGroup() throws {
        let (c, path) = try configuration("# repd\n\n[socket]\nmode = \"0660\"\ngroup = \"no-such-group-here\"\n")
        #expect(throws: ConfigError.self) { try c.checkAgainstSystem(file: path) }
        do { try c.checkAgainstSystem(file: path) } catch {
            #expect(error.file == path && error.line == 5 && error.key == "socket.group", "\(error)")
            #expect(error.reason.contains("no group 'no-such-group-here' on this system"))
        }
        let (root, rootPath) = try configuration("[socket]\ngroup = \"root\"\n")
        try root.checkAgainstSystem(file: rootPath)
    }

    @Test("a socket path longer than a Unix socket address holds is refused; 107 bytes are accepted")
    func socketPathLength() throws {
        #expect(DaemonConfiguration.longestSocketPath == 107)
        let fits = "/" + String(repeating: "a", count: 106)
        let (ok, okPath) = try configuration("[socket]\npath = \"\(fits)\"\n")
        try ok.checkAgainstSystem(file: okPath)
        let (long, longPath) = try configuration("[socket]\npath = \"\(fits)b\"\n")
        do {
            try long.checkAgainstSystem(file: longPath)
            Issue.record("108 bytes accepted")
        } catch {
            #expect(error.line == 2 && error.key == "socket.path", "\(error)")
            #expect(error.reason.contains("108 bytes; a Unix socket's path holds at most 107"))
        }
        do {
            try long.checkAgainstSystem(file: longPath, flags: ["socket.path": "--socket"])
            Issue.record("108 bytes accepted")
        } catch {
            #expect(error.file == "command line" && error.key == "--socket" && error.line == 0, "\(error)")
        }
    }

    @Test("a socket path under a regular file is refused, naming the file; under missing folders it is not")
    func socketUnderAFile() throws {
        let file = Scratch.file("not-a-folder", suffix: ".csv")
        try "t,ax,ay,az\n".write(toFile: file, atomically: true, encoding: .utf8)
        for socketPath in [file + "/x.sock", file + "/deeper/x.sock"] {
            let (c, path) = try configuration("[socket]\npath = \"\(socketPath)\"\n")
            do {
                try c.checkAgainstSystem(file: path)
                Issue.record("\(socketPath) accepted")
            } catch {
                #expect(error.line == 2 && error.key == "socket.path", "\(error)")
                #expect(error.reason == "'\(file)' is a regular file, not a folder: the socket cannot be made under it")
            }
        }
        let (missing, missingPath) = try configuration("[socket]\npath = \"/nonexistent/a/b/x.sock\"\n")
        try missing.checkAgainstSystem(file: missingPath)  // the socket server makes its folder, or says why not
        let (relative, relativePath) = try configuration("[socket]\npath = \"x.sock\"\n")
        try relative.checkAgainstSystem(file: relativePath)
    }

    @Test("a fixture that is missing or not a file is refused only when the provider replays it")
    func fixture() throws {
        let (missing, path) = try configuration(
            "[sensor]\nprovider = \"fixture\"\n\n[fixture]\npath = \"/nonexistent/set.csv\"\n")
        do {
            try missing.checkAgainstSystem(file: path)
            Issue.record("a missing fixture accepted")
        } catch {
            #expect(error.line == 5 && error.key == "fixture.path", "\(error)")
            #expect(error.reason == "cannot read '/nonexistent/set.csv': No such file or directory")
        }
        var folder = missing
        folder.fixturePath = "/"
        do {
            try folder.checkAgainstSystem(file: path, flags: ["fixture.path": "--fixture"])
            Issue.record("a folder accepted as a fixture")
        } catch {
            #expect(error.key == "--fixture" && error.reason.contains("is not a regular file"), "\(error)")
        }
        var demo = missing
        demo.provider = .demo
        try demo.checkAgainstSystem(file: path)
    }

    @Test("the defaults pass, and the line of a key is found in its table")
    func defaults() throws {
        try DaemonConfiguration().checkAgainstSystem(file: nil)
        let (_, path) = try configuration("[socket]\n\nmode = \"0660\"\n[journal]\nstation = \"a\"\n")
        #expect(DaemonConfiguration.line(of: "socket.mode", inFile: path) == 3)
        #expect(DaemonConfiguration.line(of: "journal.station", inFile: path) == 5)
        #expect(DaemonConfiguration.line(of: "socket.group", inFile: path) == 1, "a missing key: its table's line")
        #expect(DaemonConfiguration.line(of: "socket.group", inFile: "/nonexistent.toml") == 0)
    }
}
