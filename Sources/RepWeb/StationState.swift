import MotionCore
import RepClient
import RepProtocol

/// What the display shows for one station (one repd): the set in progress, the sets done, the sensor and the link to
/// repd. A value type fed repd's messages in order, read with `RepClient`'s `ServerLine` (`apply(_:json:)`); it
/// never reads a clock.
public struct StationState: Sendable, Equatable {
    /// The state of repd-web's connection to this station's repd.
    public enum Link: String, Sendable, Equatable {
        /// Not connected yet, or reconnecting after a failure.
        case connecting
        /// Connected and subscribed.
        case up
        /// repd went away (said `bye`, closed the socket, or is not listening); repd-web keeps trying.
        case down
    }

    /// One rep of the set in progress (or of the set just done).
    public struct Rep: Sendable, Equatable {
        /// The rep's number in its set.
        public var number: Int
        /// When repd published it (Unix time, s).
        public var wall: Double
        /// Its numeric measures (`StationState.metrics(of:)`): `duration` and `amplitude` always, then the per-rep
        /// quality repd sends (`mean_velocity_m_s`, `rom_m`, `eccentric_s`, …) and fields later versions add; the
        /// page draws up to three of them as bars.
        public var metrics: [(String, Double)]

        /// Equal when the number, the time and every metric (name and value, in order) are (written out because
        /// tuples are not `Equatable`).
        public static func == (a: Rep, b: Rep) -> Bool {
            a.number == b.number && a.wall == b.wall && a.metrics.elementsEqual(b.metrics) { $0 == $1 }
        }
    }

    /// A set that has ended.
    public struct DoneSet: Sendable, Equatable {
        /// The set's number in the workout.
        public var number: Int
        /// Its final count (`set_end.reps`).
        public var reps: Int
        /// When it ended (Unix time, s).
        public var wall: Double
    }

    /// Reps of one set kept for the bars (the newest).
    public static let maximumReps = 100
    /// Sets kept in the history (the newest).
    public static let maximumSets = 30
    /// Per-rep measures kept (the first in `order`).
    public static let maximumMetrics = 8
    /// Fields of a `rep` that are not per-rep measures (`start_t` and `end_t` are the sample times of its window).
    static let nonMetricFields: Set<String> = [
        "type", "set", "rep", "total", "t", "wall", "id", "station", "start_t", "end_t",
    ]
    /// repd's per-rep measures after `duration` and `amplitude`, in the order they are kept (docs/PROTOCOL.md,
    /// "Per-rep quality"): the bar's velocity and range of motion, then the tempo. Others (from later versions) follow
    /// by name.
    static let knownMetrics = [
        "mean_velocity_m_s", "peak_velocity_m_s", "rom_m", "eccentric_s", "concentric_s", "pause_bottom_s",
        "pause_top_s", "velocity_loss_pct",
    ]

    /// The station's name: its label, else the `station` repd puts in its events.
    public var name: String
    /// Whether the name was given by the user (then events' `station` does not change it).
    public var labelled: Bool
    /// The name repd gives the station (events' `station`), or the default before it has: `name` unless another
    /// station has it too (then the board numbers it: `StationBoard.named`).
    public var reportedName: String
    /// The repd socket this station is read from.
    public var socketPath: String
    /// The connection to repd.
    public var link = Link.connecting
    /// Why repd-web cannot read repd while the link is down, when it is not simply that repd is not running: the
    /// socket's permissions, repd refusing another client, a path that is not a socket.
    public var linkProblem: String?
    /// repd's version (from `hello`).
    public var daemonVersion: String?
    /// What the sensor is, e.g. "iio: lis3dh-accel" (from `hello`).
    public var sensorName: String?
    /// The sensor's last state (`connected`, `lost`, `back`, `polling`, `stopped`, `finished`, `error`, `idle`).
    public var sensor: String?
    /// The message that came with it (lost, polling, error).
    public var sensorMessage: String?
    /// The set in progress, or the last one.
    public var set: Int?
    /// Whether a set is in progress.
    public var inSet = false
    /// The count to show: the live reps of the set in progress, or the final count of the set just done.
    public var count = 0
    /// The reps of the set in progress (or just done), oldest first.
    public var reps: [Rep] = []
    /// The sets done in this workout, oldest first.
    public var sets: [DoneSet] = []
    /// The id of the last journaled event applied (the `since` of the next subscribe).
    public var lastID: Int64?
    /// The identity of the journal repd wrote at the last `hello` (`hello`'s `journal`).
    public var journal: String?
    /// When repd published the last event applied (Unix time, s).
    public var lastEventWall: Double?

    /// A station read from `socketPath`; `label` fixes its name, else `defaultName` until repd names it.
    public init(socketPath: String, label: String?, defaultName: String) {
        self.socketPath = socketPath
        self.name = label ?? defaultName
        self.reportedName = label ?? defaultName
        self.labelled = label != nil
    }

    /// Applies one message from repd, read into types (`ServerLine.read`); `json` is the same line as parsed, from
    /// which a rep's measures are taken (those later versions add too). Returns whether anything shown changed.
    /// Journaled events already applied (an `id` at or below `lastID`) are ignored.
    @discardableResult
    public mutating func apply(_ line: ServerLine, json: JSONValue) -> Bool {
        switch line {
        case .hello(let hello):
            link = .up
            linkProblem = nil
            daemonVersion = hello.version
            sensorName = "\(hello.sensor.kind): \(hello.sensor.name)"
        case .event(let event):
            return apply(event, json: json)
        case .bye:
            link = .down
        default:
            return false
        }
        return true
    }

