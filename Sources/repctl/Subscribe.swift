import ArgumentParser
import RepClient
import RepDetection
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

struct Subscribe: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print repd's events as they happen; reconnects when the daemon restarts, and resumes where it was.",
        discussion: """
            Lines read like "set 2 · rep 7 · 1.9 s"; --json prints the protocol's own lines (docs/PROTOCOL.md). \
            Ctrl-C (or SIGTERM, or SIGHUP unless ignored as under nohup) exits cleanly. --since ID first prints the journaled events after that id. Once it has \
            printed an event with an id, a reconnect asks for the events after it, so none is missed or repeated; \
            when repd comes back on another journal file (another `journal` in hello, or its newest id below the \
            last one printed), that journal is printed from its start, and so is it when --since is above its \
            newest id. A refused connection (too many clients) is retried after 0.5 s, doubling up to 5 s; a \
            permission refusal (socket.allowed_uids) is not: exit 1. Ends \
            (status 141) when its output is closed, as by `| head`. \(connectingHelp) Once repd has said hello \
            in this run, a connection without a hello is retried like a refused one instead (repd may be \
            starting, or stuck).

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
        if Self.kinds(events).isEmpty {
            throw ValidationError("--events needs at least one event type (rep, set, sensor, samples)")
        }
        if let since, since < 0 { throw ValidationError("--since must be an event id (0 or more)") }
    }

    func run() throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        catchInterrupts()
        let path = socketPath(socket)
        var delay = 0.5
        var everConnected = false  // a connection was made (a refused one too)
        var everGreeted = false  // repd said hello on one
        var resumeAfter = since  // --since, then the last id printed, once there is one
        var printedAny = false  // whether resumeAfter is an id this run printed (not the --since asked for)
        var journal: String?  // the identity of the journal the printed ids came from
        while !interrupted.load(ordering: .relaxed) {
            let connection: RepConnection
            do {
                connection = try connectToDaemon(path: path)
            } catch {
                if !error.transient || !everConnected {
                    printError("repctl: \(error)")
                    if !error.transient { throw ExitCode(1) }
                }
                if !everConnected { throw ExitCode(1) }
                sleepInterruptibly(delay)
                delay = min(delay * 2, 5)
                continue
            }
            everConnected = true
            let greeting: (hello: ServerLine.Hello, text: String)
            do {
                guard let received = try awaitHello(connection) else { break }
                greeting = received
            } catch {
                switch error.kind {
                case .incompatible:
                    printError("repctl: \(error)")
                    throw ExitCode(1)
                case .noHello where !everGreeted:
                    // Never a repd here in this run: most likely not its socket (--socket names another one).
                    printError("repctl: \(error)")
                    throw ExitCode(1)
                case .noHello: printError("repctl: \(error) (retrying in \(format(delay, decimals: 1)) s)")
                case .refused: printError("repctl: \(error); retrying in \(format(delay, decimals: 1)) s")
                case .closed, .connect:
                    printError("repctl: repd closed the connection; retrying in \(format(delay, decimals: 1)) s")
                }
                sleepInterruptibly(delay)
                delay = min(delay * 2, 5)
                continue
            }
            let hello = greeting.hello
            if everGreeted { printError("repctl: reconnected to \(path)") }
            everGreeted = true
            delay = 0.5
            // --since above the journal's newest id: an id of another file (the one the caller last read, since
            // replaced), so everything in this one is new to it.
            if !printedAny, let since = resumeAfter, let newest = hello.newestID, since > newest {
                printError(
                    "repctl: --since \(since) is above the newest event id in repd's journal (\(newest)): "
                        + "another journal file; printing it from its start")
                resumeAfter = 0
            }
            // A journal whose newest id is below the last one printed is another file (replaced or deleted): its ids
            // start over, so everything in it is new here.
            if printedAny, let last = resumeAfter, hello.startsOver(fromJournal: journal, lastID: last) {
                printError(
                    "repctl: repd's journal is not the one the last id printed (\(last)) came from: "
                        + "a new journal; printing it from its start")
                resumeAfter = 0
            }
            // A repd without a journal (its file could not be opened) names none: the printed ids still came from
            // the last one named.
            journal = hello.journal ?? journal
            connection.sendCommand(.subscribe(Self.kinds(events), since: resumeAfter))
            try show(.hello(hello), line: greeting.text)
            // Live events that come before `subscribed` are sent again, in order, by the replay that follows it.
            var replayPending = resumeAfter != nil
            loop: while true {
                switch connection.next(timeout: 1) {
                case .message(let message, let line):
                    if case .subscribed = message { replayPending = false }
                    if let id = message.eventID {
                        if replayPending { continue }
                        if let last = resumeAfter, id <= last { continue }  // never print an event twice
                        resumeAfter = id
                        printedAny = true
                    }
                    try show(message, line: line)
                case .timeout:
                    if interrupted.load(ordering: .relaxed) { break loop }
                    // Nothing to print for a while: a reader that went meanwhile is seen without a write.
                    if Self.outputClosed() { throw ExitCode(141) }
                case .closed:
                    printError("repctl: repd went away; reconnecting (Ctrl-C to stop)")
                    break loop
                }
            }
            if interrupted.load(ordering: .relaxed) { break }
            sleepInterruptibly(delay)
        }
    }

    /// Prints a line repd sent: as it is with --json, else in words (when it has any).
    private func show(_ message: ServerLine, line: String) throws {
        if json {
            print(line)
        } else if let text = Self.describe(message) {
            print(text)
        }
        // The reader went away (`| head`): SIGPIPE is ignored for the socket's sake, so look.
        if ferror(stdout) != 0 {
            let code = errno
            if code == EPIPE { throw ExitCode(141) }
            printError("repctl: cannot write to standard output: \(String(cString: strerror(code)))")
            throw ExitCode(1)
        }
    }

    /// Whether standard output is a pipe whose reader has gone (`poll` says `POLLERR` on its writing end).
    static func outputClosed() -> Bool {
        var output = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
        return poll(&output, 1, 0) > 0 && output.revents & Int16(POLLERR) != 0
    }

    /// The event types of an `--events` list (already validated).
    static func kinds(_ list: String) -> Set<EventKind> {
        Set(list.split(separator: ",").compactMap { EventKind(rawValue: String($0)) })
    }

    /// A line in words ("set 2 · rep 7 · 1.9 s"); nil for lines not worth showing.
    static func describe(_ message: ServerLine) -> String? {
        switch message {
        case .event(let event): describe(event)
        case .hello(let hello): "connected to repd \(hello.version) (\(sensorLabel(hello.sensor, separator: ": ")))"
        case .bye(let reason):
            reason == "journal replaced"
                ? "repd closed the connection: its journal file was deleted or replaced, and it went over to the file "
                    + "there; reconnecting to follow that file" : "repd is stopping (\(reason))"
        case .samples(let samples): "\(samples.count) samples"
        case .error(let message): "error from repd: \(message)"
        case .status, .history, .subscribed, .reset, .pong, .unknown: nil
        }
    }

    /// A set, rep or sensor event in words.
    static func describe(_ event: ServerEvent) -> String {
        switch event.body {
        case .workout(.rep(let r)):
            return
                "set \(r.setNumber) · rep \(r.repInSet) · \(format(r.duration, decimals: 1)) s\(quality(r.quality))  (total \(r.totalReps))"
        case .workout(.setStarted(let s)): return "set \(s.setNumber) started"
        case .workout(.setEnded(let s)):
            let live = s.liveRepCount.map { " (counted live: \($0); corrected after the set)" } ?? ""
            var text = "set \(s.setNumber) ended: \(s.repCount) reps\(live)"
            if event.interrupted { text += " (interrupted: repd stopped before the set ended; the reps it sent)" }
            if let fastest = s.quality?.fastestMeanVelocity, let loss = s.quality?.velocityLoss {
                text += " · fastest \(format(fastest, decimals: 2)) m/s, velocity loss \(format(loss, decimals: 0)) %"
            } else if let why = s.quality?.velocityUnavailable {
                text += " · no velocity: \(why)"
            }
            return text
        case .sensor(let state, _):
            let message: String? =
                switch state {
                case .sensorLost(let reason), .polling(let reason): reason
                case .failed(let error): error.message
                default: nil
                }
            return "sensor \(ServerMessage.stateName(state))\(message.map { ": \($0)" } ?? "")"
        case .damaged(let type):
            return "an event\(type.isEmpty ? "" : " (\(type))") damaged in repd's journal: its text cannot be read"
        case .other(let type):
            return "a \(type) event this repctl cannot read whole (a newer repd's?)"
        }
    }
}

extension Subscribe {
    /// " · ecc 1.2 s · con 0.8 s · 0.61 m/s (peak 1.02) · ROM 0.52 m · loss 8 %" from a rep's quality.
    static func quality(_ q: RepQuality?) -> String {
        guard let q else { return "" }
        var text = ""
        if let e = q.eccentric { text += " · ecc \(format(e, decimals: 1)) s" }
        if let c = q.concentric { text += " · con \(format(c, decimals: 1)) s" }
        if let v = q.velocity {
            text += " · \(format(v.meanConcentric, decimals: 2)) m/s (peak \(format(v.peakConcentric, decimals: 2)))"
            text += " · ROM \(format(v.rangeOfMotion, decimals: 2)) m · loss \(format(v.loss, decimals: 0)) %"
        } else if let why = q.velocityUnavailable {
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
