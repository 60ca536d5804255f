import PlainText
import RepDetection
import RepSettings

/// Everything repd (and repd-web) can be told, with the defaults documented in `config/repd.toml`. Each table that
/// configures one module is that module's own settings type (`[sensor]` → `SensorSettings`, `[socket]` →
/// `SocketSettings`, `[journal]` → `JournalSettings`, `[uplink]` → `UplinkSettings`, `[detector]` →
/// `RepDetectorConfiguration`), which the daemon hands over as it is.
public struct DaemonConfiguration: Sendable, Equatable {
    /// Where samples come from.
    public enum Provider: String, Sendable, Equatable, CaseIterable {
        /// A real accelerometer through Linux IIO.
        case iio
        /// A recording (fixture CSV).
        case fixture
        /// The built-in demo workout, generated.
        case demo
    }

    /// `sensor.provider` (default `iio`).
    public var provider: Provider = .iio
    /// The rest of `[sensor]`: how the IIO accelerometer is read (`LinuxIIOMotionProvider.Options`).
    public var sensor = SensorSettings()
    /// `fixture.path`: the recording to replay when the provider is `fixture`.
    public var fixturePath = ""
    /// `fixture.speed`: replay speed (≥ 0.1; default 1).
    public var speed = 1.0
    /// `fixture.loop`: start over at the end (default false).
    public var loop = false
    /// `[socket]`: the event socket.
    public var socket = SocketSettings()
    /// `pipeline.ring_capacity`: samples the ring between the reader and the detector holds (default 16384).
    public var ringCapacity = 16384
    /// `[journal]`: the event journal.
    public var journal = JournalSettings()
    /// `[uplink]`: publish every journaled event to an MQTT broker (QoS 1).
    public var uplink = UplinkSettings()
    /// `log.level` (default info).
    public var logLevel = LogLevel.info
    /// `web.listen`: where the station display (`repd-web`) serves its page (default `127.0.0.1:8080`).
    public var webListen = ListenAddress(host: "127.0.0.1", port: 8080)
    /// `web.socket`: the repd sockets `repd-web` reads, one station each, as `PATH` or `NAME=PATH` (one string, or
    /// an array of them: `WebStation(parsing:)`, no name twice); empty means `socket.path`, else the clients'
    /// default.
    public var webStations: [WebStation] = []
    /// The `[detector]` table.
    public var detector = RepDetectorConfiguration()

    /// The defaults.
    public init() {}
}

/// A configuration value that is wrong: which key, on which line, and what is allowed.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (or "command line").
    public var file: String
    /// The 1-based line, 0 when unknown.
    public var line: Int
    /// The dotted key, e.g. `socket.mode`.
    public var key: String
    /// What was wrong and what is allowed.
    public var reason: String

    /// Creates the error.
    public init(file: String, line: Int, key: String, reason: String) {
        self.file = file
        self.line = line
        self.key = key
        self.reason = reason
    }

    /// `file:line: key: reason`, without the line when it is not known and without the key when there is none.
    public var description: String {
        let place = line > 0 ? "\(file):\(line)" : file
        return key.isEmpty ? "\(place): \(reason)" : "\(place): \(key): \(reason)"
    }
}

extension DaemonConfiguration {
    /// The largest configuration file read (1 MiB).
    public static let maximumFileSize = 1 << 20

    /// Reads and parses the configuration file at `path`; a file that cannot be read is a `ConfigError` too.
    public static func load(path: String) throws(ConfigError) -> DaemonConfiguration {
        let bytes: [UInt8]
        do { bytes = try TextFile.readBytes(path, limit: maximumFileSize) } catch {
            let reason =
                switch error {
                case .tooLarge:
                    "larger than \(maximumFileSize >> 20) MiB: not a configuration file (repd.toml is a few KiB)"
                case .notRegularFile: "\(error) (a configuration file is TOML text, e.g. /etc/repd/repd.toml)"
                case .system(let code): "cannot read: \(code)"
                }
            throw ConfigError(file: path, line: 0, key: "", reason: reason)
        }
        return try parse(bytes: bytes, file: path)
    }

