import MotionCore
import RepDetection
import RepProtocol

/// One line repd sent, read back into types: the reader's side of `ServerMessage` (docs/PROTOCOL.md). What a later
/// version of protocol 1 adds reads without an error: members this version does not know are ignored, a message type
/// it does not know is `.unknown`, and a journaled event it cannot read whole (a type, a sensor state or an error
/// kind it does not know) is an event whose body is `.other`, with its id, so that a resume or a `history` page goes
/// on past it.
public enum ServerLine: Sendable, Equatable {
    /// `hello`, once on connect.
    case hello(Hello)
    /// `set_start`, `rep`, `set_end` or `sensor`, live or replayed.
    case event(ServerEvent)
    /// `samples`: raw samples, `[[t, ax, ay, az], …]`.
    case samples([MotionSample])
    /// The reply to `status`, with repd's `version`.
    case status(ServerMessage.Status, version: String)
    /// The reply to `history`.
    case history(History)
    /// The reply to `subscribe`; with `since`, the replayed events follow.
    case subscribed(Set<EventKind>, since: Int64?)
    /// The reply to `reset`.
    case reset
    /// The reply to `ping`.
    case pong
    /// A refused line or connection, with repd's reason.
    case error(String)
    /// repd is stopping.
    case bye(reason: String)
    /// A message type this version does not know (ignore it).
    case unknown(type: String)

    /// `hello`: who repd is and what it sends.
    public struct Hello: Sendable, Equatable {
        /// The protocol version (1).
        public var protocolVersion: Int
        /// repd's version.
        public var version: String
        /// What repd reads from.
        public var sensor: ServerMessage.SensorInfo
        /// The event types sent until the client subscribes otherwise.
        public var subscribed: Set<EventKind>
        /// The newest journaled event's id (nil without a journal).
        public var newestID: Int64?
        /// The journal file's identity (nil without a journal, or from a repd before identities): another one means
        /// another file, whose ids started over.
        public var journal: String?

        /// Creates the message.
        public init(
            protocolVersion: Int, version: String, sensor: ServerMessage.SensorInfo, subscribed: Set<EventKind>,
            newestID: Int64?, journal: String? = nil
        ) {
            self.protocolVersion = protocolVersion
            self.version = version
            self.sensor = sensor
            self.subscribed = subscribed
            self.newestID = newestID
            self.journal = journal
        }

        /// Whether ids this client got from the journal `journal` (ids up to `lastID`) mean nothing here: another
        /// file (its identity differs), or one whose newest id is below them (ids started over; a repd before
        /// identities).
        public func startsOver(fromJournal journal: String?, lastID: Int64) -> Bool {
            if let journal, let now = self.journal, journal != now { return true }
            if let newestID, newestID < lastID { return true }
            return false
        }
    }

    /// `history`: journaled events, oldest first.
    public struct History: Sendable, Equatable {
        /// The events.
        public var events: [ServerEvent]
        /// Each event's text exactly as repd sent it (member order kept), for printing protocol lines.
        public var eventTexts: [String]
        /// The limit cut the answer short: ask again after the last id (or, with `latest`, before the first).
        public var more: Bool
        /// The journal's newest id.
        public var newestID: Int64?

        /// Creates the reply.
        public init(events: [ServerEvent], eventTexts: [String], more: Bool, newestID: Int64?) {
            self.events = events
            self.eventTexts = eventTexts
            self.more = more
            self.newestID = newestID
        }
    }

    /// The message's `type`.
    public var type: String {
        switch self {
        case .hello: "hello"
        case .event(let event): event.type
        case .samples: "samples"
        case .status: "status"
        case .history: "history"
        case .subscribed: "subscribed"
        case .reset: "reset"
        case .pong: "pong"
        case .error: "error"
        case .bye: "bye"
        case .unknown(let type): type
        }
    }

    /// The journaled event's id, when this is one.
    public var eventID: Int64? {
        if case .event(let event) = self { return event.id }
        return nil
    }
}

