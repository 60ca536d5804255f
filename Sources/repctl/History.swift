import ArgumentParser
import RepClient
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print journaled events from repd's event journal: by id, by time, or the newest.",
        discussion: """
            Asks the running repd (the `history` command of docs/PROTOCOL.md) and pages through the answer, so any \
            number of events can be printed. Times are Unix seconds or an age: 90s, 15m, 2h, 3d (that long ago). \
            Without --from, --to, --since or --before it prints the newest --last events. \(connectingHelp) \
            Each page of the answer is waited for up to 10 s.

            Examples:
              repctl history                          # the newest 20 events
              repctl history --last 100 --events rep
              repctl history --from 2h --json         # everything of the last two hours, as protocol lines
              repctl history --since 1200 --before 1300
            """)

    @Option(help: "repd's socket (default: /run/repd/events.sock if it exists, else the per-user path).")
    var socket: String?

    @Flag(help: "Print each event as its protocol line (with id and station).")
    var json = false

    @Option(help: "Event types: rep, set, sensor (comma-separated).")
    var events = "rep,set,sensor"

    @Option(help: "Only events with an id above this.")
    var since: Int64?

    @Option(help: "Only events with an id below this.")
    var before: Int64?

    @Option(help: "Only events published at or after this time (Unix seconds, or an age such as 2h).")
    var from: String?

    @Option(help: "Only events published before this time (Unix seconds, or an age such as 10m).")
    var to: String?

    @Option(help: "With no other bound: how many of the newest events (default 20). With bounds: at most this many.")
    var last: Int?

    func validate() throws {
        for name in events.split(separator: ",") {
            guard let kind = EventKind(rawValue: String(name)), kind != .samples else {
                throw ValidationError("unknown event type '\(name)' (rep, set, sensor; samples are not journaled)")
            }
        }
        if let since, since < 0 { throw ValidationError("--since must be an event id (0 or more)") }
        if let before, before < 0 { throw ValidationError("--before must be an event id (0 or more)") }
        if let last, last < 1 { throw ValidationError("--last must be 1 or more") }
        // Ids above --since and below --before: none when --before is not above --since + 1 (both ≥ 0: no overflow).
        if let since, let before, before - since <= 1 {
            throw ValidationError(
                "--since \(since) --before \(before): no event id is above \(since) and below \(before)")
        }
        let now = wallClock()
        for (name, value) in [("--from", from), ("--to", to)] {
            guard let value else { continue }
            guard let time = Self.time(value, now: now) else {
                throw ValidationError("\(name) '\(value)' is neither Unix seconds nor an age such as 90s, 15m, 2h, 3d")
            }
            // An age can reach back before 1970 (99999999999d): repd takes only Unix times from 0 on.
            guard time >= 0, time.isFinite else {
                throw ValidationError("\(name) '\(value)' is before the Unix epoch (1970): no event is that old")
            }
        }
        if let from, let to, let start = Self.time(from, now: now), let end = Self.time(to, now: now), start > end {
            throw ValidationError("--from \(from) is after --to \(to): no event can be in between")
        }
    }

    /// A time argument: Unix seconds, or an age (`90s`, `15m`, `2h`, `3d`) before `now` (which may be before 0 or
    /// not finite: `validate()` refuses those).
    static func time(_ text: String, now: Double) -> Double? {
        if let seconds = Double(text), seconds.isFinite, seconds >= 0 { return seconds }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let amount = Double(text.dropLast()), amount >= 0,
            amount.isFinite
        else { return nil }
        return now - amount * unit
    }

    func run() throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        let wallNow = wallClock()
        var request = HistoryRequest(
            after: since ?? 0, before: before, from: from.flatMap { Self.time($0, now: wallNow) },
            to: to.flatMap { Self.time($0, now: wallNow) },
            kinds: Set(events.split(separator: ",").compactMap { EventKind(rawValue: String($0)) }))
        let bounded = since != nil || before != nil || from != nil || to != nil
        var wanted = last ?? (bounded ? Int.max : 20)
        request.latest = !bounded
        let connection = try openDaemonSession(path: socketPath(socket))
        var pages: [[(event: ServerEvent, text: String?)]] = []
        while wanted > 0 {
            request.limit = min(wanted, HistoryRequest.maximumLimit)
            connection.sendCommand(.history(request))
            let reply = try Self.awaitReply(connection)
            let texts = reply.eventTexts
            let items = reply.events.enumerated().map { (event: $1, text: texts.isEmpty ? nil : texts[$0]) }
            wanted -= items.count
            if request.latest {
                // Newest first, page by page: each page goes before the one already fetched.
                pages.insert(items, at: 0)
                guard reply.more, let first = items.first?.event.id else { break }
                request.before = first
            } else {
                for item in items { emit(item) }
                guard reply.more, let lastID = items.last?.event.id else { break }
                request.after = lastID
            }
        }
        for page in pages { for item in page { emit(item) } }
    }

    private func emit(_ item: (event: ServerEvent, text: String?)) {
        if json {
            if let text = item.text { print(text) }
        } else {
            let id = item.event.id.map { "#\($0) " } ?? ""
            // A damaged row has no time (nor may a later repd's event this repctl cannot read): as wide a gap.
            let time = item.event.wall > 0 ? Self.localTime(item.event.wall) : String(repeating: " ", count: 19)
            print("\(time)  \(id)\(Subscribe.describe(item.event))")
        }
    }

    /// The reply to `history`, within 10 s in all (live events in between do not extend the wait).
    private static func awaitReply(_ connection: RepConnection) throws -> ServerLine.History {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, !interrupted.load(ordering: .relaxed) {
            switch connection.next(timeout: .milliseconds(200)) {
            case .message(.history(let history), _): return history
            case .message(.error(let message), _):
                printError("repctl: \(message)")
                throw ExitCode(1)
            case .malformed(let error, let text) where text.hasPrefix("{\"type\":\"history\""):
                printError("repctl: repd's history reply cannot be read: \(error)")
                throw ExitCode(1)
            case .message, .malformed, .timeout: continue
            case .closed:
                printError("repctl: repd closed the connection before it answered history")
                throw ExitCode(1)
            }
        }
        if interrupted.load(ordering: .relaxed) { throw ExitCode(130) }
        printError("repctl: repd did not answer history within 10 s")
        throw ExitCode(1)
    }

    /// `2026-11-24 11:32:05` in the local time zone.
    static func localTime(_ wall: Double) -> String {
        var seconds = time_t(wall.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
