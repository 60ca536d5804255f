import Foundation
import MotionCore
import RepClient
import RepDetection
import RepProtocol
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The folder holding the built executables (the test bundle sits next to them).
let productsDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (exe as NSString).deletingLastPathComponent
}()

/// Why repd-web cannot be run here, or nil when it can: a build made with `REPD_WITHOUT_WEB=1` (scripts/test's
/// sanitizer runs) leaves it out.
let repdWebPrerequisite: String? =
    ProcessInfo.processInfo.environment["REPD_WITHOUT_WEB"] != "1"
        && FileManager.default.isExecutableFile(atPath: productsDirectory + "/repd-web")
    ? nil : "repd-web is not in this build (REPD_WITHOUT_WEB=1 leaves it out, as scripts/test's sanitizer runs do)"

/// The repository's `config/repd.toml` (found from this file, so wherever the build folder is).
let documentedConfiguration = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("config/repd.toml").path

/// Why a test that needs a private mount namespace cannot run here, or nil when it can: root, and an `unshare
/// --mount` that works (a chroot or container may refuse it).
let privateMountPrerequisite: String? = {
    guard getuid() == 0 else { return "needs root for a private mount namespace" }
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else {
        return "needs /usr/bin/unshare (util-linux) for a private mount namespace"
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    process.arguments = ["--mount", "--propagation", "private", "/bin/true"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return "unshare --mount could not be started" }
    process.waitUntilExit()
    return process.terminationStatus == 0 ? nil : "unshare --mount is refused here (a chroot or a container without it)"
}()

func scratchDirectory() -> String {
    Scratch.directory("t")
}

/// Waits for `condition` to hold, checking every 10 ms, for at most `timeout` seconds.
func eventually(timeout: Double = 15, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// Bytes collected from a pipe on another thread, until its end of file.
///
/// Guarded by an `NSLock` (a pthread mutex, which ThreadSanitizer intercepts) rather than `Synchronization.Mutex`:
/// behind a `Mutex`, ThreadSanitizer once reported this state as racing between the pipe's reader and the test,
/// though every access took the lock.
final class CapturedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    private var finished = false

    /// Takes what the pipe has; an empty read is its end of file, after which the handler is removed.
    func collect(from handle: FileHandle) {
        let chunk = handle.availableData
        if chunk.isEmpty { handle.readabilityHandler = nil }
        lock.withLock {
            if chunk.isEmpty { finished = true } else { data.append(chunk) }
        }
    }

    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
    /// Whether the writing end is closed and everything written has been collected.
    var ended: Bool { lock.withLock { finished } }
}

/// Waits until something accepts connections on the socket (the file appears at bind(), before listen(), so its
/// existence alone is not enough).
func daemonListens(_ path: String, timeout: Double = 20) -> Bool {
    eventually(timeout: timeout) { access(path, F_OK) == 0 && LineClient(path: path) != nil }
}

/// A repd (or other) process started for a test, with its output captured.
final class DaemonProcess {
    let process = Process()
    private let outputPipe = Pipe()
    private let errorPipe = Pipe()
    private let output = CapturedOutput()
    private let errors = CapturedOutput()

    init(executable: String = productsDirectory + "/repd", arguments: [String], environment: [String: String] = [:])
        throws
    {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"] {
            env.removeValue(forKey: key)
        }
        env.merge(environment) { $1 }
        // The journal's default place, unless the test says otherwise: a folder of its own, not the user's state.
        if env["XDG_STATE_HOME"] == nil || environment["XDG_STATE_HOME"] == nil {
            env["XDG_STATE_HOME"] = scratchDirectory()
        }
        env.removeValue(forKey: "STATE_DIRECTORY")
        process.environment = env
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        outputPipe.fileHandleForReading.readabilityHandler = { [output] handle in output.collect(from: handle) }
        errorPipe.fileHandleForReading.readabilityHandler = { [errors] handle in errors.collect(from: handle) }
        try process.run()
    }

    var standardOutput: String { output.text }
    var standardError: String { errors.text }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// SIGTERM, then waits for the exit (for a `defer` that ends a daemon the test no longer judges).
    func stop() {
        signal(SIGTERM)
        _ = waitForExit()
    }

    /// Waits for the process to exit and returns its status (nil on timeout, after which it is killed). On return,
    /// `standardOutput` and `standardError` hold everything the process wrote: the pipes are read on another thread,
    /// so an exit alone does not mean its last lines were collected (a CI pass once saw an empty stderr here).
    func waitForExit(timeout: Double = 15) -> Int32? {
        let exited = eventually(timeout: timeout) { !process.isRunning }
        if !exited {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        process.waitUntilExit()
        _ = eventually(timeout: 5) { output.ended && errors.ended }
        // Under ThreadSanitizer a daemon that saw a data race exits 66 (its default exitcode); its report went to the
        // daemon's standard error, which no expectation prints: show it, so a rare race can be read from the CI log.
        if process.terminationStatus == 66, ProcessInfo.processInfo.environment["REPD_SANITIZER"] == "thread" {
            print("repd exited 66 under ThreadSanitizer; its standard error:\n\(standardError)")
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        outputPipe.fileHandleForReading.readabilityHandler = nil
        errorPipe.fileHandleForReading.readabilityHandler = nil
    }
}

/// Calls `body` with the `sockaddr` for the Unix socket at `path` and its length (for bind, connect, sendto); the
/// tests' paths always fit.
func withUnixAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    withUnixSocketAddress(path, body)!
}

/// A blocking client of repd's socket for the tests (RepClient's `RepConnection`), reading lines with deadlines.
final class LineClient {
    let connection: RepConnection
    var fd: Int32 { connection.fileDescriptor.rawValue }

    init?(path: String) {
        guard let connection = try? RepConnection(path: path) else { return nil }
        self.connection = connection
    }

    /// Sends `text` as it is (a test may leave out the newline, or send bytes repd must refuse).
    func send(_ text: String) { try? connection.send(raw: text) }

    /// The next line's text, or nil at EOF or after `timeout` seconds.
    func nextLine(timeout: Double = 10) -> String? {
        switch connection.next(timeout: .milliseconds(Int64(max(0, timeout) * 1000))) {
        case .message(_, let text), .malformed(_, let text): text
        case .timeout, .closed: nil
        }
    }

    /// Whether the server closes the connection within `timeout` seconds, reading (and dropping) what comes before.
    func closes(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            switch connection.next(timeout: .milliseconds(Int64(max(0, deadline.timeIntervalSinceNow) * 1000))) {
            case .message, .malformed: continue
            case .closed: return true
            case .timeout: return false
            }
        }
    }

    /// The lines the server sends before it closes the connection within `timeout` seconds, or nil when it has not
    /// closed it by then (a connection that only goes quiet is not a closed one).
    func linesUntilClose(within timeout: Double) -> [String]? {
        let deadline = Date().addingTimeInterval(timeout)
        var lines: [String] = []
        while true {
            switch connection.next(timeout: .milliseconds(Int64(max(0, deadline.timeIntervalSinceNow) * 1000))) {
            case .message(_, let text), .malformed(_, let text): lines.append(text)
            case .closed: return lines
            case .timeout: return nil
            }
        }
    }

    /// The next line, read (lines that do not read are skipped), or nil at EOF or after `timeout` seconds.
    func nextServerLine(timeout: Double = 10) -> ServerLine? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            switch connection.next(timeout: .milliseconds(Int64(max(0, deadline.timeIntervalSinceNow) * 1000))) {
            case .message(let message, _): return message
            case .malformed: continue
            case .timeout, .closed: return nil
            }
        }
    }

    /// The next message as parsed JSON.
    func nextMessage(timeout: Double = 10) -> JSONValue? {
        guard let line = nextLine(timeout: timeout) else { return nil }
        return try? JSONParser.parse(line)
    }

    /// Messages until one of `type` arrives (returned), skipping others; nil on timeout/EOF.
    /// Asks `status` until it says the journal writes (a journal repd opened after its start), within `timeout`
    /// seconds: whether it did, and the last `status` reply.
    func statusOnceJournalWrites(timeout: Double) -> (opened: Bool, status: JSONValue?) {
        var status: JSONValue?
        let opened = eventually(timeout: timeout) {
            send("status\n")
            status = next(type: "status")
            return status?["journal"]?["writing"] == .bool(true)
        }
        return (opened, status)
    }

    func next(type: String, timeout: Double = 10) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while let message = nextMessage(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            if message["type"]?.stringValue == type { return message }
        }
        return nil
    }
}

