import MotionCore
import RepDetection

/// The lines the daemon sends: one JSON object per line (protocol v1, see docs/PROTOCOL.md).
public enum ServerMessage {
    /// The protocol version in `hello`.
    public static let protocolVersion = 1

    /// What the daemon reads from.
    public struct SensorInfo: Sendable, Equatable {
        /// `iio`, `fixture` or `demo`.
        public var kind: String
        /// Device name, file or "demo".
        public var name: String
        /// Sample rate in Hz (0 when unknown).
        public var rateHz: Double

        /// Creates the description.
        public init(kind: String, name: String, rateHz: Double) {
            self.kind = kind
            self.name = name
            self.rateHz = rateHz
        }

        var json: JSONWriter.Value {
            .object([("kind", .string(kind)), ("name", .string(name)), ("rate_hz", .number(rateHz))])
        }
    }

    /// What an IIO sensor's reader has done so far (`status` carries it when the sensor is an IIO device).
    public struct SensorCounters: Sendable, Equatable {
        /// Whole records read from the device node.
        public var recordsRead: Int
        /// Bytes of partial records dropped when the device went away mid-record.
        public var bytesDiscarded: Int
        /// Times the sensor came back after being lost.
        public var reconnects: Int
        /// Where sample times come from: `device` (the timestamp channel) or `host` (repd's monotonic clock at
        /// read time); nil before samples flow.
        public var timestamps: String?

        /// Creates the counters.
        public init(recordsRead: Int, bytesDiscarded: Int, reconnects: Int, timestamps: String? = nil) {
            self.recordsRead = recordsRead
            self.bytesDiscarded = bytesDiscarded
            self.reconnects = reconnects
            self.timestamps = timestamps
        }

        var json: JSONWriter.Value {
            .object(
                [
                    ("records", .integer(recordsRead)), ("bytes_discarded", .integer(bytesDiscarded)),
                    ("reconnects", .integer(reconnects)),
                ] + (timestamps.map { [("timestamps", .string($0))] } ?? []))
        }
    }

    /// The fleet uplink's side of `status` (`uplink`).
    public struct UplinkInfo: Sendable, Equatable {
        /// `disabled`, `connecting`, `connected`, `error` or `stopped`.
        public var state: String
        /// The broker, `mqtt://host:port` (nil when disabled).
        public var broker: String?
        /// Why the last attempt failed (nil when connected or disabled).
        public var lastError: String?
        /// The newest id up to which the broker acknowledged every event.
        public var ackedID: Int64
        /// Journaled events the broker has not acknowledged: the newest id minus `ackedID`.
        public var backlog: Int64
        /// Events sent and not yet acknowledged.
        public var inFlight: Int
        /// Events published since repd started (resent ones counted again).
        public var published: Int
        /// Connections made since repd started.
        public var connections: Int

        /// Creates the description.
        public init(
            state: String, broker: String? = nil, lastError: String? = nil, ackedID: Int64 = 0, backlog: Int64 = 0,
            inFlight: Int = 0, published: Int = 0, connections: Int = 0
        ) {
            self.state = state
            self.broker = broker
            self.lastError = lastError
            self.ackedID = ackedID
            self.backlog = backlog
            self.inFlight = inFlight
            self.published = published
            self.connections = connections
        }

        var json: JSONWriter.Value {
            var members: [(String, JSONWriter.Value)] = [("state", .string(state))]
            guard state != "disabled" else { return .object(members) }
            if let broker { members.append(("broker", .string(broker))) }
            if let lastError { members.append(("last_error", .string(lastError))) }
            members += [
                ("acked_id", .integer(Int(ackedID))), ("backlog", .integer(Int(backlog))),
                ("in_flight", .integer(inFlight)),
                ("published", .integer(published)), ("connections", .integer(connections)),
            ]
            return .object(members)
        }
    }

