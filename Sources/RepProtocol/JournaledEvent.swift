import MotionCore
import RepDetection

/// A workout or sensor event on its way to the journal and the clients, as one value: the event type clients
/// subscribe to, the message type the journal files it under, its line and the wall time in that line. The two
/// factories make all four from the event, so they cannot disagree.
public struct JournaledEvent: Sendable, Equatable {
    /// The event type a client subscribes to for it: `rep`, `set` or `sensor`.
    public let kind: EventKind
    /// The message type: the line's `type` and the journal's `type` column (`set_start`, `rep`, `set_end`, `sensor`).
    public let type: String
    /// The line as sent when it is not journaled: one JSON object and its newline, without `id` and `station`.
    public let line: String
    /// The Unix time (s) at which the daemon published it: the line's `wall` and the journal's `wall` column.
    public let wall: Double

    private init(kind: EventKind, type: String, line: String, wall: Double) {
        self.kind = kind
        self.type = type
        self.line = line
        self.wall = wall
    }

    /// A set started, a rep was counted or a set ended, published at `wall` (Unix time, s).
    public static func workout(_ event: WorkoutEvent, wall: Double) -> JournaledEvent {
        JournaledEvent(
            kind: ServerMessage.kind(of: event), type: ServerMessage.typeName(of: event),
            line: ServerMessage.event(event, wall: wall), wall: wall)
    }

    /// The sensor's state changed, published at `wall` (Unix time, s); `timestamps` (`device` or `host`) says where
    /// sample times come from.
    public static func sensor(_ state: MotionProviderState, wall: Double, timestamps: String? = nil) -> JournaledEvent {
        JournaledEvent(
            kind: .sensor, type: "sensor", line: ServerMessage.sensor(state, wall: wall, timestamps: timestamps),
            wall: wall)
    }

    /// What the journal stores (its `json` column): the line without its newline.
    public var json: String { String(line.dropLast()) }

    /// The line sent once the event is journaled: with its `id` and the journaling `station` added.
    public func line(id: Int64, station: String) -> String {
        ServerMessage.journaled(line, id: id, station: station, checked: false)
    }
}