/// A `set_start`, `rep`, `set_end` or `sensor` line: what happened, when repd published it, and, when journaled, its
/// id and station.
public struct ServerEvent: Sendable, Equatable {
    /// What happened.
    public enum Body: Sendable, Equatable {
        /// A set started, a rep was counted, a set ended. A `set_start` line carries no rep count: it reads as 0.
        case workout(WorkoutEvent)
        /// The sensor's state changed; `timestamps` (`device` or `host`) says where sample times come from.
        case sensor(MotionProviderState, timestamps: String?)
        /// A journaled event whose stored text could not be read (`{"type":"damaged"}`): `of` is the type the
        /// journal filed it under (empty when unknown). Its `wall` reads as 0.
        case damaged(of: String)
        /// An event this version cannot read whole: a type it does not know carrying an `id` (a later repd's
        /// journaled event, live, replayed or in `history`), or a `sensor` event whose `state` or error `kind` it does
        /// not know. `type` is the line's; its `id`, `station` and `wall` (0 when absent) are read as sent. Skip it,
        /// keeping its id as seen.
        case other(type: String)
    }

    /// What happened.
    public var body: Body
    /// The Unix time at which repd published it (s).
    public var wall: Double
    /// Its journal id (nil when not journaled).
    public var id: Int64?
    /// The station that journaled it (nil when not journaled).
    public var station: String?
    /// A `set_end` repd journaled at its start for a set the last run left open (a crash, a power cut):
    /// `interrupted` true in the line. Its count is the reps that set sent.
    public var interrupted: Bool

    /// Creates the event.
    public init(_ body: Body, wall: Double, id: Int64? = nil, station: String? = nil, interrupted: Bool = false) {
        self.body = body
        self.wall = wall
        self.id = id
        self.station = station
        self.interrupted = interrupted
    }

    /// The line's `type`: `set_start`, `rep`, `set_end`, `sensor`, `damaged`, or, for `.other`, the type it had.
    public var type: String {
        switch body {
        case .workout(let event): ServerMessage.typeName(of: event)
        case .sensor: "sensor"
        case .damaged: "damaged"
        case .other(let type): type
        }
    }

    /// The event type a client subscribes to for it; nil for a damaged row the journal filed under no type this
    /// version knows, and for an event of a type it does not know.
    public var kind: EventKind? {
        switch body {
        case .workout(let event): ServerMessage.kind(of: event)
        case .sensor: .sensor
        case .damaged(let type), .other(let type): ServerMessage.kind(ofType: type)
        }
    }
}

/// Why a line from repd could not be read: what was wrong and where (the byte offset of a JSON syntax error, or the
/// member, as a path such as `status.ring.capacity`).
public struct ServerLineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public var reason: String
    /// The member it concerns, as a path from the line's object (`set_end.quality[2].start_t`); nil for syntax.
    public var member: String?
    /// The byte offset in the line where JSON parsing stopped; nil when the JSON was well formed.
    public var offset: Int?

    /// Creates the error.
    public init(reason: String, member: String? = nil, offset: Int? = nil) {
        self.reason = reason
        self.member = member
        self.offset = offset
    }

    /// The error in words, with where: `malformed JSON at byte 8: …` or `rep.set: expected a whole number`.
    public var description: String {
        if let offset { return "malformed JSON at byte \(offset): \(reason)" }
        if let member { return "\(member): \(reason)" }
        return reason
    }
}

extension ServerLine {
    /// Reads one line (with or without its newline).
    public static func parse(_ line: some Collection<UInt8>) throws(ServerLineError) -> ServerLine {
        let parsed: (value: JSONValue, elements: [String])
        do { parsed = try JSONParser.parse(line, keepingElementsOf: "events") } catch {
            throw ServerLineError(reason: error.reason, offset: error.offset)
        }
        return try read(parsed.value, eventTexts: parsed.elements)
    }