    /// Parses a configuration file's bytes: they must be UTF-8 (the first invalid byte is reported with its line).
    public static func parse(bytes: [UInt8], file: String) throws(ConfigError) -> DaemonConfiguration {
        let text: String
        switch TextFile.utf8Text(bytes) {
        case .success(let decoded): text = decoded
        case .failure(let invalid):
            throw ConfigError(
                file: file, line: invalid.line, key: "", reason: "not valid UTF-8 text (TOML files are UTF-8)")
        }
        return try parse(text, file: file)
    }

    /// Parses TOML text; unknown keys, wrong types and values out of range are errors naming the key and line.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> DaemonConfiguration {
        let document: TOMLDocument
        do { document = try TOMLDocument.parse(text) } catch {
            throw ConfigError(file: file, line: error.line, key: "", reason: error.description)
        }
        let reader = TableReader(document: document, file: file)
        var c = DaemonConfiguration()
        try reader.checkSections(allowed: [
            "sensor", "fixture", "socket", "pipeline", "journal", "uplink", "detector", "log", "web",
        ])

        if let s = reader.section("sensor") {
            try reader.checkKeys(s, ["provider", "device", "rate_hz", "trigger", "force_polling", "hrtimer_trigger"])
            if let v = try reader.string(s, "provider") {
                guard let p = Provider(rawValue: v) else {
                    throw reader.error("sensor", "provider", "'\(v)' is not one of iio, fixture, demo")
                }
                c.provider = p
            }
            if let v = try reader.string(s, "device") { c.sensor.device = v }
            if let v = try reader.string(s, "trigger") { c.sensor.trigger = v.isEmpty ? nil : v }
            if let v = try reader.bool(s, "force_polling") { c.sensor.forcePolling = v }
            if let v = try reader.bool(s, "hrtimer_trigger") { c.sensor.hrtimerTrigger = v }
            if let v = try reader.number(s, "rate_hz") {
                guard v > 0, v <= 100_000 else { throw reader.error("sensor", "rate_hz", "\(v) is not in (0, 100000]") }
                c.sensor.rate = v
            }
        }
        if let s = reader.section("fixture") {
            try reader.checkKeys(s, ["path", "speed", "loop"])
            if let v = try reader.string(s, "path") { c.fixturePath = v }
            if let v = try reader.number(s, "speed") {
                guard v > 0 else {
                    throw reader.error("fixture", "speed", "\(v) is not > 0 (values below 0.1 count as 0.1)")
                }
                c.speed = v
            }
            if let v = try reader.bool(s, "loop") { c.loop = v }
        }
        if let s = reader.section("socket") {
            try reader.checkKeys(
                s, ["path", "mode", "group", "max_clients", "client_queue_kib", "allowed_uids", "allowed_gids"])
            if let v = try reader.string(s, "path") { c.socket.path = v }
            if let v = try reader.string(s, "mode") {
                let digits = v.hasPrefix("0o") ? String(v.dropFirst(2)) : v
                // UInt32(_:radix:) takes a sign too: "-0" would make a socket nobody but root may use.
                guard digits.allSatisfy({ ("0"..."7").contains($0) }), let mode = UInt32(digits, radix: 8),
                    mode <= 0o777
                else {
                    throw reader.error("socket", "mode", "'\(v)' is not an octal permission such as \"0660\"")
                }
                // Connecting takes write permission: without it for the owner only root could use the socket.
                guard mode & 0o200 != 0 else {
                    throw reader.error(
                        "socket", "mode",
                        "'\(v)' does not let the socket's owner (repd's user) connect: connecting needs write permission; "
                            + "\"0600\" at least, \"0660\" to let socket.group in")
                }
                c.socket.mode = mode
            }
            if let v = try reader.string(s, "group") { c.socket.group = v }
            if let v = try reader.integer(s, "max_clients") {
                guard (1...100_000).contains(v) else {
                    throw reader.error("socket", "max_clients", "\(v) is not in 1…100000")
                }
                c.socket.maxClients = Int(v)
            }
            if let v = try reader.integer(s, "client_queue_kib") {
                guard (4...65536).contains(v) else {
                    throw reader.error("socket", "client_queue_kib", "\(v) is not in 4…65536")
                }
                c.socket.clientQueueKiB = Int(v)
            }
            if let v = try reader.idList(s, "allowed_uids") { c.socket.allowedUIDs = v }
            if let v = try reader.idList(s, "allowed_gids") { c.socket.allowedGIDs = v }
        }
        if let s = reader.section("pipeline") {
            try reader.checkKeys(s, ["ring_capacity"])
            if let v = try reader.integer(s, "ring_capacity") {
                guard (64...(1 << 24)).contains(v) else {
                    throw reader.error("pipeline", "ring_capacity", "\(v) is not in 64…16777216")
                }
                c.ringCapacity = Int(v)
            }
        }
        if let s = reader.section("journal") {
            try reader.checkKeys(s, ["path", "synchronous", "max_age_days", "max_events", "max_size_mb", "station"])
            if let v = try reader.string(s, "path") { c.journal.path = v }
            if let v = try reader.string(s, "station") {
                if let problem = JournalSettings.stationProblem(v) { throw reader.error("journal", "station", problem) }
                c.journal.station = v
            }
            if let v = try reader.string(s, "synchronous") {
                guard let mode = JournalSettings.Synchronous(rawValue: v) else {
                    throw reader.error("journal", "synchronous", "'\(v)' is not one of normal, full")
                }
                c.journal.synchronous = mode
            }
            if let v = try reader.number(s, "max_age_days") {
                guard v >= 0, v <= 36_500 else {
                    throw reader.error("journal", "max_age_days", "\(v) is not in 0…36500 (0 keeps any age)")
                }
                c.journal.maxAgeDays = v
            }
            if let v = try reader.integer(s, "max_events") {
                guard v == 0 || (100...1_000_000_000).contains(v) else {
                    throw reader.error("journal", "max_events", "\(v) is not 0 (no limit) or in 100…1000000000")
                }
                c.journal.maxEvents = Int(v)
            }
            if let v = try reader.integer(s, "max_size_mb") {
                guard v == 0 || (1...1_000_000).contains(v) else {
                    throw reader.error("journal", "max_size_mb", "\(v) is not 0 (no limit) or in 1…1000000")
                }
                c.journal.maxSizeMB = Int(v)
            }
        }
        if let s = reader.section("uplink") {
            c.uplink = try reader.uplink(s)
            if c.uplink.enabled, c.journal.path.isEmpty {
                throw reader.error(
                    "uplink", "enabled", "the uplink publishes the journal: journal.path must not be empty")
            }
        }
        if let s = reader.section("log") {
            try reader.checkKeys(s, ["level"])
            if let v = try reader.string(s, "level") {
                guard let level = LogLevel(rawValue: v) else {
                    throw reader.error("log", "level", "'\(v)' is not one of \(LogLevel.allowedNames)")
                }
                c.logLevel = level
            }
        }
        if let s = reader.section("web") {
            try reader.checkKeys(s, ["listen", "socket"])
            if let v = try reader.string(s, "listen") {
                do { c.webListen = try ListenAddress(parsing: v) } catch {
                    throw reader.error("web", "listen", error.reason)
                }
            }
            if let entry = s.entries["socket"] {
                // One station ("PATH" or "NAME=PATH"), or several: ["rack-1=/run/repd/a.sock", …].
                let expected = "expected a string, or an array of strings (\"PATH\" or \"NAME=PATH\")"
                var entries: [String] = []
                switch entry.value {
                case .string(let v): entries = v.isEmpty ? [] : [v]
                case .array(let items):
                    for item in items {
                        guard case .string(let v) = item else { throw reader.error("web", "socket", expected) }
                        guard !v.isEmpty else { throw reader.error("web", "socket", "an entry of the array is empty") }
                        entries.append(v)
                    }
                default: throw reader.error("web", "socket", "\(expected), found \(entry.value.kind)")
                }
                c.webStations = []
                for v in entries {
                    do { c.webStations.append(try WebStation(parsing: v)) } catch {
                        throw reader.error("web", "socket", error.description)
                    }
                }
                if let problem = WebStation.repeatedName(c.webStations) { throw reader.error("web", "socket", problem) }
            }
        }
        if let s = reader.section("detector") {
            c.detector = try reader.detector(s)
        }
        return c
    }
}

