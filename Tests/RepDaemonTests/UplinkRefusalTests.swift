import Foundation
import RepClient
import RepProtocol
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// CPU seconds (user + system) the process `pid` has used, from /proc/PID/stat; nil when it cannot be read.
private func cpuSeconds(_ pid: Int32) -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    // After "pid (comm)": state is field 3, utime 14 and stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// A broker that speaks only MQTT 3.1.1, as older ones do: a proxy in front of mosquitto that answers an MQTT 5
/// CONNECT with 3.1.1's "unacceptable protocol version" (CONNACK return code 1) and closes, and passes every other
/// connection through.
private final class MQTT311Proxy {
    let port: Int
    let script: PythonScript

    init(directory: String, brokerPort: Int) throws {
        port = freePort()
        let source = pythonProxySource(
            """
            def serve(client):
                first = client.recv(65536)
                i = 1
                while first[i] & 0x80: i += 1  # the remaining length's bytes
                if first[i + 1 + 6] == 5:  # after the length: 00 04 'MQTT', then the protocol level
                    client.sendall(bytes([0x20, 0x02, 0x00, 0x01]))
                    client.close()
                    return
                upstream = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
                upstream.sendall(first)
                threading.Thread(target=pipe, args=(upstream, client), daemon=True).start()
                pipe(client, upstream)
            """)
        script = try PythonScript(
            directory: directory, name: "mqtt311.py", source: source, arguments: [String(port), String(brokerPort)])
        #expect(eventually(timeout: 10) { tcpListens(port) }, "the 3.1.1 proxy listens on \(port)")
    }
}

/// What a gym owner meets when the broker will not take what repd sends: refusals are told apart from deliveries
/// (MQTT 5's reason codes), say why and what to change, and lose nothing.
@Suite(
    "the uplink when the broker refuses (MQTT 5 reason codes)", .serialized,
    .enabled(if: haveMosquitto, "needs mosquitto, mosquitto-clients and python3"))
