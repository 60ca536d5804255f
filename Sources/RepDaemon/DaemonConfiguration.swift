import RepDetection
import TOMLKit

/// Everything repd can be told, with the defaults documented in `config/repd.toml`.
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
    /// `sensor.device`: IIO device by name, label, syspath or /dev node; empty takes the first accelerometer.
    public var device = ""
    /// `sensor.rate_hz`: the sample rate asked of the IIO device (default 100).
    public var rateHz = 100.0
    /// `sensor.trigger`: the IIO trigger to use; empty chooses (the device's own, else the current one, else none).
    public var trigger = ""
    /// `sensor.force_polling`: read `in_accel_*_raw` at `rate_hz` instead of the buffer (default false).
    public var forcePolling = false
    /// `sensor.hrtimer_trigger`: create an hrtimer trigger through configfs when the device has none (default false).
    public var hrtimerTrigger = false
    /// `fixture.path`: the recording to replay when the provider is `fixture`.
    public var fixturePath = ""
    /// `fixture.speed`: replay speed (≥ 0.1; default 1).
    public var speed = 1.0
    /// `fixture.loop`: start over at the end (default false).
    public var loop = false
    /// `socket.path`: empty means the default (see `DefaultSocketPath`).
    public var socketPath = ""
    /// `socket.mode`: the socket file's permissions (default 0o660).
    public var socketMode: UInt32 = 0o660
    /// `socket.group`: the socket file's group; empty keeps the daemon's own.
    public var socketGroup = ""
    /// `socket.max_clients` (default 64).
    public var maxClients = 64
    /// `socket.client_queue_kib`: bytes a client may leave unread before it is disconnected (default 256 KiB).
    public var clientQueueKiB = 256
    /// `socket.allowed_uids`: if not empty, only these user ids may connect (root always may).
    public var allowedUIDs: [UInt32] = []
    /// `socket.allowed_gids`: if not empty, only members of these primary groups may connect (with `allowed_uids`:
    /// either list admits).
    public var allowedGIDs: [UInt32] = []
    /// `pipeline.ring_capacity`: samples the ring between the reader and the detector holds (default 16384).
    public var ringCapacity = 16384
    /// `log.level`: trace, debug, info, notice, warning, error or critical (default info).
    public var logLevel = "info"
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

    public var description: String {
        let place = line > 0 ? "\(file):\(line)" : file
        return key.isEmpty ? "\(place): \(reason)" : "\(place): \(key): \(reason)"
    }
}

extension DaemonConfiguration {
    /// Parses TOML text; unknown keys, wrong types and values out of range are errors naming the key and line.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> DaemonConfiguration {
        try checkCharacters(text, file: file)
        let table: TOMLTable
        do { table = try TOMLTable(string: text) } catch let error as TOMLParseError {
            throw ConfigError(file: file, line: error.source.begin.line, key: "", reason: "not valid TOML: \(error.description)")
        } catch {
            throw ConfigError(file: file, line: 0, key: "", reason: "not valid TOML: \(error)")
        }
        var reader = TableReader(text: text, file: file)
        var c = DaemonConfiguration()
        try reader.checkSections(table, allowed: ["sensor", "fixture", "socket", "pipeline", "detector", "log"])