/// Reads typed values out of the document; every error names the section, key and line.
private struct TableReader {
    let document: TOMLDocument
    let file: String

    /// A section's keys, with the section's name for messages.
    struct Section {
        var name: String
        var entries: [String: TOMLDocument.Entry]
    }

    func error(_ section: String, _ key: String, _ reason: String) -> ConfigError {
        let line = document.tables[section]?.entries[key]?.line ?? document.tables[section]?.line ?? 0
        return ConfigError(file: file, line: line, key: key.isEmpty ? section : "\(section).\(key)", reason: reason)
    }

    func checkSections(allowed: [String]) throws(ConfigError) {
        let allowedList = allowed.joined(separator: ", ")
        if let (key, entry) = document.root.min(by: { $0.value.line < $1.value.line }) {
            throw ConfigError(
                file: file, line: entry.line, key: key, reason: "keys belong in a section (sections are \(allowedList))"
            )
        }
        for (name, table) in document.tables.sorted(by: { $0.value.line < $1.value.line }) where !allowed.contains(name)
        {
            throw ConfigError(
                file: file, line: table.line, key: name, reason: "unknown section (sections are \(allowedList))")
        }
    }

    func section(_ name: String) -> Section? {
        document.tables[name].map { Section(name: name, entries: $0.entries) }
    }

