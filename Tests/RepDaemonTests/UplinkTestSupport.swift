// What the uplink tests share: a real mosquitto, a subscriber, certificates, a listener that never answers.
import Foundation
import MotionCore
import RepClient
import RepJournal
import RepProtocol
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

let mosquittoBinary = "/usr/sbin/mosquitto"
let haveMosquitto =
    FileManager.default.isExecutableFile(atPath: mosquittoBinary)
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_passwd")
    && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
let opensslBinary = "/usr/bin/openssl"
let haveOpenSSL = FileManager.default.isExecutableFile(atPath: opensslBinary)

/// A real mosquitto on a loopback port, with its configuration, persistence and log in `directory`.
final class Broker {
    let port: Int
    /// The TLS listener's port (with `certificates`), next to the plain one.
    let tlsPort: Int?
    let directory: String
    private(set) var process: DaemonProcess?

    /// `users`: name → password (then anonymous clients are refused). `certificates`: a second listener that speaks
    /// TLS with the server certificate.
    /// `settings`: more lines for mosquitto.conf (an `acl_file`, `max_packet_size`).
    init(
        directory: String, users: [String: String] = [:], certificates: TestCertificates? = nil, settings: String = ""
    ) throws {
        self.directory = directory
        port = freePort()
        var tlsPort: Int?
        if certificates != nil { repeat { tlsPort = freePort() } while tlsPort == port }
        self.tlsPort = tlsPort
        var config = "listener \(port) 127.0.0.1\npersistence true\npersistence_location \(directory)/\n"
        if getuid() == 0 { config += "user root\n" }
        if users.isEmpty {
            config += "allow_anonymous true\n"
        } else {
            let file = directory + "/passwords"
            for (index, (name, password)) in users.enumerated() {
                let passwd = Process()
                passwd.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_passwd")
                passwd.arguments = (index == 0 ? ["-c"] : []) + ["-b", file, name, password]
                try passwd.run()
                passwd.waitUntilExit()
            }
            config += "allow_anonymous false\npassword_file \(file)\n"
        }
        if let certificates, let tlsPort {
            // These settings belong to the listener above them.
            config += "listener \(tlsPort) 127.0.0.1\ncafile \(certificates.ca)\n"
            config += "certfile \(certificates.serverCertificate)\nkeyfile \(certificates.serverKey)\n"
        }
        config += settings
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    func start() throws {
        // Children of the test process inherit its blocked signals, and mosquitto only takes the signals its own
        // start left unblocked: without this it would never see SIGTERM (and save its persistence file).
        let unblocked =
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
        process = try DaemonProcess(
            executable: "/usr/bin/python3",
            arguments: ["-c", unblocked, mosquittoBinary, "-c", directory + "/mosquitto.conf"])
        #expect(
            eventually(timeout: 10) { tcpListens(port) && tlsPort.map(tcpListens) != false },
            "mosquitto listens on \(port)")
    }

    /// Stops it (SIGTERM: it saves its persistence file).
    func stop() {
        process?.signal(SIGTERM)
        if process?.waitForExit(timeout: 3) == nil { log += "(SIGTERM did not stop it within 3 s: killed)\n" }
        log += process?.standardError ?? ""
        process = nil
    }

    /// What the stopped runs logged.
    private(set) var log = ""

    deinit { stop() }
}

/// `mosquitto_sub -v -q 1` with a persistent session (`-c`), so that what the broker acknowledged while this
/// subscriber was cut off reaches it after the broker's restart.
final class Subscriber {
    let process: DaemonProcess