struct UplinkRefusalTests {
    @Test(
        "a broker whose ACL refuses repd's topic: no event counts as delivered, the log and status say which event and why; once the ACL allows it, every event arrives"
    )
    func aclRefusal() throws {
        let dir = scratchDirectory()
        let acl = dir + "/acl"
        // Anonymous clients (repd and the subscriber) may read repd/#, write only the subscriber's probe topic.
        try "topic read repd/#\ntopic write repd/probe/#\n".write(toFile: acl, atomically: true, encoding: .utf8)
        let broker = try Broker(directory: dir, settings: "acl_file \(acl)\n")
        let subscriber = try Subscriber(port: broker.port)
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [5], lead: 10)
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let daemon = try DaemonProcess(arguments: [
            "--config", try uplinkConfig(dir, port: broker.port), "--fixture", fixture.path, "--speed", "10",
            "--socket", socketPath, "--journal", journalPath, "--station", "bench-4", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let refused =
            "uplink: the broker at 127.0.0.1:\(broker.port) refused event id 1 on repd/bench-4/events: Not authorized (0x87) (check that the broker's ACL lets anonymous clients publish to repd/bench-4/#); the uplink sends nothing after it until the broker takes it; retrying in"
        #expect(
            eventually(timeout: 15) { daemon.standardError.contains(refused) }, "\(daemon.standardError.suffix(3000))")
        let client = try #require(LineClient(path: socketPath))
        // Status keeps the refusal as its last error while the event is held, across the attempts.
        var during: ServerMessage.UplinkInfo?
        #expect(
            eventually(timeout: 10) {
                client.send("status\n")
                during = client.next { $0.status }?.uplink
                return during?.lastError?.contains("refused event id 1") == true
            }, "\(String(describing: during))")
        #expect(during?.ackedID == 0, "\(String(describing: during))")
        #expect(subscriber.ids.isEmpty, "nothing reached the topic: \(subscriber.ids)")
        // The refusals go on with a growing delay, not every reconnect_min_s (0.2 s here).
        #expect(
            eventually(timeout: 10) {
                daemon.standardError.contains("refused event id 1")
                    && daemon.standardError.contains("; retrying in 1 s")
            })
        // The owner fixes the ACL; mosquitto reads it again on SIGHUP.
        try "topic readwrite repd/#\n".write(toFile: acl, atomically: true, encoding: .utf8)
        broker.process?.signal(SIGHUP)
        #expect(waitForEnd(socketPath))
        let after = uplinkCaughtUp(socketPath)
        #expect(after?.backlog == 0 && after?.state == "connected", "\(String(describing: after))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let n = try newestID(journalPath)
        #expect(eventually(timeout: 10) { subscriber.ids.count >= n }, "\(subscriber.ids)")
        #expect(subscriber.ids == Array(1...n), "every event, once the broker took them: \(subscriber.ids)")
        #expect(subscriber.events.filter { $0.kind == .rep }.count == 5)
    }

    @Test(
        "an event larger than the broker's maximum packet size holds the uplink with a log line naming it and the limit; raised, every event arrives"
    )
    func oversizeEvent() throws {
        let dir = scratchDirectory()
        let broker = try Broker(directory: dir, settings: "max_packet_size 400\n")
        let subscriber = try Subscriber(port: broker.port)
        // A set_end carries the set's reps: over 400 bytes for 6 of them.
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [6], lead: 10)
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let daemon = try DaemonProcess(arguments: [
            "--config", try uplinkConfig(dir, port: broker.port), "--fixture", fixture.path, "--speed", "10",
            "--socket", socketPath, "--journal", journalPath, "--station", "bench-5", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        #expect(waitForEnd(socketPath))
        let expected =
            #/uplink: event id (\d+) \((\d+) bytes on repd/bench-5/events\) is larger than the broker at 127\.0\.0\.1:(\d+) takes \(its maximum packet size\): raise that limit on the broker \(mosquitto: max_packet_size\); the uplink sends nothing after it until then; retrying in/#
        var match: Regex<(Substring, Substring, Substring, Substring)>.Match?
        #expect(
            eventually(timeout: 10) {
                match = daemon.standardError.firstMatch(of: expected)
                return match != nil
            }, "\(daemon.standardError.suffix(3000))")
        let held = try #require(match.flatMap { Int($0.1) })
        #expect(match.flatMap { Int($0.2) }.map { $0 > 400 } == true)
        let client = try #require(LineClient(path: socketPath))
        client.send("status\n")
        let during = try #require(client.next { $0.status }?.uplink)
        #expect(during.ackedID == Int64(held - 1) && during.backlog > 0, "\(during)")
        #expect(eventually(timeout: 5) { subscriber.ids == Array(1..<held) }, "\(subscriber.ids)")
        // The owner raises the limit.
        broker.stop()
        let conf = dir + "/mosquitto.conf"
        let text = try String(contentsOfFile: conf, encoding: .utf8)
        try text.replacingOccurrences(of: "max_packet_size 400\n", with: "").write(
            toFile: conf, atomically: true, encoding: .utf8)
        try broker.start()
        let after = uplinkCaughtUp(socketPath)
        #expect(after?.backlog == 0, "\(String(describing: after))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let n = try newestID(journalPath)
        #expect(eventually(timeout: 15) { subscriber.ids.count >= n }, "\(subscriber.ids)")
        #expect(subscriber.ids == Array(1...n), "every id, in order (copies of an id resent removed)")
        #expect(
            daemon.standardError.contains("uplink: the broker took event id \(held); sending the rest"),
            "\(daemon.standardError.suffix(2000))")
    }

    @Test(
        "a broker that speaks only MQTT 3.1.1: repd says so, speaks 3.1.1 to it, and every event arrives"
    )
    func mqtt311Broker() throws {
        let dir = scratchDirectory()
        let broker = try Broker(directory: dir)
        let proxy = try MQTT311Proxy(directory: dir, brokerPort: broker.port)
        let subscriber = try Subscriber(port: broker.port)
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [4], lead: 10)
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let daemon = try DaemonProcess(arguments: [
            "--config", try uplinkConfig(dir, port: proxy.port), "--fixture", fixture.path, "--speed", "10",
            "--socket", socketPath, "--journal", journalPath, "--station", "bench-6", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        #expect(waitForEnd(socketPath))
        let after = uplinkCaughtUp(socketPath)
        #expect(after?.backlog == 0, "\(String(describing: after))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let log = daemon.standardError
        #expect(
            log.contains(
                "uplink: the broker at 127.0.0.1:\(proxy.port) does not speak MQTT 5; connecting with MQTT 3.1.1, in which a broker cannot say that it refused an event"
            ), "\(log.suffix(3000))")
        #expect(log.contains("as repd-bench-6 (MQTT 3.1.1)"), "\(log.suffix(3000))")
        #expect(!log.contains("refused the connection"), "the version's refusal is not reported as an error")
        let n = try newestID(journalPath)
        #expect(eventually(timeout: 10) { subscriber.ids.count >= n }, "\(subscriber.ids)")
        #expect(subscriber.ids == Array(1...n))
    }

    @Test(
        "two stations with one client id: each says that another client may use its id, and backs off instead of reconnecting every reconnect_min_s"
    )
    func clientIDClash() throws {
        let dir = scratchDirectory()
        let broker = try Broker(directory: dir)
        let config = try uplinkConfig(dir, port: broker.port)
        let daemons = try (1...2).map { i in
            try DaemonProcess(arguments: [
                "--config", config, "--demo", "--loop", "--speed", "20", "--socket", dir + "/events\(i).sock",
                "--journal", dir + "/events\(i).db", "--station", "bench-7", "--quiet",
            ])
        }
        let hint =
            "(if this repeats: another client may use the client id repd-bench-7; each station needs its own journal.station or uplink.client_id)"
        #expect(
            eventually(timeout: 15) {
                daemons.allSatisfy { $0.standardError.contains(hint) }
                    && daemons.contains { $0.standardError.contains("; retrying in 1 s") }
            }, "\(daemons.map { $0.standardError.suffix(1500) })")
        for daemon in daemons {
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }
    }

    @Test(
        "TLS to a port where nothing listens: the log says the connection failed, and the uplink waits in poll (it spun a core)",
        .enabled(if: haveOpenSSL, "needs openssl to make the certificates"))
    func tlsNothingListening() throws {
        let dir = scratchDirectory()
        let certificates = try TestCertificates(directory: dir)
        let port = freePort()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--config",
            try uplinkConfig(
                dir, port: port, reconnect: (1, 1), extra: "tls = true\nca_file = \"\(certificates.ca)\""),
            "--demo", "--loop", "--socket", socketPath, "--journal", dir + "/events.db", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let expected =
            "uplink: cannot reach the broker at 127.0.0.1:\(port): the TCP connection failed (nothing listens there, or it cannot be reached); retrying in 1 s"
        #expect(
            eventually(timeout: 5) { daemon.standardError.contains(expected) }, "\(daemon.standardError.suffix(2000))")
        // Five attempts: a spinning uplink thread used a whole core throughout (5 s of CPU); waiting in poll, repd
        // replaying the demo at real time uses a few hundredths.
        let pid = daemon.process.processIdentifier
        let before = try #require(cpuSeconds(pid))
        Thread.sleep(forTimeInterval: 5)  // the span measured, not a wait for a condition
        let used = try #require(cpuSeconds(pid)) - before
        if ProcessInfo.processInfo.environment["REPD_SANITIZER"] == nil {
            #expect(used < 1.5, "repd used \(used) s of CPU in 5 s")
        }
        #expect(!daemon.standardError.contains("no answer (CONNACK)"), "\(daemon.standardError.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "a client key protected by a pass phrase: no prompt, the log names the key and what to do, and SIGTERM ends repd; --check-config warns of it and of a missing CA file",
        .enabled(if: haveOpenSSL, "needs openssl to make the key"))
    func encryptedKey() throws {
        let dir = scratchDirectory()
        let certificates = try TestCertificates(directory: dir)
        let key = dir + "/client.key"
        try runTool(
            opensslBinary,
            [
                "genpkey", "-algorithm", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-aes256", "-pass",
                "pass:secret", "-out", key,
            ])
        let tlsPort = freePort()  // the key is refused before any connection
        let socketPath = dir + "/events.sock"
        let config = try uplinkConfig(
            dir, port: tlsPort,
            extra:
                "tls = true\nca_file = \"\(certificates.ca)\"\ncert_file = \"\(certificates.serverCertificate)\"\nkey_file = \"\(key)\""
        )
        let check = try DaemonProcess(arguments: ["--config", config, "--check-config"])
        #expect(check.waitForExit() == 0)
        #expect(
            check.standardOutput.contains(
                "repd: warning: \(config):10: uplink.key_file \(key) is protected by a pass phrase, which repd has no way to enter"
            ), "\(check.standardOutput)")
        let daemon = try DaemonProcess(arguments: [
            "--config", config, "--demo", "--loop", "--socket", socketPath, "--journal", dir + "/events.db", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        #expect(
            eventually(timeout: 5) {
                daemon.standardError.contains(
                    "uplink: uplink.key_file \(key) is protected by a pass phrase, which repd has no way to enter: store the key without one"
                )
            }, "\(daemon.standardError.suffix(2000))")
        #expect(!daemon.standardError.contains("pass phrase:"), "no prompt: \(daemon.standardError.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 5) == 0)
        // A CA file that is not there.
        let missing = try uplinkConfig(dir, port: tlsPort, extra: "tls = true\nca_file = \"\(dir)/nowhere.pem\"")
        let checkMissing = try DaemonProcess(arguments: ["--config", missing, "--check-config"])
        #expect(checkMissing.waitForExit() == 0)
        #expect(
            checkMissing.standardOutput.contains(
                "repd: warning: \(missing):8: uplink.ca_file \(dir)/nowhere.pem: No such file or directory: repd would count and serve, but its uplink could not connect"
            ), "\(checkMissing.standardOutput)")
    }

    @Test(
        "events the journal pruned before the broker took them: the log names their ids, the backlog counts only what can be sent, and the rest arrives"
    )
    func prunedBeforeDelivery() throws {
        let dir = scratchDirectory()
        let broker = try Broker(directory: dir)
        broker.stop()  // away while the first repd runs
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let config = try uplinkConfig(dir, port: broker.port, extra: "[journal]\nmax_events = 100")
        func run(until done: (ServerMessage.Status) -> Bool) throws -> DaemonProcess {
            let daemon = try DaemonProcess(arguments: [
                "--config", config, "--demo", "--loop", "--speed", "200", "--socket", socketPath, "--journal",
                journalPath, "--station", "bench-8", "--quiet",
            ])
            #expect(daemonListens(socketPath))
            let client = try #require(LineClient(path: socketPath))
            #expect(
                eventually(timeout: 30) {
                    client.send("status\n")
                    return client.next { $0.status }.map(done) == true
                })
            return daemon
        }
        let first = try run { ($0.journal?.newestID ?? 0) >= 150 }
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
        let newest = try newestID(journalPath)
        try broker.start()
        let subscriber = try Subscriber(port: broker.port)
        // The next start prunes to the newest 100 (retention runs at start): ids up to newest − 100 are gone.
        let second = try run { $0.uplink?.state == "connected" }
        let gone =
            #/uplink: events 1–(\d+) were removed from the journal \(journal\.max_events, max_age_days or max_size_mb\) before the broker acknowledged them: they cannot be sent/#
        var match: Regex<(Substring, Substring)>.Match?
        #expect(
            eventually(timeout: 5) {
                match = second.standardError.firstMatch(of: gone)
                return match != nil
            }, "\(second.standardError.suffix(2000))")
        #expect(match.flatMap { Int($0.1) }.map { $0 >= newest - 100 } == true, "\(second.standardError.suffix(2000))")
        // The backlog it starts with is what the journal still holds, not everything after id 0.
        let connected = second.standardError.firstMatch(
            of: #/as repd-bench-8 \(MQTT 5\); sending repd/bench-8/events after event id 0 \(backlog (\d+)\)/#)
        #expect(connected.flatMap { Int($0.1) }.map { $0 < newest } == true, "\(second.standardError.suffix(2000))")
        let caughtUp = uplinkCaughtUp(socketPath)
        #expect(caughtUp?.backlog == 0)
        // The rest arrives: every id after the pruned ones, up to what the broker acknowledged, reached its topic.
        let prunedThrough = try #require(match.flatMap { Int($0.1) })
        let acked = try #require(caughtUp.map { Int($0.ackedID) })
        #expect(acked > prunedThrough)
        let expected = Set((prunedThrough + 1)...max(prunedThrough + 1, acked))
        #expect(
            eventually(timeout: 20) { expected.isSubset(of: Set(subscriber.ids)) },
            "missing at the broker: \(expected.subtracting(subscriber.ids).sorted().prefix(20))")
        #expect(!subscriber.ids.contains { $0 <= prunedThrough }, "no pruned id was sent")
        second.signal(SIGTERM)
        #expect(second.waitForExit() == 0)
    }
}