        if let s = try reader.section(table, "sensor") {
            try reader.checkKeys(s, "sensor", ["provider", "device", "rate_hz", "trigger", "force_polling", "hrtimer_trigger"])
            if let v = try reader.string(s, "sensor", "provider") {
                guard let p = Provider(rawValue: v) else {
                    throw reader.error("sensor", "provider", "'\(v)' is not one of iio, fixture, demo")
                }
                c.provider = p
            }
            if let v = try reader.string(s, "sensor", "device") { c.device = v }
            if let v = try reader.string(s, "sensor", "trigger") { c.trigger = v }
            if let v = try reader.bool(s, "sensor", "force_polling") { c.forcePolling = v }
            if let v = try reader.bool(s, "sensor", "hrtimer_trigger") { c.hrtimerTrigger = v }
            if let v = try reader.number(s, "sensor", "rate_hz") {
                guard v > 0, v <= 100_000 else { throw reader.error("sensor", "rate_hz", "\(v) is not in (0, 100000]") }
                c.rateHz = v
            }
        }
        if let s = try reader.section(table, "fixture") {
            try reader.checkKeys(s, "fixture", ["path", "speed", "loop"])
            if let v = try reader.string(s, "fixture", "path") { c.fixturePath = v }
            if let v = try reader.number(s, "fixture", "speed") {
                guard v > 0 else { throw reader.error("fixture", "speed", "\(v) is not > 0 (values below 0.1 count as 0.1)") }
                c.speed = v
            }
            if let v = try reader.bool(s, "fixture", "loop") { c.loop = v }
        }
        if let s = try reader.section(table, "socket") {
            try reader.checkKeys(s, "socket", ["path", "mode", "group", "max_clients", "client_queue_kib", "allowed_uids", "allowed_gids"])
            if let v = try reader.string(s, "socket", "path") { c.socketPath = v }
            if let v = try reader.string(s, "socket", "mode") {
                guard let mode = UInt32(v.hasPrefix("0o") ? String(v.dropFirst(2)) : v, radix: 8), mode <= 0o777 else {
                    throw reader.error("socket", "mode", "'\(v)' is not an octal permission such as \"0660\"")
                }
                c.socketMode = mode
            }
            if let v = try reader.string(s, "socket", "group") { c.socketGroup = v }
            if let v = try reader.integer(s, "socket", "max_clients") {
                guard (1...100_000).contains(v) else { throw reader.error("socket", "max_clients", "\(v) is not in 1…100000") }
                c.maxClients = v
            }
            if let v = try reader.integer(s, "socket", "client_queue_kib") {
                guard (4...65536).contains(v) else { throw reader.error("socket", "client_queue_kib", "\(v) is not in 4…65536") }
                c.clientQueueKiB = v
            }
            if let v = try reader.idList(s, "socket", "allowed_uids") { c.allowedUIDs = v }
            if let v = try reader.idList(s, "socket", "allowed_gids") { c.allowedGIDs = v }
        }
        if let s = try reader.section(table, "pipeline") {
            try reader.checkKeys(s, "pipeline", ["ring_capacity"])
            if let v = try reader.integer(s, "pipeline", "ring_capacity") {
                guard (64...(1 << 24)).contains(v) else {
                    throw reader.error("pipeline", "ring_capacity", "\(v) is not in 64…16777216")
                }
                c.ringCapacity = v
            }
        }
        if let s = try reader.section(table, "log") {
            try reader.checkKeys(s, "log", ["level"])
            if let v = try reader.string(s, "log", "level") {
                let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
                guard levels.contains(v) else { throw reader.error("log", "level", "'\(v)' is not one of \(levels.joined(separator: ", "))") }
                c.logLevel = v
            }
        }
        if let s = try reader.section(table, "detector") {
            c.detector = try reader.detector(s)
        }
        return c
    }
}

