import Foundation
import TestScratch
import Testing

private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

private let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

@Suite("repd-web's systemd unit")
struct SystemdUnitTests {
    @Test(
        "systemd-analyze verify accepts repd-web.service next to repd.service",
        .enabled(if: analyze != nil, "needs systemd-analyze (scripts/install-deps test installs systemd)"))
    func verifies() throws {
        let products = (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") as NSString)
            .deletingLastPathComponent
        let dir = Scratch.directory("units")
        for (name, binary) in [("repd-web.service", "repd-web"), ("repd.service", "repd")] {
            let text = try String(contentsOfFile: repositoryRoot + "/systemd/" + name, encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/\(binary) ", with: "\(products)/\(binary) ")
            try text.write(toFile: dir + "/" + name, atomically: true, encoding: .utf8)
        }
        let (status, output) = try run(analyze!, ["verify", dir + "/repd-web.service", dir + "/repd.service"])
        #expect(status == 0, "\(output)")
        #expect(!output.contains("repd-web.service:"), "\(output)")
    }

    @Test("a malformed configuration exits with a status repd-web.service does not restart on, naming file and line")
    func configurationErrorIsNotRestarted() throws {
        let products = (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") as NSString)
            .deletingLastPathComponent
        let dir = Scratch.directory("malformed-config")
        try "[web]\nlisten = 8080\n".write(toFile: dir + "/malformed.toml", atomically: true, encoding: .utf8)
        let (status, output) = try run(products + "/repd-web", ["--config", dir + "/malformed.toml"])
        #expect(output.contains("malformed.toml:2"), "\(output)")
        let unit = try String(contentsOfFile: repositoryRoot + "/systemd/repd-web.service", encoding: .utf8)
        let prevented = unit.split(separator: "\n").filter { $0.hasPrefix("RestartPreventExitStatus=") }
            .flatMap { $0.dropFirst("RestartPreventExitStatus=".count).split(separator: " ") }.compactMap { Int32($0) }
        #expect(unit.contains("\nRestart=on-failure\n"), "other failures are restarted")
        #expect(
            prevented.contains(status), "exit \(status) would be restarted every RestartSec forever: \(prevented)")
    }
}

/// Runs `executable` with `arguments` to its end: its exit status and what it wrote (standard output and error).
private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, output)
}
