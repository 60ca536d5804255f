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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: analyze!)
        process.arguments = ["verify", dir + "/repd-web.service", dir + "/repd.service"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(!output.contains("repd-web.service:"), "\(output)")
    }
}
