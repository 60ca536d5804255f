import ArgumentParser
import RepProtocol

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

struct Subscribe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print repd's events as they happen; reconnects when the daemon restarts, and resumes where it was.",
        discussion: """
            Lines read like "set 2 · rep 7 · 1.9 s"; --json prints the protocol's own lines (docs/PROTOCOL.md). \
            Ctrl-C exits cleanly. --since ID first prints the journaled events after that id. Once it has \
            printed an event with an id, a reconnect asks for the events after it, so none is missed or repeated.

            Examples:
              repctl subscribe
              repctl subscribe --events rep --json | jq .total
              repctl subscribe --socket /tmp/repd-test.sock
              repctl subscribe --since 0 --json      # everything the journal holds, then live
            """)

    @Option(help: "repd's socket (default: /run/repd/events.sock if it exists, else the per-user path).")
    var socket: String?

    @Flag(help: "Print the raw protocol lines.")
    var json = false

    @Option(help: "Event types: rep, set, sensor, samples (comma-separated).")
    var events = "rep,set,sensor"

    @Option(help: "First print the journaled events after this event id (0: all the journal holds).")
    var since: Int64?

    func validate() throws {
        for name in events.split(separator: ",") where EventKind(rawValue: String(name)) == nil {
            throw ValidationError("unknown event type '\(name)' (rep, set, sensor, samples)")
        }
        if let since, since < 0 { throw ValidationError("--since must be an event id (0 or more)") }
    }

    func run() throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        catchInterrupts()
        let path = socketPath(socket)
        var delay = 0.5
        var everConnected = false
        var resumeAfter = since  // the last id printed, once there is one
        while !interrupted.load(ordering: .relaxed) {
            let connection: DaemonConnection
            do {
                connection = try DaemonConnection(path: path)
            } catch {
                if !error.transient || !everConnected && !json {
                    printError("repctl: \(error)")
                    if !error.transient { throw ExitCode(1) }
                }
                if !everConnected { throw ExitCode(1) }
                sleepInterruptibly(delay)
                delay = min(delay * 2, 5)
                continue
            }
            if everConnected { printError("repctl: reconnected to \(path)") }
            everConnected = true
            delay = 0.5
            connection.send("subscribe \(events)" + (resumeAfter.map { " since=\($0)" } ?? ""))
            // Live events that come before `subscribed` are sent again, in order, by the replay that follows it.
            var replayPending = resumeAfter != nil
            loop: while true {
                switch connection.next(timeout: 3600) {
                case .message(let line, let message):
                    if message["type"]?.stringValue == "subscribed" { replayPending = false }
                    if let id = message["id"]?.double.flatMap({ Int64(exactly: $0) }) {
                        if replayPending { continue }
                        if let last = resumeAfter, id <= last { continue }  // never print an event twice
                        resumeAfter = id
                    }
                    if json {
                        print(line)
                    } else if let text = Self.describe(message) {
                        print(text)
                    }
                case .timeout:
                    if interrupted.load(ordering: .relaxed) { break loop }
                case .closed:
                    printError("repctl: repd went away; reconnecting (Ctrl-C to stop)")
                    break loop
                }
            }
            if interrupted.load(ordering: .relaxed) { break }
            sleepInterruptibly(delay)
        }
    }

    static func describe(_ m: JSONValue) -> String? {
        switch m["type"]?.stringValue {
        case "rep":
            return "set \(m["set"]?.int ?? 0) · rep \(m["rep"]?.int ?? 0) · \(format(m["duration"]?.double ?? 0, decimals: 1)) s\(quality(m))  (total \(m["total"]?.int ?? 0))"
        case "set_start": return "set \(m["set"]?.int ?? 0) started"
        case "set_end":
            let live = m["live_reps"]?.int.map { " (counted live: \($0); corrected after the set)" } ?? ""
            var text = "set \(m["set"]?.int ?? 0) ended: \(m["reps"]?.int ?? 0) reps\(live)"
            if let fastest = m["fastest_mean_velocity_m_s"]?.double, let loss = m["velocity_loss_pct"]?.double {
                text += " · fastest \(format(fastest, decimals: 2)) m/s, velocity loss \(format(loss, decimals: 0)) %"
            } else if let why = m["velocity_unavailable"]?.stringValue {
                text += " · no velocity: \(why)"
            }
            return text
        case "sensor":
            let message = m["message"]?.stringValue.map { ": \($0)" } ?? ""
            return "sensor \(m["state"]?.stringValue ?? "?")\(message)"
        case "hello":
            let sensor = m["sensor"]
            return "connected to repd \(m["version"]?.stringValue ?? "?") (\(sensor?["kind"]?.stringValue ?? "?"): \(sensor?["name"]?.stringValue ?? "?"))"
        case "bye": return "repd is stopping (\(m["reason"]?.stringValue ?? ""))"
        case "samples": return "\((m["samples"].flatMap { if case .array(let a) = $0 { a.count } else { nil } }) ?? 0) samples"
        case "error": return "error from repd: \(m["message"]?.stringValue ?? "")"
        default: return nil
        }
    }
}

extension Subscribe {
    /// " · ecc 1.2 s · con 0.8 s · 0.61 m/s (peak 1.02) · ROM 0.52 m · loss 8 %" from a rep line's quality fields.
    static func quality(_ m: JSONValue) -> String {
        var text = ""
        if let e = m["eccentric_s"]?.double { text += " · ecc \(format(e, decimals: 1)) s" }
        if let c = m["concentric_s"]?.double { text += " · con \(format(c, decimals: 1)) s" }
        if let v = m["mean_velocity_m_s"]?.double {
            text += " · \(format(v, decimals: 2)) m/s"
            if let p = m["peak_velocity_m_s"]?.double { text += " (peak \(format(p, decimals: 2)))" }
            if let r = m["rom_m"]?.double { text += " · ROM \(format(r, decimals: 2)) m" }
            if let l = m["velocity_loss_pct"]?.double { text += " · loss \(format(l, decimals: 0)) %" }
        } else if let why = m["velocity_unavailable"]?.stringValue {
            text += " · no velocity: \(why)"
        }
        return text
    }
}

func sleepInterruptibly(_ seconds: Double) {
    var left = seconds
    while left > 0, !interrupted.load(ordering: .relaxed) {
        usleep(UInt32(min(left, 0.1) * 1_000_000))
        left -= 0.1
    }
}