    init(port: Int, topic: String = "repd/+/events") throws {
        // stdbuf: one line at a time into the pipe (mosquitto_sub does not flush its output itself).
        process = try DaemonProcess(
            executable: "/usr/bin/stdbuf",
            arguments: [
                "-oL", "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", String(port), "-v", "-q", "1", "-c", "-i",
                "sub-\(UUID().uuidString.prefix(8))", "-t", topic,
            ])
        // Subscribed once a message published after its start reaches it.
        let probe = "repd/probe/events"
        #expect(
            eventually(timeout: 10) {
                let publish = Process()
                publish.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
                publish.arguments = ["-h", "127.0.0.1", "-p", String(port), "-q", "1", "-t", probe, "-m", "{}"]
                try? publish.run()
                publish.waitUntilExit()
                return self.process.standardOutput.contains(probe)
            }, "mosquitto_sub subscribed")
    }

    /// The events received (each message is the event's socket line), in arrival order.
    var events: [ServerEvent] {
        process.standardOutput.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("repd/"), !line.hasPrefix("repd/probe/"), let space = line.firstIndex(of: " ") else {
                return nil
            }
            return (try? ServerLine.parse(String(line[line.index(after: space)...])))?.event
        }
    }

    /// The distinct ids received, in arrival order of their first copy.
    var ids: [Int] {
        var seen = Set<Int>()
        return events.compactMap { $0.id.map(Int.init) }.filter { seen.insert($0).inserted }
    }

    /// The ids received per journal file (each message's `journal`: the file's identity), each once, in arrival
    /// order.
    var idsByJournal: [String: [Int]] {
        var seen = Set<String>()
        var ids: [String: [Int]] = [:]
        for line in process.standardOutput.split(separator: "\n") {
            guard let space = line.firstIndex(of: " "),
                let message = try? JSONParser.parse(String(line[line.index(after: space)...])),
                let journal = message["journal"]?.stringValue, let id = message["id"]?.int,
                seen.insert("\(journal) \(id)").inserted
            else { continue }
            ids[journal, default: []].append(id)
        }
        return ids
    }

    /// The journal file (identity) of each event message in arrival order, a run of the same file taken once: which
    /// file the broker got events of after which.
    var journalRuns: [String] {
        var runs: [String] = []
        for line in process.standardOutput.split(separator: "\n") {
            guard let space = line.firstIndex(of: " "),
                let message = try? JSONParser.parse(String(line[line.index(after: space)...])),
                let journal = message["journal"]?.stringValue, message["id"]?.int != nil, runs.last != journal
            else { continue }
            runs.append(journal)
        }
        return runs
    }

    deinit {
        process.signal(SIGKILL)  // mosquitto_sub takes its time over SIGTERM
        _ = process.waitForExit()
    }
}

/// A repd configuration file for an uplink to `port`.
func uplinkConfig(_ directory: String, port: Int, reconnect: (Double, Double) = (0.2, 1), extra: String = "")
    throws -> String
{
    let path = directory + "/repd.toml"
    try """
    [uplink]
    enabled = true
    host = "127.0.0.1"
    port = \(port)
    reconnect_min_s = \(reconnect.0)
    reconnect_max_s = \(reconnect.1)
    \(extra)
    """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// The journal's newest id (read after repd stopped).
func newestID(_ journalPath: String) throws -> Int {
    let journal = try EventJournal(path: journalPath, station: "test")
    defer { journal.close() }
    return Int(try journal.newestID)
}

/// What `hello` says on a new connection: the journal file's identity and its newest id; nil when repd does not
/// answer.
func journalNow(_ socketPath: String) -> (journal: String?, newest: Int64)? {
    guard let client = LineClient(path: socketPath), let hello = client.next({ $0.hello }) else { return nil }
    return (hello.journal, hello.newestID ?? 0)
}

/// `status`, asked on a new connection (one open when repd goes over to another journal file is told bye); nil when
/// repd does not answer.
func statusNow(_ socketPath: String) -> ServerMessage.Status? {
    guard let client = LineClient(path: socketPath) else { return nil }
    client.send("status\n")
    return client.next { $0.status }
}

/// Waits until `status` says the broker acknowledged every journaled event; returns the last `uplink` seen.
/// One connection asks every 100 ms (not a connection per check: each `hello` reads the journal's newest id).
func uplinkCaughtUp(_ socketPath: String, timeout: Double = 20) -> ServerMessage.UplinkInfo? {
    guard let client = LineClient(path: socketPath) else { return nil }
    var last: ServerMessage.UplinkInfo?
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        client.send("status\n")
        last = client.next { $0.status }?.uplink
        if last?.state == "connected", last?.backlog == 0, last?.inFlight == 0 { break }
        usleep(100_000)
    }
    return last
}

/// Waits for the sensor's `finished` on a client subscribed to everything.
func waitForEnd(_ socketPath: String, timeout: Double = 60) -> Bool {
    guard let client = LineClient(path: socketPath) else { return false }
    client.send("subscribe since=0\n")
    while let state = client.next(timeout: timeout, { $0.sensorState }) {
        if state == .finished { return true }
    }
    return false
}