    /// Reads one line's text.
    public static func parse(_ line: String) throws(ServerLineError) -> ServerLine { try parse(Array(line.utf8)) }

    /// Reads a line already parsed as JSON (for a client that also keeps the JSON, as repd-web's display does);
    /// `eventTexts` are a `history` reply's events as sent (`JSONParser.parse(_:keepingElementsOf:)`), if wanted.
    public static func read(_ value: JSONValue, eventTexts: [String] = []) throws(ServerLineError) -> ServerLine {
        guard case .object(let members) = value else {
            throw ServerLineError(reason: "a line must be one JSON object")
        }
        guard case .string(let type)? = members["type"] else {
            throw ServerLineError(reason: "missing \"type\" (a string)", member: "type")
        }
        return try message(Members(members, path: type), texts: eventTexts)
    }

    private static func message(_ m: Members, texts: [String]) throws(ServerLineError) -> ServerLine {
        switch m.path {
        case "hello":
            return .hello(
                Hello(
                    protocolVersion: try m.int("protocol"), version: try m.string("version"),
                    sensor: try sensorInfo(m.object("sensor")), subscribed: try kinds(m, "subscribed"),
                    newestID: try m.optionalID("newest_id"), journal: try m.optionalString("journal")))
        case _ where isJournaledType(m.path): return .event(try event(m))
        case "samples": return .samples(try samples(m))
        case "status": return .status(try status(m), version: try m.string("version"))
        case "history":
            let items = try m.array("events")
            var events: [ServerEvent] = []
            for (index, item) in items.enumerated() {
                let entry = try m.element(item, at: index, of: "events")
                guard case .string(let type)? = entry.values["type"], !replyTypes.contains(type) else {
                    throw ServerLineError(reason: "not a journaled event", member: entry.path)
                }
                let members = Members(entry.values, path: type)
                events.append(
                    isJournaledType(type)
                        ? try event(members, reportingAs: entry.path) : try other(members, reportingAs: entry.path))
            }
            return .history(
                History(
                    events: events, eventTexts: texts.count == events.count ? texts : [], more: try m.bool("more"),
                    newestID: try m.optionalID("newest_id")))
        case "subscribed": return .subscribed(try kinds(m, "events"), since: try m.optionalID("since"))
        case "reset": return .reset
        case "pong": return .pong
        case "error": return .error(try m.string("message"))
        case "bye": return .bye(reason: try m.string("reason"))
        // A type this version does not know: a later repd's journaled event when it carries an id.
        case _ where (try? m.optionalID("id")) != nil: return .event(try other(m))
        default: return .unknown(type: m.path)
        }
    }

    /// Whether `type` is one of the events repd journals (and `history` returns): an event type of the protocol
    /// (`ServerMessage.kind(ofType:)`) or a damaged row.
    private static func isJournaledType(_ type: String) -> Bool {
        ServerMessage.kind(ofType: type) != nil || type == "damaged"
    }
    /// The types of the other messages repd sends: never an event of a `history` reply.
    private static let replyTypes: Set = [
        "hello", "samples", "status", "history", "subscribed", "reset", "pong", "error", "bye",
    ]

    /// An event this version cannot read whole (`ServerEvent.Body.other`): its `id`, `station` and `wall` as sent.
    private static func other(_ m: Members, reportingAs path: String? = nil) throws(ServerLineError) -> ServerEvent {
        let type = m.path
        let m = Members(m.values, path: path ?? m.path)
        return ServerEvent(
            .other(type: type), wall: try m.optionalDouble("wall") ?? 0, id: try m.optionalID("id"),
            station: try m.optionalString("station"))
    }

