import Foundation
import RepClient
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The shared objects a process maps (from /proc/PID/maps), by file name.
private func mappedLibraries(_ pid: Int32) -> Set<String> {
    // Read to the end: a /proc file has no size, and a single read may stop at a page.
    guard let data = FileHandle(forReadingAtPath: "/proc/\(pid)/maps")?.readDataToEndOfFile() else { return [] }
    let text = String(decoding: data, as: UTF8.self)
    return Set(
        text.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.map {
                String($0.split(separator: "/").last ?? "")
            }
        }.filter { $0.contains(".so") })
}

/// libmosquitto where Debian and Ubuntu put it for the architecture the tests were built for.
#if arch(arm64)
    private let mosquittoLibrary = "/usr/lib/aarch64-linux-gnu/libmosquitto.so.1"
#else
    private let mosquittoLibrary = "/usr/lib/x86_64-linux-gnu/libmosquitto.so.1"
#endif

@Suite("libmosquitto is opened only for an uplink (#20 footprint)", .serialized)
struct UplinkLibraryTests {
    @Test("without an uplink repd maps neither libmosquitto nor OpenSSL; with one it opens libmosquitto")
    func openedOnlyForAnUplink() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--speed", "20", "--socket", socketPath, "--journal", dir + "/events.db", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let libraries = mappedLibraries(daemon.process.processIdentifier)
        #expect(libraries.contains { $0.hasPrefix("libsqlite3") }, "the maps were read: \(libraries)")
        #expect(
            !libraries.contains { $0.hasPrefix("libmosquitto") || $0.hasPrefix("libssl") || $0.hasPrefix("libcrypto") },
            "\(libraries.sorted())")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)

        // An uplink to a port nothing listens on: the library is opened at the first connection attempt.
        let config = dir + "/uplink.toml"
        try "[uplink]\nenabled = true\nhost = \"127.0.0.1\"\nport = 1\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        unlink(socketPath)
        let withUplink = try DaemonProcess(arguments: [
            "--config", config, "--demo", "--speed", "20", "--socket", socketPath, "--journal", dir + "/events.db",
            "--quiet",
        ])
        #expect(daemonListens(socketPath))
        #expect(
            eventually {
                mappedLibraries(withUplink.process.processIdentifier).contains { $0.hasPrefix("libmosquitto") }
            })
        withUplink.signal(SIGTERM)
        #expect(withUplink.waitForExit() == 0)
    }

    @Test(
        "an uplink without libmosquitto says which library is missing and how to install it; counting goes on",
        .enabled(
            if: privateMountPrerequisite == nil,
            Comment(rawValue: (privateMountPrerequisite ?? "") + ": libmosquitto is hidden there")),
        .enabled(
            if: FileManager.default.fileExists(atPath: mosquittoLibrary),
            // Joined, not interpolated: Swift 6.0.3 crashes on an interpolation here (docs/PACKAGING.md, "Tests").
            Comment(rawValue: mosquittoLibrary + " is not installed, so there is nothing to hide")))
    func missingLibrary() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let config = dir + "/uplink.toml"
        try "[uplink]\nenabled = true\nhost = \"127.0.0.1\"\nport = 1\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let library = URL(fileURLWithPath: mosquittoLibrary).resolvingSymlinksInPath().path
        let daemon = try DaemonProcess(
            executable: "/usr/bin/unshare",
            arguments: [
                "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind /dev/null \(library) && exec \"$0\" \"$@\"", productsDirectory + "/repd",
                "--config", config, "--demo", "--speed", "20", "--socket", socketPath, "--journal", dir + "/events.db",
                "--quiet",
            ])
        #expect(daemonListens(socketPath))
        let client = try #require(LineClient(path: socketPath))
        var reps = 0
        while reps < 3, client.next(type: "rep", timeout: 30) != nil { reps += 1 }
        #expect(reps == 3, "counting goes on")
        client.send("status\n")
        let status = try #require(client.next { $0.status })
        #expect(status.uplink?.lastError?.contains("libmosquitto could not be loaded") == true, "\(status)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        #expect(
            daemon.standardError.contains("libmosquitto could not be loaded"), "\(daemon.standardError.suffix(1500))")
        #expect(daemon.standardError.contains("apt install libmosquitto1"))
    }
}