    private mutating func apply(_ event: ServerEvent, json: JSONValue) -> Bool {
        if let id = event.id {
            if let last = lastID, id <= last { return false }
            lastID = id
        }
        if !labelled, let station = event.station, !station.isEmpty, reportedName != station {
            reportedName = station
            name = station
        }
        // A damaged journal row, or an event of a later repd this version cannot read: its id counts as seen (a
        // resume goes on after it); it says nothing else.
        switch event.body {
        case .damaged, .other: return false
        case .workout, .sensor: break
        }
        lastEventWall = event.wall
        switch event.body {
        case .workout(.setStarted(let started)):
            if let last = sets.last?.number ?? set, started.setNumber <= last {
                sets = []  // numbering started over: a reset, or a new repd
            }
            set = started.setNumber
            inSet = true
            count = 0
            reps = []
        case .workout(.rep(let rep)):
            if rep.setNumber != set {  // a rep without its set_start (subscribed mid-set, or a replay that began there)
                if let last = sets.last?.number, rep.setNumber <= last { sets = [] }
                set = rep.setNumber
                reps = []
            }
            inSet = true
            count = rep.repInSet
            reps.append(Rep(number: rep.repInSet, wall: event.wall, metrics: Self.metrics(of: json)))
            if reps.count > Self.maximumReps { reps.removeFirst(reps.count - Self.maximumReps) }
        case .workout(.setEnded(let ended)):
            sets.removeAll { $0.number == ended.setNumber }
            sets.append(DoneSet(number: ended.setNumber, reps: ended.repCount, wall: event.wall))
            if sets.count > Self.maximumSets { sets.removeFirst(sets.count - Self.maximumSets) }
            if set != ended.setNumber { reps = [] }
            set = ended.setNumber
            inSet = false
            count = ended.repCount
        case .sensor(let state, _):
            sensor = ServerMessage.stateName(state)
            sensorMessage = Self.message(of: state)
        case .damaged, .other:
            break
        }
        return true
    }

    /// The `message` a `sensor` line carried with its state (nil when none, or empty).
    private static func message(of state: MotionProviderState) -> String? {
        let message: String
        switch state {
        case .sensorLost(let reason), .polling(let reason): message = reason
        case .failed(let error): message = error.message
        case .idle, .running, .stopped, .finished, .sensorBack: return nil
        }
        return message.isEmpty ? nil : message
    }

    /// Marks the link to repd as `link`, with why it is down (`problem`; nil: repd is not running); returns whether
    /// that changed anything.
    public mutating func setLink(_ link: Link, problem: String? = nil) -> Bool {
        let problem = link == .down ? problem : nil
        guard self.link != link || linkProblem != problem else { return false }
        self.link = link
        linkProblem = problem
        return true
    }

    /// The numeric fields of a `rep` that measure it, and the numeric members of its object fields (one level).
    static func metrics(of message: JSONValue) -> [(String, Double)] {
        guard case .object(let members) = message else { return [] }
        var found: [(String, Double)] = []
        for (key, value) in members.sorted(by: { Self.order($0.key) < Self.order($1.key) })
        where !nonMetricFields.contains(key) {
            switch value {
            case .number(let d) where d.isFinite: found.append((key, d))
            case .object(let inner):
                for (innerKey, innerValue) in inner.sorted(by: { $0.key < $1.key }) {
                    if case .number(let d) = innerValue, d.isFinite { found.append((innerKey, d)) }
                }
            default: break
            }
        }
        return Array(found.prefix(maximumMetrics))
    }

    /// `duration` first, `amplitude` second, then `knownMetrics` in their order, then the rest by name (a parsed
    /// object has no order).
    private static func order(_ key: String) -> (Int, String) {
        switch key {
        case "duration": (0, "")
        case "amplitude": (1, "")
        default: knownMetrics.firstIndex(of: key).map { (2 + $0, "") } ?? (2 + knownMetrics.count, key)
        }
    }

    /// The state as one JSON object: what `/events` sends and `/api/status` lists.
    public var json: JSONWriter.Value {
        func optional(_ s: String?) -> JSONWriter.Value { s.map { .string($0) } ?? .null }
        let repValues: [JSONWriter.Value] = reps.map { rep in
            .object([
                ("rep", .integer(rep.number)), ("wall", .number(rep.wall)),
                ("metrics", .object(rep.metrics.map { ($0.0, .number($0.1)) })),
            ])
        }
        let setValues: [JSONWriter.Value] = sets.map {
            .object([("set", .integer($0.number)), ("reps", .integer($0.reps)), ("wall", .number($0.wall))])
        }
        return .object([
            ("station", .string(name)),
            ("repd", .string(link.rawValue)),
            ("repd_problem", optional(linkProblem)),
            ("repd_version", optional(daemonVersion)),
            ("sensor_name", optional(sensorName)),
            ("sensor", optional(sensor)),
            ("sensor_message", optional(sensorMessage)),
            ("set", set.map { .integer($0) } ?? .null),
            ("in_set", .bool(inSet)),
            ("count", .integer(count)),
            ("reps", .array(repValues)),
            ("sets", .array(setValues)),
            ("last_id", lastID.map { .integer(Int($0)) } ?? .null),
            ("last_event_wall", lastEventWall.map { .number($0) } ?? .null),
        ])
    }
}