    /// An event line; `path` names it in errors (`history.events[3]` for one inside a `history` reply).
    private static func event(_ m: Members, reportingAs path: String? = nil) throws(ServerLineError) -> ServerEvent {
        let m = Members(m.values, path: path ?? m.path)
        let type = m.values["type"]?.stringValue ?? ""
        let body: ServerEvent.Body
        switch type {
        case "damaged":
            return ServerEvent(
                .damaged(of: m.values["of"]?.stringValue ?? ""), wall: 0, id: try m.optionalID("id"),
                station: try m.optionalString("station"))
        case "set_start":
            body = .workout(
                .setStarted(SetEvent(setNumber: try m.int("set"), timestamp: try m.double("t"), repCount: 0)))
        case "rep":
            body = .workout(
                .rep(
                    RepEvent(
                        setNumber: try m.int("set"), repInSet: try m.int("rep"), totalReps: try m.int("total"),
                        timestamp: try m.double("t"), duration: try m.double("duration"),
                        amplitude: try m.double("amplitude"), quality: try repQuality(m))))
        case "set_end":
            var quality: SetQuality?
            if m.values["quality"] != nil {
                var reps: [RepQuality] = []
                for (index, item) in try m.array("quality").enumerated() {
                    let entry = try m.element(item, at: index, of: "quality")
                    guard let rep = try repQuality(entry) else {
                        throw ServerLineError(reason: "missing \"start_t\" (a number)", member: entry.path)
                    }
                    reps.append(rep)
                }
                quality = SetQuality(
                    reps: reps, fastestMeanVelocity: try m.optionalDouble("fastest_mean_velocity_m_s"),
                    velocityLoss: try m.optionalDouble("velocity_loss_pct"),
                    velocityUnavailable: try m.optionalString("velocity_unavailable"))
            }
            body = .workout(
                .setEnded(
                    SetEvent(
                        setNumber: try m.int("set"), timestamp: try m.double("t"), repCount: try m.int("reps"),
                        liveRepCount: try m.optionalInt("live_reps"), quality: quality)))
        default:
            // A state or error kind of a later repd: the event still counts (its id), as `.other`.
            guard let state = try sensorState(m) else {
                return try other(Members(m.values, path: type), reportingAs: m.path)
            }
            body = .sensor(state, timestamps: try m.optionalString("timestamps"))
        }
        return ServerEvent(
            body, wall: try m.double("wall"), id: try m.optionalID("id"), station: try m.optionalString("station"),
            interrupted: type == "set_end" && m.values["interrupted"] == .bool(true))
    }

    /// A rep's quality members (of a `rep` line or of an entry of `set_end.quality`); nil without `start_t`.
    private static func repQuality(_ m: Members) throws(ServerLineError) -> RepQuality? {
        guard m.values["start_t"] != nil else { return nil }
        var startsAtTop: Bool?
        switch try m.optionalString("starts_at") {
        case nil: break
        case "top": startsAtTop = true
        case "bottom": startsAtTop = false
        case let other?:
            throw ServerLineError(reason: "\"\(other)\" is neither top nor bottom", member: m.path(of: "starts_at"))
        }
        var velocity: RepVelocity?
        if m.values["rom_m"] != nil {
            velocity = RepVelocity(
                rangeOfMotion: try m.double("rom_m"), meanConcentric: try m.double("mean_velocity_m_s"),
                peakConcentric: try m.double("peak_velocity_m_s"), loss: try m.double("velocity_loss_pct"))
        }
        return RepQuality(
            start: try m.double("start_t"), end: try m.double("end_t"), startsAtTop: startsAtTop,
            concentric: try m.optionalDouble("concentric_s"), eccentric: try m.optionalDouble("eccentric_s"),
            pauseBottom: try m.optionalDouble("pause_bottom_s"), pauseTop: try m.optionalDouble("pause_top_s"),
            velocity: velocity, velocityUnavailable: try m.optionalString("velocity_unavailable"))
    }