extension DaemonConfiguration {
    /// Outside strings and comments, TOML uses only letters, digits and `_ - . = [ ] , { } : +` and blanks. Any
    /// other character (a stray byte, a control character, a `/` in a table header) is reported with its line
    /// before the TOML parser sees it: the vendored toml++ asserts on some of them instead of returning an error
    /// (found by fuzzing, regression inputs in Tests/FuzzRegressionTests/corpus/config).
    /// The line structure: a blank or comment line, a `[table]`/`[[array]]` header closed on its line, or
    /// `key = value` (values may continue over lines inside `[ ]` arrays and multi-line strings). Every key is a
    /// dotted list of bare keys (`A-Za-z0-9_-`) or quoted keys.
    static func checkLines(_ text: String, file: String) throws(ConfigError) {
        var depth = 0  // open [ or { of a value spanning lines
        var multiline: String?  // the delimiter of an open multi-line string
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            var rest = Substring(raw)
            if let delimiter = multiline {
                guard let close = rest.range(of: delimiter) else { continue }
                multiline = nil
                rest = rest[close.upperBound...]
            } else if depth == 0 {
                let trimmed = rest.drop { $0 == " " || $0 == "\t" }
                guard let first = trimmed.first, first != "#", first != "\r" else { continue }
                if first == "[" {
                    let double = trimmed.hasPrefix("[[")
                    let inner = trimmed.dropFirst(double ? 2 : 1)
                    guard let close = inner.firstIndex(of: "]"), !double || inner[close...].hasPrefix("]]") else {
                        throw ConfigError(file: file, line: line, key: "", reason: "a table header needs its closing '\(double ? "]]" : "]")' on the same line")
                    }
                    try checkKey(inner[..<close], line: line, file: file)
                    let after = inner[inner.index(close, offsetBy: double ? 2 : 1)...].drop { $0 == " " || $0 == "\t" || $0 == "\r" }
                    guard after.isEmpty || after.first == "#" else {
                        throw ConfigError(file: file, line: line, key: "", reason: "unexpected text after the table header")
                    }
                    continue
                }
                guard let equals = trimmed.firstIndex(of: "=") else {
                    throw ConfigError(file: file, line: line, key: "", reason: "expected 'key = value'")
                }
                try checkKey(trimmed[..<equals], line: line, file: file)
                rest = trimmed[trimmed.index(after: equals)...]
            }
            // Follow brackets and strings through the value so continuation lines are recognized.
            var quote: Character?
            var index = rest.startIndex
            while index < rest.endIndex {
                let character = rest[index]
                if let open = quote {
                    if character == "\\", open == "\"" { index = rest.index(after: index) } else if character == open { quote = nil }
                } else if character == "#" {
                    break
                } else if character == "\"" || character == "'" {
                    let triple = String(repeating: character, count: 3)
                    if rest[index...].hasPrefix(triple) {
                        let after = rest[rest.index(index, offsetBy: 3)...]
                        if let close = after.range(of: triple) {
                            index = close.upperBound
                            continue
                        }
                        multiline = triple
                        break
                    }
                    quote = character
                } else if character == "[" || character == "{" {
                    depth += 1
                } else if character == "]" || character == "}" {
                    depth = max(0, depth - 1)
                }
                if index < rest.endIndex { index = rest.index(after: index) }
            }
        }
    }

    static func checkKey(_ keyText: Substring, line: Int, file: String) throws(ConfigError) {
        if keyText.contains("\"") || keyText.contains("'") { return }  // quoted keys: left to the parser
        for part in keyText.split(separator: ".", omittingEmptySubsequences: false) {
            let key = part.filter { $0 != " " && $0 != "\t" }
            guard !key.isEmpty, key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }) else {
                throw ConfigError(file: file, line: line, key: "", reason: "'\(keyText.trimmingBlanks())' is not a valid key or table name")
            }
        }
    }

    static let tomlCharacters: Set<UInt8> = Set(
        Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.=[],{}:+".utf8))

    static func checkCharacters(_ text: String, file: String) throws(ConfigError) {
        try checkLines(text, file: file)
        var line = 1
        var quote: Character?
        var comment = false
        for character in text {
            if character == "\n" || character == "\r\n" {
                line += 1
                quote = nil
                comment = false
                continue
            }
            if comment { continue }
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "#": comment = true
            case "\"", "'": quote = character
            case "\t", "\r", " ": break
            default:
                guard let ascii = character.asciiValue, Self.tomlCharacters.contains(ascii) else {
                    let code = character.unicodeScalars.first.map { String($0.value, radix: 16, uppercase: true) } ?? "?"
                    throw ConfigError(
                        file: file, line: line, key: "",
                        reason: "unexpected character U+\(code) outside a string or comment")
                }
            }
        }
    }
}

/// Reads typed values out of a TOML table and reports the line of a bad key by scanning the text.
private struct TableReader {
    let lines: [Substring]
    let file: String

    init(text: String, file: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        self.file = file
    }

