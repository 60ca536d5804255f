import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Open descriptors and resident memory of a process, from /proc.
func processFootprint(_ pid: Int32) -> (fds: Int, rssKiB: Int) {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?
        .split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) } ?? -1
    return (fds, rss)
}

@Suite("repd under faults and abuse", .serialized)
struct FaultTests {
    @Test("clients that vanish mid-write (EPIPE, ECONNRESET) never hurt the daemon or the others")
    func vanishingClients() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--speed", "20", "--socket", socketPath, "--quiet", "--log-level", "warning"])
        #expect(eventually { access(socketPath, F_OK) == 0 })
        let survivor = try #require(LineClient(path: socketPath))
        survivor.send("subscribe rep,set,samples\n")
        for round in 0..<5 {
            var doomed: [LineClient] = []
            for _ in 0..<40 {
                guard let client = LineClient(path: socketPath) else { continue }
                client.send("subscribe rep,set,samples\n")
                var small: Int32 = 1024
                setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                doomed.append(client)
            }
            usleep(100_000)  // let unread samples pile up, then vanish with data in flight (RST)
            var linger = linger(l_onoff: 1, l_linger: 0)
            for client in doomed { setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size)) }
            doomed.removeAll()
            _ = round
        }
        #expect(daemon.process.isRunning)
        #expect(survivor.next(type: "samples", timeout: 5) != nil, "the surviving client still gets data")
        survivor.send("status\n")
        let status = survivor.next(type: "status")
        #expect(status?["clients"]?.int == 1)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("10 000 connect/disconnect cycles leave no descriptors behind and memory flat")
    func connectionChurn() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet", "--log-level", "warning"])
        #expect(eventually { access(socketPath, F_OK) == 0 })
        for _ in 0..<200 { _ = LineClient(path: socketPath) }  // warm up allocators and the event loop
        #expect(eventually { processFootprint(daemon.process.processIdentifier).fds < 40 })
        let before = processFootprint(daemon.process.processIdentifier)
        for cycle in 0..<10_000 {
            let client = LineClient(path: socketPath)
            if cycle % 3 == 0 { client?.send("status\n") }
        }
        var after = processFootprint(daemon.process.processIdentifier)
        #expect(eventually(timeout: 10) {
            after = processFootprint(daemon.process.processIdentifier)
            return after.fds <= before.fds
        }, "descriptors: \(before.fds) before, \(after.fds) after")
        print("churn: fds \(before.fds) → \(after.fds), RSS \(before.rssKiB) KiB → \(after.rssKiB) KiB after 10 000 connections")
        #expect(after.rssKiB - before.rssKiB < 8 * 1024, "RSS grew by \(after.rssKiB - before.rssKiB) KiB")
        #expect(daemon.process.isRunning)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("a socket folder that cannot be created is reported with its path, and the exit code is 1")
    func unusableRuntimeDirectory() throws {
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", "/proc/repd-nowhere/events.sock", "--quiet"])
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.standardError.contains("cannot create the socket folder /proc/repd-nowhere"))
    }
}
