import Foundation
import RepClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The repository's root (the build folder lives in it).
let repositoryRoot: String = {
    var url = URL(fileURLWithPath: productsDirectory)
    while url.path != "/" {
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        url.deleteLastPathComponent()
    }
    return FileManager.default.currentDirectoryPath
}()

func which(_ tool: String) -> String? {
    for folder in ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin"] where access(folder + "/" + tool, X_OK) == 0 {
        return folder + "/" + tool
    }
    return nil
}

@Suite("repd under systemd", .serialized)
struct SystemdIntegrationTests {
    @Test("READY=1, WATCHDOG=1, STATUS and STOPPING=1 reach NOTIFY_SOCKET")
    func notify() throws {
        let dir = scratchDirectory()
        let notifyPath = dir + "/notify.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(listener) }
        let bound = withUnixAddress(notifyPath) { bind(listener, $0, $1) }
        #expect(bound == 0)
        let daemon = try DaemonProcess(
            arguments: ["--demo", "--socket", dir + "/events.sock", "--quiet"],
            environment: ["NOTIFY_SOCKET": notifyPath, "WATCHDOG_USEC": "300000"])

        var messages: [String] = []
        func drain() {
            var pfd = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            while poll(&pfd, 1, 0) > 0 {
                var buffer = [UInt8](repeating: 0, count: 4096)
                let n = recv(listener, &buffer, buffer.count, 0)
                if n > 0 { messages.append(String(decoding: buffer[..<n], as: UTF8.self)) }
            }
        }
        func receive(until wanted: String) -> Bool {
            eventually(timeout: 10) {
                drain()
                return messages.contains { $0.hasPrefix(wanted) }
            }
        }
        #expect(receive(until: "READY=1"))
        #expect(receive(until: "WATCHDOG=1"))
        #expect(receive(until: "STATUS=sensor"))
        let watchdogs = messages.filter { $0 == "WATCHDOG=1" }.count
        #expect(
            eventually(timeout: 3) {
                drain()
                return messages.filter { $0 == "WATCHDOG=1" }.count > watchdogs
            }, "the watchdog keeps being fed while the demo runs")
        daemon.signal(SIGTERM)
        #expect(receive(until: "STOPPING=1"))
        #expect(daemon.waitForExit() == 0, "\(String(daemon.standardError.suffix(12000)))")
    }

    @Test(
        "started by systemd-socket-activate, repd serves the passed socket",
        .enabled(
            if: which("systemd-socket-activate") != nil,
            "needs systemd-socket-activate (scripts/install-deps test installs systemd)"))
    func socketActivation() throws {
        let activate = try #require(which("systemd-socket-activate"))
        let dir = scratchDirectory()
        let socketPath = dir + "/activated.sock"
        let activator = try DaemonProcess(
            executable: activate, arguments: ["-l", socketPath, productsDirectory + "/repd", "--demo", "--quiet"])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        let hello = client.next(timeout: 15, { $0.hello })
        #expect(hello?.sensor.kind == "demo")
        client.send("status\n")
        #expect(client.next(type: "status") != nil)
        activator.signal(SIGTERM)
        _ = activator.waitForExit()
        #expect(activator.standardError.contains("serving the socket passed by systemd"))
    }

    @Test("a malformed configuration exits with a status repd.service does not restart on, naming file and line")
    func configurationErrorIsNotRestarted() throws {
        let dir = scratchDirectory()
        let path = dir + "/malformed.toml"
        try "[detector]\nminimum_match = \"high\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", path, "--demo", "--quiet", "--socket", dir + "/e.sock"])
        let status = try #require(daemon.waitForExit(), "repd did not exit on a malformed configuration")
        #expect(daemon.standardError.contains("malformed.toml:2"), "\(daemon.standardError)")
        #expect(daemon.standardError.contains("minimum_match"), "\(daemon.standardError)")
        let unit = try String(contentsOfFile: repositoryRoot + "/systemd/repd.service", encoding: .utf8)
        #expect(unit.contains("\nRestart=on-failure\n"), "other failures are restarted")
        #expect(
            restartPreventedStatuses(unit).contains(status),
            "exit \(status) would be restarted every RestartSec forever: \(restartPreventedStatuses(unit))")
    }

    @Test(
        "systemd-analyze verify accepts the units",
        .enabled(
            if: which("systemd-analyze") != nil, "needs systemd-analyze (scripts/install-deps test installs systemd)"))
    func unitsVerify() throws {
        let analyze = try #require(which("systemd-analyze"))
        let dir = scratchDirectory()
        let service = try String(contentsOfFile: repositoryRoot + "/systemd/repd.service", encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/repd", with: productsDirectory + "/repd")
        try service.write(toFile: dir + "/repd.service", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(atPath: repositoryRoot + "/systemd/repd.socket", toPath: dir + "/repd.socket")
        let verify = try DaemonProcess(
            executable: analyze, arguments: ["verify", dir + "/repd.service", dir + "/repd.socket"])
        #expect(verify.waitForExit(timeout: 60) == 0, "\(verify.standardError)")
        #expect(!verify.standardError.contains("repd.service:"), "\(verify.standardError)")
    }
}

/// The exit statuses a unit file's `RestartPreventExitStatus=` lines list (numbers only; names such as SIGTERM are
/// left out).
func restartPreventedStatuses(_ unit: String) -> [Int32] {
    unit.split(separator: "\n").filter { $0.hasPrefix("RestartPreventExitStatus=") }
        .flatMap { $0.dropFirst("RestartPreventExitStatus=".count).split(separator: " ") }
        .compactMap { Int32($0) }
}
