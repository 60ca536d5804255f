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
                && error.contains("repd opens it once there is space"),
            "\(error)")
        #expect(daemon.standardError.contains("is full: "), "\(daemon.standardError)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 30) == 0, "\(daemon.standardError.suffix(3000))")
    }

    @Test(
        "a journal that cannot be opened at start because its disk is full opens once there is space, with no restart: later events carry ids and can be replayed, and the uplink waits for it",
        .enabled(if: canUnshareMounts, "needs root and unshare -m (repd gets a small full tmpfs of its own)"))
    func fullDiskAtStartThenSpace() throws {
        let dir = scratchDirectory()
        let full = dir + "/full"
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: false)
        let socketPath = dir + "/events.sock"
        let config = dir + "/repd.toml"
        // An uplink to a port nothing listens on: it cannot connect, but it must wait for the journal first.
        try "[uplink]\nenabled = true\nhost = \"127.0.0.1\"\nport = \(freePort())\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        // A full 256 KiB tmpfs, made free by removing the filler once `free` exists (the test makes it).
        let daemon = try DaemonProcess(
            executable: try #require(which("unshare")),
            arguments: [
                "-m", "sh", "-c",
                "mount -t tmpfs -o size=256k tmpfs \"$1\" && { dd if=/dev/zero of=\"$1/filler\" bs=4k 2>/dev/null; "
                    + "( while [ ! -e \"$4/free\" ]; do sleep 0.1; done; rm -f \"$1/filler\" ) & "
                    + "exec \"$2\" --demo --speed 4 --loop --config \"$5\" --socket \"$3\" --journal \"$1/events.db\" --quiet; }",
                "sh", full, productsDirectory + "/repd", socketPath, dir, config,
            ])
        defer {
            daemon.signal(SIGTERM)
            _ = daemon.waitForExit(timeout: 30)
        }
        #expect(daemonListens(socketPath), "\(daemon.standardError)")
        let client = try #require(LineClient(path: socketPath))
        client.send("status\n")
        let before = client.next(type: "status")
        #expect(before?["journal"]?["writing"] == .bool(false), "\(String(describing: before))")
        #expect(
            before?["uplink"]?["last_error"]?.stringValue == "waiting for the event journal, which cannot be opened",
            "\(String(describing: before?["uplink"]))")
        // An event that went out while the journal could not be opened carries no id.
        let early = client.next(type: "rep", timeout: 30)
        #expect(early != nil && early?["id"] == nil, "\(String(describing: early))")

        FileManager.default.createFile(atPath: dir + "/free", contents: nil)
        // Tries come 1, 2, 4, 8, 16 s apart: within a minute of the space coming back it opens.
        let (opened, status) = client.statusOnceJournalWrites(timeout: 60)
        #expect(opened, "\(String(describing: status))\n\(daemon.standardError.suffix(3000))")
        #expect(status?["journal"]?["error"] == nil, "\(String(describing: status))")
        // The uplink starts just after the journal is attached, so status may still say it waits for a moment.
        var uplink: JSONValue?
        #expect(
            eventually(timeout: 10) {
                client.send("status\n")
                uplink = client.next(type: "status")?["uplink"]
                return uplink?["last_error"]?.stringValue != "waiting for the event journal, which cannot be opened"
            }, "\(String(describing: uplink))")
        // Logged just after the journal is attached, so status may say so first (seen under ThreadSanitizer).
        #expect(
            eventually(timeout: 10) { daemon.standardError.contains("events.db opened after") },
            "\(daemon.standardError.suffix(3000))")

        // Events from then on are journaled: a rep with an id, and a replay from the start sends it again.
        let journaled = client.next(timeout: 30) { line -> Int64? in
            guard case .event(let event) = line, event.type == "rep" else { return nil }
            return event.id
        }
        let id = try #require(journaled, "no rep with an id within 30 s")
        let replayer = try #require(LineClient(path: socketPath))
        replayer.send("subscribe since=0\n")
        var subscribed = false  // live events of the default types may come before `subscribed`, not the replay
        let replayed = replayer.next(timeout: 10) { line -> Int64? in
            if case .subscribed = line { subscribed = true }
            guard subscribed, case .event(let event) = line, let eventID = event.id, eventID >= id else { return nil }
            return eventID
        }
        #expect(replayed == id, "the replay from 0 did not send event \(id) first")
    }
}
