import Foundation
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("a journal on a full disk", .serialized)
struct JournalFullDiskTests {
    @Test(
        "a journal that cannot be opened because its disk is full says so (not only SQLite's 'disk I/O error'), in the log and in status",
        .enabled(if: canUnshareMounts, "needs root and unshare -m (repd gets a small full tmpfs of its own)"))
    func fullDiskAtStart() throws {
        let dir = scratchDirectory()
        let full = dir + "/full"
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: false)
        let socketPath = dir + "/events.sock"
        // A 256 KiB tmpfs, filled, in a mount namespace of repd's own (gone with it).
        let daemon = try DaemonProcess(
            executable: try #require(which("unshare")),
            arguments: [
                "-m", "sh", "-c",
                "mount -t tmpfs -o size=256k tmpfs \"$1\" && { dd if=/dev/zero of=\"$1/filler\" bs=4k 2>/dev/null; "
                    + "exec \"$2\" --demo --socket \"$3\" --journal \"$1/events.db\" --quiet; }",
                "sh", full, productsDirectory + "/repd", socketPath,
            ])
        #expect(daemonListens(socketPath), "\(daemon.standardError)")
        let client = try #require(LineClient(path: socketPath))
        client.send("status\n")
        let journal = client.next(type: "status")?["journal"]
        #expect(journal?["writing"] == .bool(false), "\(String(describing: journal))")
        let error = journal?["error"]?.stringValue ?? ""
        #expect(
            error.contains("the file system holding \(full) is full")
                && error.contains("restart repd once there is space"),
            "\(error)")
        #expect(daemon.standardError.contains("is full: "), "\(daemon.standardError)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 30) == 0, "\(daemon.standardError.suffix(3000))")
    }
}