/// Runs a short tool to its end and returns its standard output; throws what it wrote when it fails. (Not a
/// `DaemonProcess`: for a process this short its `waitForExit` now and then waited the whole 5 s for the pipes'
/// end of file.)
@discardableResult
func runTool(_ executable: String, _ arguments: [String]) throws -> String {
    let tool = Process()
    tool.executableURL = URL(fileURLWithPath: executable)
    tool.arguments = arguments
    let output = Pipe()
    let errors = URL(fileURLWithPath: Scratch.file("tool", suffix: ".err"))
    _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errors) }
    tool.standardOutput = output
    tool.standardError = try FileHandle(forWritingTo: errors)
    try tool.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    tool.waitUntilExit()
    guard tool.terminationStatus == 0 else {
        let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        throw ToolFailure(
            description:
                "\(executable) \(arguments.joined(separator: " ")): exit \(tool.terminationStatus): \(said)\(text)")
    }
    return text
}

struct ToolFailure: Error, CustomStringConvertible {
    let description: String
}

/// A CA, a server certificate it signed for 127.0.0.1 and localhost, and another CA that signed nothing: made with
/// `openssl` in `directory` (P-256 keys, made in milliseconds).
struct TestCertificates {
    let ca: String
    let serverCertificate: String
    let serverKey: String
    let otherCA: String

    init(directory: String) throws {
        ca = directory + "/ca.pem"
        serverCertificate = directory + "/server.pem"
        serverKey = directory + "/server.key"
        otherCA = directory + "/other-ca.pem"
        let newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"]
        try runTool(
            opensslBinary,
            ["req", "-x509"] + newKey + ["-keyout", directory + "/ca.key", "-out", ca, "-subj", "/CN=repd test CA"])
        try runTool(
            opensslBinary,
            ["req", "-x509"] + newKey + [
                "-keyout", serverKey, "-out", serverCertificate, "-subj", "/CN=127.0.0.1", "-CA", ca, "-CAkey",
                directory + "/ca.key",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-addext", "basicConstraints=critical,CA:FALSE",
            ])
        try runTool(
            opensslBinary,
            ["req", "-x509"] + newKey + [
                "-keyout", directory + "/other-ca.key", "-out", otherCA, "-subj", "/CN=another CA",
            ])
    }
}