extension LineClient {
    /// Lines until `pick` gives a value for one (returned), skipping the others; nil on timeout/EOF.
    func next<T>(timeout: Double = 10, _ pick: (ServerLine) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while let message = nextServerLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) {
            if let value = pick(message) { return value }
        }
        return nil
    }
}

/// What the tests ask of a line, each nil when the line is something else.
extension ServerLine {
    var hello: Hello? { if case .hello(let hello) = self { hello } else { nil } }
    var event: ServerEvent? { if case .event(let event) = self { event } else { nil } }
    /// The event when it is a `rep`.
    var repEvent: ServerEvent? { event.flatMap { $0.kind == .rep ? $0 : nil } }
    var rep: RepEvent? { if case .workout(.rep(let rep))? = event?.body { rep } else { nil } }
    var sensorState: MotionProviderState? { if case .sensor(let state, _)? = event?.body { state } else { nil } }
    var status: ServerMessage.Status? { if case .status(let status, _) = self { status } else { nil } }
    var history: History? { if case .history(let history) = self { history } else { nil } }
    var errorMessage: String? { if case .error(let message) = self { message } else { nil } }
    var isSubscribed: Bool { if case .subscribed = self { true } else { false } }
    var isBye: Bool { if case .bye = self { true } else { false } }
}

/// The ports `freePort` takes from, from `REPD_TEST_PORTS=LOW-HIGH` (nil without it): scripts/test gives each of its
/// two sanitizer runs, which go side by side, a range of its own below the kernel's ephemeral ports, so that one
/// run's broker never takes the port the other run just found free.
private let testPortRange: ClosedRange<Int>? = {
    guard let value = ProcessInfo.processInfo.environment["REPD_TEST_PORTS"] else { return nil }
    let bounds = value.split(separator: "-").compactMap { Int($0) }
    guard bounds.count == 2, 1024 <= bounds[0], bounds[0] <= bounds[1], bounds[1] <= 65535 else {
        fatalError("REPD_TEST_PORTS=\(value): expected LOW-HIGH, 1024 <= LOW <= HIGH <= 65535")
    }
    return bounds[0]...bounds[1]
}()

/// A TCP port on 127.0.0.1 that nothing listens on right now: one the kernel picks, or with `REPD_TEST_PORTS` one
/// from that range.
func freePort() -> Int {
    if let range = testPortRange {
        for _ in 0..<10_000 {
            if let port = bindLoopback(port: Int.random(in: range)) { return port }
        }
        fatalError("no free port in REPD_TEST_PORTS \(range)")
    }
    return bindLoopback(port: 0) ?? 0
}

/// Binds a TCP socket to 127.0.0.1:`port` (0: the kernel picks one) and closes it; the port bound, or nil when it
/// could not be bound.
private func bindLoopback(port: Int) -> Int? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { return nil }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func tcpListens(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    } == 0
}