    /// The line of `key` inside `[section]` (or of the section header when key is empty), 0 if not found.
    func line(_ section: String, _ key: String) -> Int {
        var current = ""
        for (index, raw) in lines.enumerated() {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                current = String(line.dropFirst().prefix { $0 != "]" }).filter { $0 != " " }
                if key.isEmpty, current == section { return index + 1 }
                continue
            }
            if current == section, !key.isEmpty, line.hasPrefix(key) {
                let rest = line.dropFirst(key.count).drop { $0 == " " || $0 == "\t" }
                if rest.hasPrefix("=") { return index + 1 }
            }
        }
        return 0
    }

    func error(_ section: String, _ key: String, _ reason: String) -> ConfigError {
        ConfigError(file: file, line: line(section, key), key: key.isEmpty ? section : "\(section).\(key)", reason: reason)
    }

    func checkSections(_ table: TOMLTable, allowed: [String]) throws(ConfigError) {
        for key in table.keys.sorted() where !allowed.contains(key) {
            let isTable = table[key]?.table != nil
            throw ConfigError(
                file: file, line: isTable ? line(key, "") : line("", key), key: key,
                reason: "unknown \(isTable ? "section" : "key") (sections are \(allowed.joined(separator: ", ")))")
        }
    }

    func section(_ table: TOMLTable, _ name: String) throws(ConfigError) -> TOMLTable? {
        guard let value = table[name] else { return nil }
        guard let section = value.table else { throw error("", name, "expected a table [\(name)]") }
        return section
    }

    func checkKeys(_ table: TOMLTable, _ section: String, _ allowed: [String]) throws(ConfigError) {
        for key in table.keys.sorted() where !allowed.contains(key) {
            throw error(section, key, "unknown key (keys of [\(section)] are \(allowed.joined(separator: ", ")))")
        }
    }

    func string(_ t: TOMLTable, _ section: String, _ key: String) throws(ConfigError) -> String? {
        guard let value = t[key] else { return nil }
        guard let s = value.string else { throw error(section, key, "expected a string in quotes") }
        return s
    }

    func number(_ t: TOMLTable, _ section: String, _ key: String) throws(ConfigError) -> Double? {
        guard let value = t[key] else { return nil }
        if let d = value.double, d.isFinite { return d }
        if let i = value.int { return Double(i) }
        throw error(section, key, "expected a number")
    }

    func integer(_ t: TOMLTable, _ section: String, _ key: String) throws(ConfigError) -> Int? {
        guard let value = t[key] else { return nil }
        guard let i = value.int else { throw error(section, key, "expected a whole number") }
        return i
    }

    func bool(_ t: TOMLTable, _ section: String, _ key: String) throws(ConfigError) -> Bool? {
        guard let value = t[key] else { return nil }
        guard let b = value.bool else { throw error(section, key, "expected true or false") }
        return b
    }

    func idList(_ t: TOMLTable, _ section: String, _ key: String) throws(ConfigError) -> [UInt32]? {
        guard let value = t[key] else { return nil }
        guard let array = value.array else { throw error(section, key, "expected an array of numeric ids, e.g. [1000, 1001]") }
        var ids: [UInt32] = []
        for item in array {
            guard let i = item.int, let id = UInt32(exactly: i) else {
                throw error(section, key, "expected an array of numeric ids, e.g. [1000, 1001]")
            }
            ids.append(id)
        }
        return ids
    }

    func detector(_ t: TOMLTable) throws(ConfigError) -> RepDetectorConfiguration {
        var d = RepDetectorConfiguration()
        let keys: [(String, WritableKeyPath<RepDetectorConfiguration, Double>)] = [
            ("gravity_time_constant_s", \.gravityTimeConstant), ("smoothing_time_constant_s", \.smoothingTimeConstant),
            ("axis_time_constant_s", \.axisTimeConstant), ("level_time_constant_s", \.levelTimeConstant),
            ("level_outlier_limit", \.levelOutlierLimit),
            ("sensitivity", \.sensitivity), ("set_threshold_fraction", \.setThresholdFraction),
            ("minimum_amplitude_g", \.minimumAmplitude), ("minimum_rep_period_s", \.minimumRepPeriod),
            ("maximum_rep_period_s", \.maximumRepPeriod), ("rhythm_tolerance", \.rhythmTolerance),
            ("maximum_pause_factor", \.maximumPauseFactor), ("harmonic_factor", \.harmonicFactor),
            ("rest_to_end_set_s", \.restToEndSet), ("gap_to_reset_s", \.gapToReset),
            ("lookback_periods", \.lookbackPeriods), ("lookback_threshold_fraction", \.lookbackThresholdFraction),
        ]
        try checkKeys(t, "detector", keys.map(\.0) + ["reps_to_start_set"])
        for (key, path) in keys {
            if let v = try number(t, "detector", key) { d[keyPath: path] = v }
        }
        if let v = try integer(t, "detector", "reps_to_start_set") { d.repsToStartSet = v }
        do { try d.validate() } catch {
            let name = Self.snakeCase(error.key, keys: keys.map(\.0) + ["reps_to_start_set"])
            throw self.error("detector", name, "\(error.value) is not allowed: expected \(error.allowed)")
        }
        return d
    }

    /// Maps a detector property name (`minimumRepPeriod`) to its config key (`minimum_rep_period_s`).
    static func snakeCase(_ property: String, keys: [String]) -> String {
        var snake = ""
        for character in property {
            if character.isUppercase { snake += "_" + character.lowercased() } else { snake.append(character) }
        }
        if snake == "minimum_amplitude" { return "minimum_amplitude_g" }
        return keys.first { $0 == snake || $0 == snake + "_s" } ?? snake
    }
}

extension Substring {
    fileprivate func trimmingBlanks() -> String {
        String(self.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