    func checkKeys(_ section: Section, _ allowed: [String]) throws(ConfigError) {
        for (key, _) in section.entries.sorted(by: { $0.value.line < $1.value.line }) where !allowed.contains(key) {
            throw error(
                section.name, key, "unknown key (keys of [\(section.name)] are \(allowed.joined(separator: ", ")))")
        }
    }

    func string(_ s: Section, _ key: String) throws(ConfigError) -> String? {
        guard let entry = s.entries[key] else { return nil }
        guard case .string(let v) = entry.value else {
            throw error(s.name, key, "expected a string in quotes, found \(entry.value.kind)")
        }
        return v
    }

    func number(_ s: Section, _ key: String) throws(ConfigError) -> Double? {
        guard let entry = s.entries[key] else { return nil }
        switch entry.value {
        case .float(let d) where d.isFinite: return d
        case .integer(let i): return Double(i)
        case .float: throw error(s.name, key, "expected a finite number")
        default: throw error(s.name, key, "expected a number, found \(entry.value.kind)")
        }
    }

    /// A whole number, 64 bits wide on every platform: callers check its range before narrowing it to `Int`.
    func integer(_ s: Section, _ key: String) throws(ConfigError) -> Int64? {
        guard let entry = s.entries[key] else { return nil }
        guard case .integer(let i) = entry.value else {
            throw error(s.name, key, "expected a whole number, found \(entry.value.kind)")
        }
        return i
    }

    func bool(_ s: Section, _ key: String) throws(ConfigError) -> Bool? {
        guard let entry = s.entries[key] else { return nil }
        guard case .bool(let b) = entry.value else {
            throw error(s.name, key, "expected true or false, found \(entry.value.kind)")
        }
        return b
    }

    func idList(_ s: Section, _ key: String) throws(ConfigError) -> [UInt32]? {
        guard let entry = s.entries[key] else { return nil }
        let expected = "expected an array of numeric ids, e.g. [1000, 1001]"
        guard case .array(let items) = entry.value else { throw error(s.name, key, expected) }
        var ids: [UInt32] = []
        for item in items {
            guard case .integer(let i) = item, let id = UInt32(exactly: i) else { throw error(s.name, key, expected) }
            ids.append(id)
        }
        return ids
    }