    /// The `state` of a `sensor` line (with its `message` and `kind`) as the provider state it was written from; nil
    /// for a state or error kind this version does not know (a later repd's).
    private static func sensorState(_ m: Members) throws(ServerLineError) -> MotionProviderState? {
        switch try m.string("state") {
        case "idle": return .idle
        case "connected": return .running
        case "stopped": return .stopped
        case "finished": return .finished
        case "back": return .sensorBack
        case "lost": return .sensorLost(reason: try m.optionalString("message") ?? "")
        case "polling": return .polling(reason: try m.optionalString("message") ?? "")
        case "error":
            guard let kind = MotionProviderError.Kind(rawValue: try m.string("kind")) else { return nil }
            return .failed(MotionProviderError(kind, try m.optionalString("message") ?? ""))
        default: return nil
        }
    }

    private static func sensorInfo(_ m: Members) throws(ServerLineError) -> ServerMessage.SensorInfo {
        ServerMessage.SensorInfo(
            kind: try m.string("kind"), name: try m.string("name"), rateHz: try m.double("rate_hz"))
    }

    /// The event types a list names; a name this version does not know (a type a later repd sends) is left out.
    private static func kinds(_ m: Members, _ key: String) throws(ServerLineError) -> Set<EventKind> {
        var kinds = Set<EventKind>()
        for (index, item) in try m.array(key).enumerated() {
            guard let name = item.stringValue else {
                throw ServerLineError(reason: "expected an event type's name", member: "\(m.path(of: key))[\(index)]")
            }
            if let kind = EventKind(rawValue: name) { kinds.insert(kind) }
        }
        return kinds
    }

    private static func samples(_ m: Members) throws(ServerLineError) -> [MotionSample] {
        let rows = try m.array("samples")
        var samples: [MotionSample] = []
        samples.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            guard case .array(let v) = row, v.count == 4, let t = v[0].double, let ax = v[1].double,
                let ay = v[2].double, let az = v[3].double
            else {
                throw ServerLineError(
                    reason: "expected [t, ax, ay, az] (numbers)", member: "\(m.path(of: "samples"))[\(index)]")
            }
            samples.append(MotionSample(timestamp: t, ax: ax, ay: ay, az: az))
        }
        return samples
    }

    private static func status(_ m: Members) throws(ServerLineError) -> ServerMessage.Status {
        let ring = try m.object("ring")
        var status = ServerMessage.Status(
            uptime: try m.double("uptime_s"), sensor: try sensorInfo(m.object("sensor")),
            sensorState: try m.string("sensor_state"), samples: try m.int("samples"),
            ringCapacity: try ring.int("capacity"), ringDroppedBatches: try ring.int("dropped_batches"),
            ringDroppedSamples: try ring.int("dropped_samples"), clients: try m.int("clients"), reps: try m.int("reps"),
            sets: try m.int("sets"), inSet: try m.bool("in_set"))
        if m.values["iio"] != nil {
            let iio = try m.object("iio")
            status.iio = ServerMessage.SensorCounters(
                recordsRead: try iio.int("records"), bytesDiscarded: try iio.int("bytes_discarded"),
                reconnects: try iio.int("reconnects"), timestamps: try iio.optionalString("timestamps"))
        }
        if m.values["journal"] != nil {
            let journal = try m.object("journal")
            status.journal = ServerMessage.JournalStatus(
                path: try journal.string("path"), newestID: try journal.id("newest_id"),
                writing: try journal.bool("writing"), error: try journal.optionalString("error"))
        }
        if m.values["uplink"] != nil {
            let u = try m.object("uplink")
            let state = try u.string("state")
            status.uplink =
                state == "disabled"
                ? ServerMessage.UplinkInfo(state: state)
                : ServerMessage.UplinkInfo(
                    state: state, broker: try u.optionalString("broker"), lastError: try u.optionalString("last_error"),
                    ackedID: try u.id("acked_id"), backlog: try u.int64("backlog"), inFlight: try u.int("in_flight"),
                    published: try u.int("published"), connections: try u.int("connections"))
        }
        return status
    }
}