    /// Sent once on connect; `newestID` is the id of the newest journaled event (nil without a journal).
    public static func hello(
        daemonVersion: String, sensor: SensorInfo, subscribed: Set<EventKind>, newestID: Int64? = nil,
        journal: String? = nil
    ) -> String {
        line(
            [
                ("type", .string("hello")), ("protocol", .integer(protocolVersion)),
                ("version", .string(daemonVersion)),
                ("sensor", sensor.json), ("rate_hz", .number(sensor.rateHz)),
                ("subscribed", .array(subscribed.map(\.rawValue).sorted().map { .string($0) })),
            ] + (newestID.map { [("newest_id", .integer(Int($0)))] } ?? [])
                + (journal.map { [("journal", .string($0))] } ?? []))
    }

    /// A journaled event's line: `body` (one JSON object, with or without its newline) with `"id"` and `"station"`
    /// added at its end, and `"journal"` (the journal file's identity) after them when given: the uplink's messages
    /// carry it, since each stands alone (a socket client has it once, in `hello`).
    ///
    /// A body that is not one JSON object (a journal row damaged on the disk, or written by something else) gives
    /// `damaged(type:id:station:journal:)`'s line in its place: the id stays accounted for, and a client reading
    /// the line is not given invalid JSON. `checked` false skips that check, for a body this process just made.
    public static func journaled(
        _ body: some StringProtocol, id: Int64, station: String, journal: String? = nil, type: String = "",
        checked: Bool = true
    ) -> String {
        var object = Substring(body)
        while object.last == "\n" { object = object.dropLast() }
        if checked, !isOneObject(object) { return damaged(type: type, id: id, station: station, journal: journal) }
        precondition(object.last == "}", "a journaled event is one JSON object")
        object = object.dropLast()
        let separator = object.last == "{" ? "" : ","
        let file = journal.map { ",\"journal\":\(JSONWriter.Value.string($0).text)" } ?? ""
        return "\(object)\(separator)\"id\":\(id),\"station\":\(JSONWriter.Value.string(station).text)\(file)}\n"
    }