    func uplink(_ s: Section) throws(ConfigError) -> UplinkSettings {
        var u = UplinkSettings()
        let keys = [
            "enabled", "host", "port", "client_id", "topic_prefix", "keepalive_s", "username", "password_file", "tls",
            "ca_file", "ca_path", "cert_file", "key_file", "tls_insecure", "reconnect_min_s", "reconnect_max_s",
            "max_inflight",
        ]
        try checkKeys(s, keys)
        if let v = try bool(s, "enabled") { u.enabled = v }
        if let v = try string(s, "host") {
            // Checked only for an uplink that runs: a file that kept a wrong host with the uplink off still loads.
            if u.enabled, let problem = Self.hostProblem(v) { throw error("uplink", "host", problem) }
            u.host = v
        }
        if let v = try integer(s, "port") {
            guard (1...65535).contains(v) else { throw error("uplink", "port", "\(v) is not in 1…65535") }
            u.port = Int(v)
        }
        if let v = try string(s, "client_id") {
            guard v.utf8.count <= 65535, !v.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw error("uplink", "client_id", "must be printable and at most 65535 bytes")
            }
            u.clientID = v.isEmpty ? nil : v
        }
        if let v = try string(s, "topic_prefix") {
            guard !v.isEmpty, !v.contains("+"), !v.contains("#"), !v.hasPrefix("/"), !v.hasSuffix("/"),
                !v.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }), v.utf8.count <= 1024
            else {
                throw error(
                    "uplink", "topic_prefix",
                    "'\(v)' is not a topic prefix: not empty, no '+' or '#', no '/' at either end, no control characters"
                )
            }
            guard !v.hasPrefix("$") else {
                // Brokers keep topics that start with '$' for themselves ($SYS): mosquitto drops what is published
                // there.
                throw error(
                    "uplink", "topic_prefix", "'\(v)' starts with '$': brokers keep those topics ($SYS) to themselves")
            }
            u.topicPrefix = v
        }
        if let v = try integer(s, "keepalive_s") {
            guard (5...65535).contains(v) else { throw error("uplink", "keepalive_s", "\(v) is not in 5…65535") }
            u.keepalive = Int(v)
        }
        if let v = try string(s, "username") { u.username = v.isEmpty ? nil : v }
        if let v = try string(s, "password_file") { u.passwordFile = v.isEmpty ? nil : v }
        // The TLS keys are read first and become `u.tls` only with tls = true.
        let tls = try bool(s, "tls") ?? false
        let caFile = try string(s, "ca_file") ?? ""
        let caPath = try string(s, "ca_path") ?? UplinkSettings.TLS.defaultCAPath
        let certFile = try string(s, "cert_file") ?? ""
        let keyFile = try string(s, "key_file") ?? ""
        let insecure = try bool(s, "tls_insecure") ?? false
        if let v = try number(s, "reconnect_min_s") {
            guard v >= 0.1, v <= 3600 else { throw error("uplink", "reconnect_min_s", "\(v) is not in 0.1…3600") }
            u.reconnectMin = v
        }
        if let v = try number(s, "reconnect_max_s") {
            guard v >= u.reconnectMin, v <= 86400 else {
                throw error("uplink", "reconnect_max_s", "\(v) is not in reconnect_min_s (\(u.reconnectMin))…86400")
            }
            u.reconnectMax = v
        }
        if let v = try integer(s, "max_inflight") {
            guard (1...65535).contains(v) else { throw error("uplink", "max_inflight", "\(v) is not in 1…65535") }
            u.maxInflight = Int(v)
        }
        if certFile.isEmpty != keyFile.isEmpty {
            throw error("uplink", certFile.isEmpty ? "key_file" : "cert_file", "cert_file and key_file go together")
        }
        if tls {
            u.tls = UplinkSettings.TLS(
                caFile: caFile.isEmpty ? nil : caFile, caPath: caFile.isEmpty ? caPath : nil,
                certFile: certFile.isEmpty ? nil : certFile, keyFile: keyFile.isEmpty ? nil : keyFile,
                insecure: insecure)
        } else {
            for (key, set) in [
                ("ca_file", !caFile.isEmpty), ("cert_file", !certFile.isEmpty), ("tls_insecure", insecure),
            ] where set {
                throw error("uplink", key, "is a TLS setting, and tls = false (set tls = true)")
            }
        }
        if u.enabled, u.host.isEmpty { throw error("uplink", "host", "the uplink is enabled and needs a broker host") }
        if u.enabled, u.passwordFile != nil, u.username == nil {
            // repd sends a password only with a user name (MQTT 3.1.1 has no other way): without one it would never
            // reach the broker.
            throw error("uplink", "password_file", "a password goes with a user name: set uplink.username too")
        }
        return u
    }

    /// Why `host` is not a host name or address (a URL, or a port written into it); nil when it may be one.
    static func hostProblem(_ host: String) -> String? {
        if let scheme = host.firstRange(of: "://") {
            let name = host[scheme.upperBound...].split(separator: ":").first.map {
                $0.split(separator: "/").first ?? $0
            }
            return
                "'\(host)' is a URL; write the host alone (host = \"\(name ?? "")\"), with port and tls for the rest"
        }
        // One colon: "name:port" (an IPv6 address has several).
        let parts = host.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let port = Int(parts[1]) {
            return "'\(host)' holds a port: write host = \"\(parts[0])\" and port = \(port)"
        }
        if host.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) {
            return "'\(host)' has spaces or control characters: it is no host name or address"
        }
        return nil
    }

    func detector(_ t: Section) throws(ConfigError) -> RepDetectorConfiguration {
        var d = RepDetectorConfiguration()
        let settings = RepDetectorConfiguration.Setting.allCases
        try checkKeys(t, settings.map(\.configurationKey) + ["placement"])
        for setting in settings {
            if let v = try number(t, setting.configurationKey) { d[keyPath: setting.keyPath] = v }
        }
        if let v = try string(t, "placement") {
            guard let placement = SensorPlacement(rawValue: v) else {
                let allowed = SensorPlacement.allCases.map(\.rawValue).joined(separator: ", ")
                throw error("detector", "placement", "'\(v)' is not one of \(allowed)")
            }
            d.placement = placement
        }
        do { try d.validate() } catch {
            // Every setting validate() can name is a key; the rest (the exercise gate) is not in the file.
            let key = error.setting?.configurationKey ?? ""
            // The bound may name another setting as the detector calls it (minimumRepPeriod): say its key instead,
            // longest names first (walkingPeriodLow inside walkingPeriodLowX never happens, but be safe).
            var allowed = error.allowed
            let settings = RepDetectorConfiguration.Setting.allCases.sorted { $0.rawValue.count > $1.rawValue.count }
            for setting in settings {
                allowed = allowed.replacing(setting.rawValue, with: setting.configurationKey)
            }
            // A bound set by another key (rest_to_end_set_s ≥ maximum_rep_period_s): when the refused key is not in
            // the file (its default) and the other one is, the other one is what the user wrote: name it, on its line.
            let entries = document.tables["detector"]?.entries ?? [:]
            if entries[key] == nil,
                let other = settings.first(where: {
                    $0.configurationKey != key && error.allowed.contains($0.rawValue)
                        && entries[$0.configurationKey] != nil
                })
            {
                throw self.error(
                    "detector", other.configurationKey,
                    "\(d[keyPath: other.keyPath]) needs \(key) (\(error.value), its default) to be \(allowed): set "
                        + "\(key) too")
            }
            throw self.error("detector", key, "\(error.value) is not allowed: expected \(allowed)")
        }
        return d
    }
}

