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

    @Test("a configuration path naming a FIFO or a device is refused at once with what it is (a FIFO hung repd)")
    func configurationNotARegularFile() throws {
        let fifo = Scratch.file("repd", suffix: ".toml")
        #expect(mkfifo(fifo, 0o600) == 0)
        Task.detached {
            // Before the fix the open waited for a writer: one comes after 3 s, so the test fails, not hangs.
            try? await Task.sleep(for: .seconds(3))
            let fd = open(fifo, O_RDWR | O_NONBLOCK)
            if fd >= 0 { close(fd) }
        }
        let note = " (a configuration file is TOML text, e.g. /etc/repd/repd.toml)"
        for (path, kind) in [(fifo, "a FIFO"), ("/dev/zero", "a character device"), ("/", "a directory")] {
            #expect(throws: ConfigError(file: path, line: 0, key: "", reason: "\(kind), not a regular file" + note)) {
                try DaemonConfiguration.load(path: path)
            }
        }
        #expect(
            throws: ConfigError(
                file: "/nonexistent.toml", line: 0, key: "", reason: "cannot read: No such file or directory")
        ) {
            try DaemonConfiguration.load(path: "/nonexistent.toml")
        }
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
        let (relative, relativePath) = try configuration("[socket]\npath = \"x.sock\"\n")
        try relative.checkAgainstSystem(file: relativePath)
    }

    @Test(
        "a socket folder that repd can make (the one above it exists) is accepted; deeper missing folders are refused, as a start would fail"
    )
    func socketFolders() throws {
        let base = Scratch.directory("socket-folders")
        let (one, onePath) = try configuration("[socket]\npath = \"\(base)/run/x.sock\"\n")
        try one.checkAgainstSystem(file: onePath)
        let (deep, deepPath) = try configuration("[socket]\npath = \"\(base)/a/b/x.sock\"\n")
        do {
            try deep.checkAgainstSystem(file: deepPath)
            Issue.record("two missing folders accepted")
        } catch {
            #expect(error.line == 2 && error.key == "socket.path", "\(error)")
            #expect(error.reason.hasPrefix("'\(base)/a/b' does not exist, nor the folder above it"), "\(error)")
        }
    }

    @Test("a socket path that names a regular file or a folder is refused (a start refuses it too); a socket is not")
    func socketPathThatIsNoSocket() throws {
        let base = Scratch.directory("socket-kinds")
        try "precious\n".write(toFile: base + "/notes.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: base + "/dir", withIntermediateDirectories: false)
        for (name, kind) in [("notes.txt", "a regular file"), ("dir", "a directory")] {
            let (c, path) = try configuration("[socket]\npath = \"\(base)/\(name)\"\n")
            do {
                try c.checkAgainstSystem(file: path)
                Issue.record("\(name) accepted")
            } catch {
                #expect(error.key == "socket.path", "\(error)")
                #expect(error.reason.hasPrefix("'\(base)/\(name)' exists and is \(kind), not a socket"), "\(error)")
            }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let socketPath = base + "/s.sock"
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in socketPath.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        let (ok, okPath) = try configuration("[socket]\npath = \"\(socketPath)\"\n")
        try ok.checkAgainstSystem(file: okPath)
    }

    @Test(
        "an explicit journal path that is a folder, lies under a file or in a missing folder is refused; auto and off are not checked"
    )
    func journalPath() throws {
        let base = Scratch.directory("journal-paths")
        try "x\n".write(toFile: base + "/file", atomically: true, encoding: .utf8)
        let cases = [
            (base, "'\(base)' is a folder: name the journal's file in it"),
            (
                base + "/file/events.db",
                "'\(base)/file' is a regular file, not a folder: the journal cannot be made under it"
            ),
            (base + "/missing/events.db", "its folder '\(base)/missing' does not exist (repd does not make it)"),
        ]
        for (journal, reason) in cases {
            let (c, path) = try configuration("# repd\n[journal]\npath = \"\(journal)\"\n")
            do {
                try c.checkAgainstSystem(file: path)
                Issue.record("\(journal) accepted")
            } catch {
                #expect(error.line == 3 && error.key == "journal.path", "\(error)")
                #expect(error.reason.hasPrefix(reason), "\(error)")
            }
        }
        for journal in [base + "/events.db", "auto", ""] {
            let (c, path) = try configuration("[journal]\npath = \"\(journal)\"\n")
            try c.checkAgainstSystem(file: path)
        }
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
            #expect(
                error.key == "--fixture" && error.reason.contains("'/' is a directory, not a regular file"), "\(error)")
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