/// A retained message as a new subscriber gets it.
struct RetainedMessage {
    /// The retain flag the broker set on it.
    let retained: Bool
    let text: String
    let json: JSONValue
    /// The members' names, in the order they were sent.
    var keys: [String] { text.matches(of: #/"([a-z_]+)":/#).map { String($0.1) } }
    var state: String? { json["state"]?.stringValue }
}

/// What a new subscriber to `repd/<station>/status` gets first (the retained message); nil when nothing comes in 2 s.
/// A subscriber that arrives before repd or the broker publishes gets the message live, without the retain flag: the
/// tests poll until a new subscriber gets it retained.
func retainedStatus(port: Int, station: String) -> RetainedMessage? {
    let sub = Process()
    sub.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
    sub.arguments = [
        "-h", "127.0.0.1", "-p", String(port), "-t", "repd/\(station)/status", "-C", "1", "-W", "2", "-F", "%r %p",
    ]
    let output = Pipe()
    sub.standardOutput = output
    sub.standardError = FileHandle.nullDevice
    guard (try? sub.run()) != nil else { return nil }
    let data = output.fileHandleForReading.readDataToEndOfFile()  // -W 2: it exits within 2 s
    sub.waitUntilExit()
    guard sub.terminationStatus == 0 else { return nil }
    let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    guard let space = line.firstIndex(of: " "),
        let json = try? JSONParser.parse(String(line[line.index(after: space)...]))
    else {
        return nil
    }
    return RetainedMessage(retained: line.hasPrefix("1 "), text: String(line[line.index(after: space)...]), json: json)
}

/// A TCP socket on 127.0.0.1 that listens and never accepts: the kernel completes each connection's handshake (the
/// backlog), so a client's connect succeeds, and then nothing ever answers.
final class SilentListener {
    let fd: Int32
    let port: Int

    init?() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

/// `repctl status`'s human output (nil when it failed).
func repctlStatus(_ socketPath: String) -> String? {
    try? runTool(productsDirectory + "/repctl", ["status", "--socket", socketPath])
}

/// A Python program the test writes to `directory/name` and runs with `arguments` until this object goes (then it
/// is killed): the tests' stand-ins for a broken broker or name server.
final class PythonScript {
    let process: DaemonProcess

    init(directory: String, name: String, source: String, arguments: [String]) throws {
        let path = directory + "/" + name
        try source.write(toFile: path, atomically: true, encoding: .utf8)
        process = try DaemonProcess(executable: "/usr/bin/python3", arguments: [path] + arguments)
    }

    deinit {
        process.signal(SIGKILL)
        _ = process.waitForExit()
    }
}

/// A TCP proxy in Python for the tests' broken brokers. `pipe(a, b, transform)` copies what socket `a` receives to `b`
/// (each chunk through `transform`, when given, which may hold bytes back for the next chunk), then shuts both down;
/// the server on 127.0.0.1, port `sys.argv[1]`, calls `serve(client)`, which `body` defines, on a thread per
/// connection.
func pythonProxySource(_ body: String) -> String {
    """
    import socket, sys, threading
    def pipe(a, b, transform=None):
        try:
            while (data := a.recv(65536)):
                if transform: data = transform(data)
                if data: b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try: s.shutdown(socket.SHUT_RDWR)
            except OSError: pass
    \(body)
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", int(sys.argv[1])))
    server.listen(8)
    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()
    """
}

/// A broker, optionally a subscriber to it, and a repd replaying the demo workout in a loop at 20 times real time
/// with its uplink to the broker and its journal at `journalPath`: the setting of the tests that change the journal
/// file while the broker is away.
struct LoopingStation {
    let dir: String
    let socketPath: String
    let journalPath: String
    let broker: Broker
    let subscriber: Subscriber?
    let daemon: DaemonProcess
    /// repd's arguments (to start it again on the same files).
    let arguments: [String]

    /// Starts them, and waits until the broker has a rep (with a subscriber) or the uplink is connected.
    init(station: String, subscribed: Bool) throws {
        dir = scratchDirectory()
        broker = try Broker(directory: dir)
        subscriber = subscribed ? try Subscriber(port: broker.port) : nil
        socketPath = dir + "/events.sock"
        journalPath = dir + "/events.db"
        arguments = [
            "--config", try uplinkConfig(dir, port: broker.port), "--demo", "--loop", "--speed", "20", "--socket",
            socketPath, "--journal", journalPath, "--station", station, "--quiet",
        ]
        daemon = try DaemonProcess(arguments: arguments)
        let socketPath = socketPath
        #expect(daemonListens(socketPath))
        if let subscriber {
            #expect(eventually(timeout: 30) { subscriber.events.contains { $0.kind == .rep } }, "a rep at the broker")
        } else {
            #expect(eventually(timeout: 30) { uplinkCaughtUp(socketPath, timeout: 1)?.state == "connected" })
        }
    }

    /// Stops the broker and waits until repd journaled 3 more events; returns the journal as the broker left it.
    func brokerAwayWithEvents() throws -> (journal: String?, newest: Int64) {
        broker.stop()
        let socketPath = socketPath
        let first = try #require(journalNow(socketPath))
        #expect(
            eventually(timeout: 30) { (journalNow(socketPath)?.newest ?? 0) >= first.newest + 3 }, "events while away")
        return first
    }

    /// Waits until repd writes a journal file not among `known` and it holds 2 events; returns it.
    func newFileWithEvents(besides known: [String?]) -> (journal: String?, newest: Int64)? {
        let socketPath = socketPath
        var now: (journal: String?, newest: Int64)?
        #expect(
            eventually(timeout: 30) {
                now = journalNow(socketPath)
                return now.map { !known.contains($0.journal) && $0.newest >= 2 } ?? false
            }, "repd went over to a new journal file, with events in it")
        return now
    }

    /// Stops the broker once repd journaled events (`brokerAwayWithEvents()`), then deletes the journal `times` times,
    /// each once repd writes a new file holding events; returns the files, the first the one the uplink reads.
    func journalDeletedWhileBrokerAway(times: Int) throws -> [String?] {
        var files = [try brokerAwayWithEvents().journal]
        for _ in 0..<times {
            #expect(unlink(journalPath) == 0)
            files.append(newFileWithEvents(besides: files)?.journal)
        }
        return files
    }

    /// Starts the broker again, waits until the uplink has sent everything, and stops repd (exit 0).
    func brokerBackThenStop() throws {
        try broker.start()
        let after = uplinkCaughtUp(socketPath, timeout: 60)
        #expect(after?.backlog == 0, "\(String(describing: after))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0, "\(daemon.standardError.suffix(3000))")
    }

    /// The last id of each journal file repd left (deleted, or replaced by another file), as it logged them.
    var lastIDsOfLeftFiles: [Int] {
        daemon.standardError.split(separator: "\n").compactMap { line -> Int? in
            guard line.contains(" while repd runs (at event id "),
                let tail = line.split(separator: "(at event id ").last
            else { return nil }
            return Int(tail.prefix { $0.isNumber })
        }
    }
}