extension RepDetectorConfiguration.Setting {
    /// The setting's key in `[detector]`, with its unit (`_s` seconds, `_g` g) where it has one. Reading the table
    /// and naming the key of a value `validate()` refuses both go through this one switch.
    var configurationKey: String {
        switch self {
        case .gravityTimeConstant: "gravity_time_constant_s"
        case .smoothingTimeConstant: "smoothing_time_constant_s"
        case .minimumRepPeriod: "minimum_rep_period_s"
        case .maximumRepPeriod: "maximum_rep_period_s"
        case .minimumWindow: "minimum_window_s"
        case .keyMaximumFraction: "key_maximum_fraction"
        case .minimumPeriodicity: "minimum_periodicity"
        case .startHold: "start_hold_s"
        case .periodTolerance: "period_tolerance"
        case .minimumMatch: "minimum_match"
        case .lookbackPeriods: "lookback_periods"
        case .lookbackMatch: "lookback_match"
        case .finalMatch: "final_match"
        case .minimumCycleSeparation: "minimum_cycle_separation"
        case .minimumAmplitude: "minimum_amplitude_g"
        case .maximumWalkingLikeness: "maximum_walking_likeness"
        case .walkingPeriodLow: "walking_period_low_s"
        case .walkingPeriodHigh: "walking_period_high_s"
        case .minimumVerticalShare: "minimum_vertical_share"
        case .walkingMaximumRMS: "walking_maximum_rms_g"
        case .restToEndSet: "rest_to_end_set_s"
        case .gapToReset: "gap_to_reset_s"
        case .minimumExerciseLikelihood: "minimum_exercise_likelihood"
        }
    }
}
