/// The on-board event journal: the `[journal]` keys.
public struct JournalSettings: Sendable, Equatable {
    /// How hard the journal's commits wait for the disk.
    public enum Synchronous: String, Sendable, Equatable, CaseIterable {
        /// SQLite `synchronous=NORMAL`: a power cut can lose the last commits, a crash of repd nothing.
        case normal
        /// SQLite `synchronous=FULL`: each event is on disk before it is published.
        case full
    }

    /// `journal.path`: the journal's SQLite file. `auto` (the default): `$STATE_DIRECTORY/events.db` under
    /// systemd, else `$XDG_STATE_HOME/repd/events.db`, else `~/.local/state/repd/events.db`; empty: no journal.
    public var path = "auto"
    /// `journal.synchronous`: `normal` (default) or `full`.
    public var synchronous = Synchronous.normal
    /// `journal.max_age_days`: events older than this are deleted (default 30; 0 keeps any age); the running repd's own
    /// events only once they are that old by the uptime too (`AppendTimeline`).
    public var maxAgeDays = 30.0
    /// `journal.max_events`: at most this many events are kept, the newest (default 100000; 0 keeps any number).
    public var maxEvents = 100_000
    /// `journal.max_size_mb`: the oldest events are deleted while the events take more than this many MiB of the
    /// file (default 64; 0: no limit). Freed pages are reused, so the file stays at about this size.
    public var maxSizeMB = 64
    /// `journal.station`: the station name every event carries (`station`) and the uplink's topics use; empty:
    /// the host name. Letters, digits, `.`, `_` and `-` only (it is an MQTT topic level).
    public var station = ""

    /// The defaults.
    public init() {}

    /// Why `name` cannot be a station name (nil when it can): up to 64 letters, digits, `.`, `_`, `-` (empty is
    /// allowed: the host name).
    public static func stationProblem(_ name: String) -> String? {
        guard !name.isEmpty else { return nil }
        guard name.utf8.count <= 64 else { return "'\(name)' is longer than 64 bytes" }
        let allowed = name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        return allowed ? nil : "'\(name)' may hold only letters, digits, '.', '_' and '-' (it is an MQTT topic level)"
    }
}