    /// Whether `text` (a journal row, without its line end) is one JSON object on one line, from its `{` to its
    /// `}`: nothing before or after them (not even white space, which JSON allows: the id is added before the last
    /// brace), and no line end inside (which would split the protocol's line). It must also read as an event: a
    /// string `type` (every protocol line has one), and none of the members added to it (`id`, `station`,
    /// `journal`), which would then be given twice, a line `ServerLine.parse` refuses. (Before, a row written by
    /// another program as `{}` went out without a `type`, and one holding its own `"id"` made `repctl history` fail
    /// on the whole page.)
    public static func isOneObject(_ text: some StringProtocol) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.first == UInt8(ascii: "{"), bytes.last == UInt8(ascii: "}"), !bytes.contains(10),
            !bytes.contains(13), case .object(let members)? = try? JSONParser.parse(bytes),
            members["type"]?.stringValue != nil, members["id"] == nil, members["station"] == nil,
            members["journal"] == nil
        else { return false }
        return true
    }

    /// What stands for journaled event `id` whose stored text is not one JSON object:
    /// `{"type":"damaged","of":"rep","id":…,"station":…}` (`of`: the journal's type column for it, when known).
    public static func damaged(type: String, id: Int64, station: String, journal: String? = nil) -> String {
        var members: [(String, JSONWriter.Value)] = [("type", .string("damaged"))]
        if !type.isEmpty { members.append(("of", .string(type))) }
        members += [("id", .integer(Int(id))), ("station", .string(station))]
        if let journal { members.append(("journal", .string(journal))) }
        return line(members)
    }

    /// The message type of one of the lines `event` and `sensor` make (the journal's `type` column).
    public static func typeName(of event: WorkoutEvent) -> String {
        switch event {
        case .rep: "rep"
        case .setStarted: "set_start"
        case .setEnded: "set_end"
        }
    }

    /// The event type a journaled message type belongs to (nil for types that are never journaled).
    public static func kind(ofType type: String) -> EventKind? {
        switch type {
        case "rep": .rep
        case "set_start", "set_end": .set
        case "sensor": .sensor
        default: nil
        }
    }

    /// A workout event; `wall` is the Unix time (seconds) at which the daemon published it.
    public static func event(_ event: WorkoutEvent, wall: Double) -> String {
        switch event {
        case .rep(let r):
            return line(
                [
                    ("type", .string("rep")), ("set", .integer(r.setNumber)), ("rep", .integer(r.repInSet)),
                    ("total", .integer(r.totalReps)), ("t", .number(r.timestamp)), ("wall", .number(wall)),
                    ("duration", .number(r.duration)), ("amplitude", .number(r.amplitude)),
                ] + (r.quality.map(qualityFields) ?? []))
        case .setStarted(let s):
            return line([
                ("type", .string("set_start")), ("set", .integer(s.setNumber)), ("t", .number(s.timestamp)),
                ("wall", .number(wall)),
            ])
        case .setEnded(let s):
            var fields: [(String, JSONWriter.Value)] = [
                ("type", .string("set_end")), ("set", .integer(s.setNumber)), ("reps", .integer(s.repCount)),
            ]
            if let live = s.liveRepCount { fields.append(("live_reps", .integer(live))) }
            fields += [("t", .number(s.timestamp)), ("wall", .number(wall))]
            if let q = s.quality {
                if let v = q.fastestMeanVelocity {
                    fields.append(("fastest_mean_velocity_m_s", .number(rounded(v, 3))))
                }
                if let l = q.velocityLoss { fields.append(("velocity_loss_pct", .number(rounded(l, 1)))) }
                if let why = q.velocityUnavailable { fields.append(("velocity_unavailable", .string(why))) }
                fields.append(("quality", .array(q.reps.map { .object(qualityFields($0)) })))
            }
            return line(fields)
        }
    }

    /// The `set_end` repd journals at its start for a set the last run left open (it stopped without ending it: a
    /// crash, `kill -9`, a power cut): `reps` the reps that set sent, `t` and `wall` those of its last event, and
    /// `interrupted` true.
    public static func interruptedSetEnd(set: Int, reps: Int, t: Double, wall: Double) -> String {
        line([
            ("type", .string("set_end")), ("set", .integer(set)), ("reps", .integer(reps)), ("t", .number(t)),
            ("wall", .number(wall)), ("interrupted", .bool(true)),
        ])
    }

    /// A rep's quality as members of its `rep` line (and of each entry of `set_end.quality`): times in s, range of
    /// motion in m, velocities in m/s, velocity loss in %; a member is left out when it was not measured.
    static func qualityFields(_ q: RepQuality) -> [(String, JSONWriter.Value)] {
        var fields: [(String, JSONWriter.Value)] = [
            ("start_t", .number(rounded(q.start, 3))), ("end_t", .number(rounded(q.end, 3))),
        ]
        if let top = q.startsAtTop { fields.append(("starts_at", .string(top ? "top" : "bottom"))) }
        let times: [(String, Double?)] = [
            ("eccentric_s", q.eccentric), ("concentric_s", q.concentric), ("pause_bottom_s", q.pauseBottom),
            ("pause_top_s", q.pauseTop),
        ]
        for case (let key, let value?) in times { fields.append((key, .number(rounded(value, 3)))) }
        if let v = q.velocity {
            fields += [
                ("rom_m", .number(rounded(v.rangeOfMotion, 3))),
                ("mean_velocity_m_s", .number(rounded(v.meanConcentric, 3))),
                ("peak_velocity_m_s", .number(rounded(v.peakConcentric, 3))),
                ("velocity_loss_pct", .number(rounded(v.loss, 1))),
            ]
        }
        if let why = q.velocityUnavailable { fields.append(("velocity_unavailable", .string(why))) }
        return fields
    }

    private static func rounded(_ value: Double, _ decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        return (value * scale).rounded() / scale
    }

    /// The event type a workout event belongs to.
    public static func kind(of event: WorkoutEvent) -> EventKind {
        if case .rep = event { return .rep }
        return .set
    }

    /// The word a sensor state goes out as: the `state` of `sensor` events and `sensor_state` in `status`.
    public static func stateName(_ state: MotionProviderState) -> String {
        switch state {
        case .idle: "idle"
        case .running: "connected"
        case .stopped: "stopped"
        case .finished: "finished"
        case .sensorLost: "lost"
        case .sensorBack: "back"
        case .polling: "polling"
        case .failed: "error"
        }
    }

    /// A change of the sensor's state; `timestamps` (`device` or `host`) says where sample times come from.
    public static func sensor(_ state: MotionProviderState, wall: Double, timestamps: String? = nil) -> String {
        var members: [(String, JSONWriter.Value)] = [("type", .string("sensor")), ("state", .string(stateName(state)))]
        switch state {
        case .idle, .running, .stopped, .finished, .sensorBack: break
        case .sensorLost(let reason), .polling(let reason): members.append(("message", .string(reason)))
        case .failed(let error):
            members += [("kind", .string(error.kind.rawValue)), ("message", .string(error.message))]
        }
        if let timestamps { members.append(("timestamps", .string(timestamps))) }
        members.append(("wall", .number(wall)))
        return line(members)
    }

    /// A batch of raw samples: `[[t, ax, ay, az], ...]`.
    public static func samples(_ batch: [MotionSample]) -> String {
        var out = "{\"type\":\"samples\",\"samples\":["
        for (index, s) in batch.enumerated() {
            if index > 0 { out += "," }
            out += "[\(JSONWriter.numberText(s.timestamp)),\(JSONWriter.numberText(s.ax)),"
            out += "\(JSONWriter.numberText(s.ay)),\(JSONWriter.numberText(s.az))]"
        }
        return out + "]}\n"
    }

    /// The reply to `status`.
    public struct Status: Sendable, Equatable {
        /// Time since the daemon started, s.
        public var uptime: Double
        /// What the daemon reads from.
        public var sensor: SensorInfo
        /// The sensor's state as `stateName(_:)` writes it (`idle`, `connected`, `lost`, `polling`, `error`, ...).
        public var sensorState: String
        /// Samples read so far.
        public var samples: Int
        /// Samples the ring between the reader and the detector holds at most (0 before its first statistics).
        public var ringCapacity: Int
        /// Batches dropped because the ring was full.
        public var ringDroppedBatches: Int
        /// Samples in those batches.
        public var ringDroppedSamples: Int
        /// Clients connected now.
        public var clients: Int
        /// Reps counted since the start or the last reset.
        public var reps: Int
        /// The current or last set's number (0 before the first).
        public var sets: Int
        /// Whether a set is in progress.
        public var inSet: Bool
        /// The IIO reader's counters (nil for other sensors).
        public var iio: SensorCounters?
        /// The event journal's state (nil without one).
        public var journal: JournalStatus?
        /// The fleet uplink (nil: not reported).
        public var uplink: UplinkInfo?

        /// Creates the reply; `journal` is not among the arguments and starts nil.
        public init(
            uptime: Double, sensor: SensorInfo, sensorState: String, samples: Int, ringCapacity: Int,
            ringDroppedBatches: Int, ringDroppedSamples: Int, clients: Int, reps: Int, sets: Int, inSet: Bool,
            iio: SensorCounters? = nil, uplink: UplinkInfo? = nil
        ) {
            self.iio = iio
            self.uplink = uplink
            self.uptime = uptime
            self.sensor = sensor
            self.sensorState = sensorState
            self.samples = samples
            self.ringCapacity = ringCapacity
            self.ringDroppedBatches = ringDroppedBatches
            self.ringDroppedSamples = ringDroppedSamples
            self.clients = clients
            self.reps = reps
            self.sets = sets
            self.inSet = inSet
        }
    }

    /// The reply to `status`.
    public static func status(_ s: Status, daemonVersion: String) -> String {
        line(
            [
                ("type", .string("status")), ("version", .string(daemonVersion)), ("uptime_s", .number(s.uptime)),
                ("sensor", s.sensor.json), ("sensor_state", .string(s.sensorState)), ("samples", .integer(s.samples)),
                (
                    "ring",
                    .object([
                        ("capacity", .integer(s.ringCapacity)), ("dropped_batches", .integer(s.ringDroppedBatches)),
                        ("dropped_samples", .integer(s.ringDroppedSamples)),
                    ])
                ),
                ("clients", .integer(s.clients)), ("reps", .integer(s.reps)), ("sets", .integer(s.sets)),
                ("in_set", .bool(s.inSet)),
            ] + (s.iio.map { [("iio", $0.json)] } ?? []) + (s.journal.map { [("journal", $0.json)] } ?? [])
                + (s.uplink.map { [("uplink", $0.json)] } ?? []))
    }

    /// The journal part of `status`: its file, newest id, and whether it is being written.
    public struct JournalStatus: Sendable, Equatable {
        /// The database file.
        public var path: String
        /// The newest journaled event's id.
        public var newestID: Int64
        /// False while appends fail (disk full, file damaged): events then go out without ids.
        public var writing: Bool
        /// The last append error while `writing` is false.
        public var error: String?

        /// Creates the status.
        public init(path: String, newestID: Int64, writing: Bool, error: String? = nil) {
            self.path = path
            self.newestID = newestID
            self.writing = writing
            self.error = error
        }

        var json: JSONWriter.Value {
            .object(
                [("path", .string(path)), ("newest_id", .integer(Int(newestID))), ("writing", .bool(writing))]
                    + (error.map { [("error", .string($0))] } ?? []))
        }
    }

    /// The reply to `subscribe`; with `since`, the journaled events after that id follow it, then live ones.
    public static func subscribed(_ kinds: Set<EventKind>, since: Int64? = nil) -> String {
        line(
            [("type", .string("subscribed")), ("events", .array(kinds.map(\.rawValue).sorted().map { .string($0) }))]
                + (since.map { [("since", .integer(Int($0)))] } ?? []))
    }

    /// The reply to `history`: `events` holds the journaled events (each as it was sent live, with `id` and
    /// `station`) oldest first; `more` says the limit cut the answer short (ask again with `after` = the last id).
    public static func history(
        _ events: [(json: String, id: Int64, station: String, type: String)], more: Bool, newestID: Int64?
    ) -> String {
        var text = "{\"type\":\"history\",\"events\":["
        for (index, event) in events.enumerated() {
            if index > 0 { text += "," }
            var object = journaled(event.json, id: event.id, station: event.station, type: event.type)
            object.removeLast()  // the newline
            text += object
        }
        text += "],\"count\":\(events.count),\"more\":\(more)"
        if let newestID { text += ",\"newest_id\":\(newestID)" }
        return text + "}\n"
    }

    /// The reply to `reset`.
    public static func resetDone() -> String { line([("type", .string("reset")), ("ok", .bool(true))]) }

    /// The reply to `ping`.
    public static func pong() -> String { line([("type", .string("pong"))]) }

    /// A refused line.
    public static func error(_ message: String) -> String {
        line([("type", .string("error")), ("message", .string(message))])
    }

    /// Sent to every client when the daemon stops.
    public static func bye(reason: String) -> String { line([("type", .string("bye")), ("reason", .string(reason))]) }

    private static func line(_ members: [(String, JSONWriter.Value)]) -> String {
        JSONWriter.Value.object(members).text + "\n"
    }
}
