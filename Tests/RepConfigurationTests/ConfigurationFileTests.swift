import Foundation
import RepDetection
import TestScratch
import Testing

@testable import RepConfiguration

// Made outside the @Test attribute that uses them: Swift 6.0.3's compiler (Debian trixie's) crashes on an
// interpolation there and cannot type-check a chain of + in time (docs/PACKAGING.md, "Tests").
private let longStationNameEntry = "socket = \"\(String(repeating: "n", count: 65))=/x.sock\""
private let longStationNameReason = "the station name '\(String(repeating: "n", count: 65))' is longer than 64 bytes"
private let longSocketPathEntry = "socket = \"/tmp/\(String(repeating: "s", count: 120)).sock\""

@Suite("The configuration file's TOML")
struct TOMLParserTests {
    private func values(_ text: String) throws -> [String: TOMLValue] {
        try #require(TOMLDocument.parse(text).tables["t"]).entries.mapValues(\.value)
    }

    @Test("strings, numbers, booleans and arrays read as TOML 1.0 defines them")
    func values() throws {
        let text = """
            # a comment
            [t]   # after a header
            basic = "tab\\there \\"quoted\\" \\\\ \\u00e9\\U0001F600"
            literal = 'C:\\no\\escapes'
            empty = ""
            tabs = "a\tb"
            int = 1_000
            negative = -17
            plus = +3
            hex = 0xff
            octal = 0o660
            binary = 0b101
            float = 1.5
            exponent = -2e-3
            both = 6.626_07e-34
            infinite = -inf
            yes = true
            no = false
            list = [ 1, 2,
              # between items
              3, ]   # trailing comma
            strings = ["a", 'b']
            nested = [[1], []]
            """
        let v = try values(text)
        #expect(v["basic"] == .string("tab\there \"quoted\" \\ é😀"))
        #expect(v["literal"] == .string("C:\\no\\escapes"))
        #expect(v["empty"] == .string(""))
        #expect(v["tabs"] == .string("a\tb"), "a literal tab is allowed in a basic string")
        #expect(v["int"] == .integer(1000))
        #expect(v["negative"] == .integer(-17))
        #expect(v["plus"] == .integer(3))
        #expect(v["hex"] == .integer(255))
        #expect(v["octal"] == .integer(0o660))
        #expect(v["binary"] == .integer(5))
        #expect(v["float"] == .float(1.5))
        #expect(v["exponent"] == .float(-0.002))
        #expect(v["both"] == .float(6.62607e-34))
        #expect(v["infinite"] == .float(-.infinity))
        #expect(v["yes"] == .bool(true))
        #expect(v["no"] == .bool(false))
        #expect(v["list"] == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(v["strings"] == .array([.string("a"), .string("b")]))
        #expect(v["nested"] == .array([.array([.integer(1)]), .array([])]))
    }

    @Test("CRLF line ends, a byte-order mark and a missing final newline are fine, and each key keeps its line")
    func lineEnds() throws {
        #expect(try TOMLDocument.parse("\u{FEFF}[a]\nx = 1\n").tables["a"]?.entries["x"]?.value == .integer(1))
        let document = try TOMLDocument.parse("[a]\r\nx = 1\r\n\r\n[b]\r\ny = 'z'")
        #expect(document.tables["a"]?.entries["x"] == .init(value: .integer(1), line: 2))
        #expect(document.tables["b"]?.line == 4)
        #expect(document.tables["b"]?.entries["y"] == .init(value: .string("z"), line: 5))
    }

    @Test(
        "a sign after 0x, 0o or 0b, or an integer beyond 64 bits, is refused with its line and column",
        arguments: [
            ("[t]\nx = 0x+100\n", "'0x+100' is not a number"), ("[t]\nx = 0x-1\n", "'0x-1' is not a number"),
            ("[t]\nx = 0o+7\n", "'0o+7' is not a number"), ("[t]\nx = 0b-1\n", "'0b-1' is not a number"),
            ("[t]\nx = 9223372036854775808\n", "'9223372036854775808' does not fit a 64-bit integer"),
            ("[t]\nx = -9_223_372_036_854_775_809\n", "does not fit a 64-bit integer"),
            ("[t]\nx = 0x1_0000_0000_0000_0000\n", "does not fit a 64-bit integer"),
        ])
    func badIntegers(text: String, reason: String) {
        do {
            let document = try TOMLDocument.parse(text)
            Issue.record(
                "accepted: \(text.debugDescription) as \(String(describing: document.tables["t"]?.entries["x"]?.value))"
            )
        } catch {
            #expect(error.line == 2 && error.column == 5, "\(text.debugDescription): \(error)")
            #expect(error.reason.contains(reason), "\(text.debugDescription): \(error)")
        }
    }

    @Test(
        "integers are 64-bit on every platform and range-checked before use",
        arguments: [
            ("[t]\nx = 9223372036854775807\n", Int64.max), ("[t]\nx = -9223372036854775808\n", Int64.min),
            ("[t]\nx = 0x7fff_ffff_ffff_ffff\n", Int64.max),
        ])
    func wideIntegers(text: String, value: Int64) throws {
        #expect(try TOMLDocument.parse(text).tables["t"]?.entries["x"]?.value == .integer(value))
    }

    @Test(
        "malformed or unsupported TOML is refused with its line, column and reason",
        arguments: [
            ("[t]\nx = 1\nx = 2\n", 3, 1, "key 'x' appears twice in [t] (first on line 2)"),
            ("[t]\n[t]\n", 2, 4, "table [t] appears twice"),
            ("[t\n", 1, 3, "closing ']' on the same line"),
            ("[/x]\n", 1, 2, "expected a table name"),
            ("[[t]]\n", 1, 2, "arrays of tables"),
            ("[a.b]\n", 1, 3, "dotted keys"),
            ("[t]\n\"q\" = 1\n", 2, 1, "quoted keys"),
            ("[t]\nx 1\n", 2, 3, "expected '=' after the key 'x'"),
            ("[t]\nx =\n", 2, 4, "expected a value after '='"),
            ("[t]\nx = abc\n", 2, 5, "strings need quotes"),
            ("[t]\nx = True\n", 2, 5, "booleans are lowercase"),
            ("[t]\nx = 0660\n", 2, 5, "no leading zeros"),
            ("[t]\nx = 1__0\n", 2, 5, "'1__0' is not a number"),
            ("[t]\nx = 1.\n", 2, 5, "'1.' is not a number"),
            ("[t]\nx = .5\n", 2, 5, "'.5' is not a number"),
            ("[t]\nx = 1979-05-27\n", 2, 5, "dates and times"),
            ("[t]\nx = {a = 1}\n", 2, 5, "inline tables"),
            ("[t]\nx = \"\"\"a\"\"\"\n", 2, 5, "multi-line strings"),
            ("[t]\nx = \"open\n", 2, 10, "no closing '\"'"),
            ("[t]\nx = \"bad \\q\"\n", 2, 10, "unknown escape '\\q'"),
            ("[t]\nx = \"\\u12\"\n", 2, 6, "needs 4 hex digits"),
            ("[t]\nx = \"\\uD800\"\n", 2, 6, "not a Unicode scalar value"),
            ("[t]\nx = \"j\\u0000x.db\"\n", 2, 7, "'\\u0000' (NUL): no setting can hold one"),
            ("[t]\nx = \"\\U00000000\"\n", 2, 6, "(NUL)"),
            ("[t]\nx = [1, 2\n", 3, 1, "the array opened on line 2 has no closing ']'"),
            ("[t]\nx = [1 2]\n", 2, 8, "expected ',' or ']'"),
            ("[t]\nx = " + String(repeating: "[", count: 5000) + "\n", 2, 21, "arrays nested more than 16 deep"),
            ("[t]\nx = 1 y = 2\n", 2, 7, "one key = value per line"),
            ("[t]\nx = 1\ry = 2\n", 2, 6, "followed by a line feed"),
            ("[t]\n# bell \u{7}\n", 2, 8, "control character U+0007 in a comment"),
            ("[t]\nclé = 1\n", 2, 3, "U+00E9 is not allowed in a key"),
        ])
    func errors(text: String, line: Int, column: Int, reason: String) {
        do {
            _ = try TOMLDocument.parse(text)
            Issue.record("accepted: \(text.debugDescription)")
        } catch {
            #expect(error.line == line, "\(text.debugDescription): \(error)")
            #expect(error.column == column, "\(text.debugDescription): \(error)")
            #expect(error.reason.contains(reason), "\(text.debugDescription): \(error)")
        }
    }
}

@Suite("repd's configuration file")
struct ConfigurationFileTests {
    @Test("a path that names an endless device or a huge file is refused with the reason, without reading it all")
    func endlessFile() throws {
        #expect(
            throws: ConfigError(
                file: "/dev/zero", line: 0, key: "",
                reason:
                    "a character device, not a regular file (a configuration file is TOML text, e.g. /etc/repd/repd.toml)"
            )
        ) {
            try DaemonConfiguration.load(path: "/dev/zero")
        }
        let huge = Scratch.file("huge", suffix: ".toml")
        try String(repeating: "# a comment line of a file that is far too large\n", count: 30_000).write(
            toFile: huge, atomically: true, encoding: .utf8)
        #expect(
            throws: ConfigError(
                file: huge, line: 0, key: "",
                reason: "larger than 1 MiB: not a configuration file (repd.toml is a few KiB)")
        ) {
            try DaemonConfiguration.load(path: huge)
        }
    }

    private static let shippedConfiguration = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("config/repd.toml").path

    // minimum_exercise_likelihood stays commented out in the file: set there, it would hold on a bar too (where the
    // default is 0), and the parsed configuration would differ from the built-in one, which leaves it to the placement.
    @Test("config/repd.toml, which documents every key, holds exactly the built-in defaults")
    func shippedFileIsTheDefaults() throws {
        let text = try String(contentsOfFile: Self.shippedConfiguration, encoding: .utf8)
        #expect(try DaemonConfiguration.parse(text, file: "repd.toml") == DaemonConfiguration())
    }

    @Test("config/repd.toml with only its placement changed to \"bar\" turns the exercise gate off")
    func shippedFileOnBarHasNoGate() throws {
        let text = try String(contentsOfFile: Self.shippedConfiguration, encoding: .utf8)
        let bar = text.replacingOccurrences(of: "placement = \"wrist\"", with: "placement = \"bar\"")
        #expect(bar != text)
        let c = try DaemonConfiguration.parse(bar, file: "repd.toml")
        #expect(c.detector.placement == .bar)
        #expect(c.detector.minimumExerciseLikelihood == 0)
    }

    @Test("bytes that are not UTF-8 are refused with their line")
    func invalidUTF8() {
        let bytes = Array("[sensor]\ndevice = \"".utf8) + [0xC3, 0x28] + Array("\"\n".utf8)
        #expect(
            throws: ConfigError(file: "x.toml", line: 2, key: "", reason: "not valid UTF-8 text (TOML files are UTF-8)")
        ) {
            try DaemonConfiguration.parse(bytes: bytes, file: "x.toml")
        }
        #expect(
            (try? DaemonConfiguration.parse(bytes: Array("[sensor]\ndevice = \"é\"\n".utf8), file: "x.toml"))?.sensor
                .device == "é")
    }

    @Test("values are read into the configuration")
    func valuesAreRead() throws {
        let text = """
            [sensor]
            provider = "fixture"
            rate_hz = 400
            [socket]
            mode = "0640"
            allowed_uids = [1000, 1001]
            [journal]
            path = ""
            synchronous = "full"
            max_age_days = 7
            max_events = 500
            max_size_mb = 8
            [detector]
            minimum_periodicity = 0.55
            lookback_periods = 4
            placement = "bar"
            """
        let c = try DaemonConfiguration.parse(text, file: "x.toml")
        #expect(c.provider == .fixture)
        #expect(c.sensor.rate == 400)
        #expect(c.socket.mode == 0o640)
        #expect(c.socket.allowedUIDs == [1000, 1001])
        #expect(c.detector.minimumPeriodicity == 0.55)
        #expect(c.detector.lookbackPeriods == 4)
        #expect(c.detector.placement == .bar)
        #expect(c.journal.path == "")
        #expect(c.journal.synchronous == .full)
        #expect(c.journal.maxAgeDays == 7)
        #expect(c.journal.maxEvents == 500)
        #expect(c.journal.maxSizeMB == 8)
    }

    @Test(
        "web.listen takes an IPv4 address, a host name or a bracketed IPv6 address with a port",
        arguments: [
            ("0.0.0.0:8080", "0.0.0.0", 8080), ("localhost:80", "localhost", 80), ("[::]:8081", "::", 8081),
            ("[::1]:65535", "::1", 65535),
        ])
    func webListen(text: String, host: String, port: Int) throws {
        let c = try DaemonConfiguration.parse("[web]\nlisten = \"\(text)\"\nsocket = \"/tmp/x.sock\"\n", file: "x.toml")
        #expect(c.webListen == ListenAddress(host: host, port: port))
        #expect(c.webListen.description == text)
        #expect(c.webStations == [WebStation(socketPath: "/tmp/x.sock")])
    }

    @Test("web.socket takes one station's socket, or an array of them for several, each PATH or NAME=PATH")
    func webSockets() throws {
        let one = try DaemonConfiguration.parse("[web]\nsocket = \"rack=/run/a.sock\"\n", file: "x.toml")
        #expect(one.webStations == [WebStation(socketPath: "/run/a.sock", name: "rack")])
        let several = try DaemonConfiguration.parse(
            "[web]\nsocket = [\"rack-1=/run/a.sock\", \"/run/b.sock\", \"R_2.a=/run/c=d.sock\", \"./x=y.sock\"]\n",
            file: "x.toml")
        #expect(
            several.webStations == [
                WebStation(socketPath: "/run/a.sock", name: "rack-1"), WebStation(socketPath: "/run/b.sock"),
                WebStation(socketPath: "/run/c=d.sock", name: "R_2.a"), WebStation(socketPath: "./x=y.sock"),
            ])
        #expect(
            several.webStations.map(\.description) == [
                "rack-1=/run/a.sock", "/run/b.sock", "R_2.a=/run/c=d.sock", "./x=y.sock",
            ])
        #expect(try DaemonConfiguration.parse("[web]\nsocket = \"\"\n", file: "x.toml").webStations.isEmpty)
    }

    @Test(
        "a web.socket entry that is not PATH or NAME=PATH, a name with a control character or white space at an end, a name given twice and a path a socket cannot hold are refused with the file, line and entry",
        arguments: [
            ("socket = \"=/x.sock\"", "'=/x.sock': expected PATH or NAME=PATH (the name before '=' is empty)"),
            ("socket = [\"/a.sock\", \"rack-1=\"]", "'rack-1=': expected PATH or NAME=PATH (the path is empty)"),
            (
                "socket = [\"a=/x.sock\",\n  \"b=/z.sock\", \"a=/y.sock\"]",
                "'a=/x.sock' and 'a=/y.sock' both name station 'a' (?station=a reaches only one): give each its own name"
            ),
            (
                "socket = \" rack 1=/x.sock\"",
                "' rack 1=/x.sock': the station name ' rack 1' begins or ends with white space"
            ),
            ("socket = \"r\\u0007=/x.sock\"", "'r\\x07=/x.sock': the station name 'r\\x07' holds a control character"),
            (longStationNameEntry, longStationNameReason),
            (longSocketPathEntry, "the path is 130 bytes; a Unix socket's path holds at most 107"),
        ])
    func webSocketRefused(line: String, reason: String) {
        let text = "[web]\nlisten = \"127.0.0.1:8080\"\n\(line)\n"
        do {
            let c = try DaemonConfiguration.parse(text, file: "web.toml")
            Issue.record("accepted \(line): \(c.webStations)")
        } catch {
            #expect(error.file == "web.toml" && error.line == 3 && error.key == "web.socket", "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
            #expect(error.description.hasPrefix("web.toml:3: web.socket: '"), "\(error)")
        }
    }

    @Test(
        "socket.mode takes octal digits only: a sign (which would make a socket only root may use) is refused",
        arguments: ["-0", "+660", "0o-7", "0888", "", "1000"])
    func socketModeRefused(mode: String) {
        do {
            let c = try DaemonConfiguration.parse("[socket]\nmode = \"\(mode)\"\n", file: "x.toml")
            Issue.record("accepted \(mode.debugDescription) as \(String(c.socket.mode, radix: 8))")
        } catch {
            #expect(error.line == 2 && error.key == "socket.mode", "\(error)")
            #expect(error.reason == "'\(mode)' is not an octal permission such as \"0660\"")
        }
        #expect((try? DaemonConfiguration.parse("[socket]\nmode = \"0o640\"\n", file: "x.toml"))?.socket.mode == 0o640)
    }

    @Test(
        "a socket.mode that does not let the socket's owner connect (no write for the owner) is refused",
        arguments: ["0", "0000", "0466", "0077"])
    func socketModeWithoutOwnerWrite(mode: String) {
        do {
            let c = try DaemonConfiguration.parse("[socket]\nmode = \"\(mode)\"\n", file: "x.toml")
            Issue.record("accepted \(mode.debugDescription) as \(String(c.socket.mode, radix: 8))")
        } catch {
            #expect(error.line == 2 && error.key == "socket.mode", "\(error)")
            #expect(
                error.reason.hasPrefix("'\(mode)' does not let the socket's owner (repd's user) connect"), "\(error)")
        }
        #expect((try? DaemonConfiguration.parse("[socket]\nmode = \"0200\"\n", file: "x.toml"))?.socket.mode == 0o200)
    }

    @Test(
        "a [detector] value that validate() refuses is reported under its own key and line",
        arguments: RepDetectorConfiguration.Setting.allCases)
    func detectorSettingKeys(setting: RepDetectorConfiguration.Setting) {
        let text = "[detector]\n\(setting.configurationKey) = -1000\n"
        do {
            _ = try DaemonConfiguration.parse(text, file: "x.toml")
            Issue.record("accepted: \(text.debugDescription)")
        } catch {
            #expect(error.line == 2)
            #expect(error.key == "detector.\(setting.configurationKey)")
            #expect(error.reason.hasPrefix("-1000.0 is not allowed: expected "), "got: \(error.reason)")
        }
    }

    @Test(
        "a [detector] key whose value moves another key's bound past that key's default is named on its own line, with the key to set too",
        arguments: [
            (
                "[detector]\n# slow physio reps\nmaximum_rep_period_s = 10\n", 3, "maximum_rep_period_s",
                "10.0 needs rest_to_end_set_s (8.0, its default) to be a number ≥ maximum_rep_period_s, at most 3600: set rest_to_end_set_s too"
            ),
            (
                "[detector]\nwalking_period_low_s = 2\n", 2, "walking_period_low_s",
                "2.0 needs walking_period_high_s (1.7, its default) to be a number > walking_period_low_s: set walking_period_high_s too"
            ),
            (
                "[detector]\nmaximum_rep_period_s = 10\nrest_to_end_set_s = 9\n", 3, "rest_to_end_set_s",
                "9.0 is not allowed: expected a number ≥ maximum_rep_period_s, at most 3600"
            ),
        ])
    func boundSetByAnotherKey(text: String, line: Int, key: String, reason: String) {
        do {
            _ = try DaemonConfiguration.parse(text, file: "x.toml")
            Issue.record("accepted: \(text.debugDescription)")
        } catch {
            #expect(error.line == line && error.key == "detector.\(key)", "\(error)")
            #expect(error.reason == reason)
        }
    }

    @Test("placement = \"bar\" turns the exercise gate off unless minimum_exercise_likelihood is set")
    func barPlacementGateDefault() throws {
        #expect(try DaemonConfiguration.parse("[detector]\n", file: "x.toml").detector.minimumExerciseLikelihood == 0.2)
        let bar = try DaemonConfiguration.parse("[detector]\nplacement = \"bar\"\n", file: "x.toml")
        #expect(bar.detector.minimumExerciseLikelihood == 0)
        let set = try DaemonConfiguration.parse(
            "[detector]\nminimum_exercise_likelihood = 0.2\nplacement = \"bar\"\n", file: "x.toml")
        #expect(set.detector.minimumExerciseLikelihood == 0.2)
    }

    @Test("the sensor's trigger, the uplink's client id and user: an empty string in the file is none")
    func emptyStringsAreNone() throws {
        let c = try DaemonConfiguration.parse(
            "[sensor]\ntrigger = \"\"\n[uplink]\nclient_id = \"\"\nusername = \"\"\n", file: "x.toml")
        #expect(c.sensor.trigger == nil && c.uplink.clientID == nil && c.uplink.username == nil)
        #expect(try DaemonConfiguration.parse("[sensor]\ntrigger = \"t0\"\n", file: "x.toml").sensor.trigger == "t0")
    }

    @Test(
        "a wrong key, type or value is named with its section, key and line",
        arguments: [
            (
                "[sensor]\n\nprovider = 3\n",
                "x.toml:3: sensor.provider: expected a string in quotes, found a whole number"
            ),
            ("[sensor]\nprovider = \"usb\"\n", "x.toml:2: sensor.provider: 'usb' is not one of iio, fixture, demo"),
            ("[socket]\nmax_clients = 1.5\n", "x.toml:2: socket.max_clients: expected a whole number, found a number"),
            ("[socket]\nallowed_uids = [1, -2]\n", "x.toml:2: socket.allowed_uids: expected an array of numeric ids"),
            ("[detector]\nminimum_match = nan\n", "x.toml:2: detector.minimum_match: expected a finite number"),
            (
                "[detector]\nminimum_cycle_separation = 1.5\n",
                "x.toml:2: detector.minimum_cycle_separation: 1.5 is not allowed: expected a number between 0 and 1 (exclusive)"
            ),
            (
                "[detector]\nmaximum_walking_likeness = 3\n",
                "x.toml:2: detector.maximum_walking_likeness: 3.0 is not allowed: expected a number in (-2, 2] (2 turns the check off)"
            ),
            (
                "[detector]\nmaximum_rep_period_s = 0.2\n",
                "x.toml:2: detector.maximum_rep_period_s: 0.2 is not allowed: expected a number > minimum_rep_period_s, at most 12"
            ),
            (
                "[detector]\nwalking_period_high_s = 0.5\n",
                "x.toml:2: detector.walking_period_high_s: 0.5 is not allowed: expected a number > walking_period_low_s"
            ),
            (
                "[detector]\n\nplacement = \"hip\"\n",
                "x.toml:3: detector.placement: 'hip' is not one of bar, wrist, arm"
            ),
            (
                "[detector]\nplacement = 1\n",
                "x.toml:2: detector.placement: expected a string in quotes, found a whole number"
            ),
            ("[log]\nlevel = \"loud\"\n", "x.toml:2: log.level: 'loud' is not one of trace"),
            ("[log]\nlevel = \"info\"\ncolour = true\n", "x.toml:3: log.colour: unknown key (keys of [log] are level)"),
            ("[sensors]\n", "x.toml:1: sensors: unknown section"),
            ("[journal]\nsynchronous = \"off\"\n", "x.toml:2: journal.synchronous: 'off' is not one of normal, full"),
            (
                "[journal]\n\nmax_events = 5\n",
                "x.toml:3: journal.max_events: 5 is not 0 (no limit) or in 100…1000000000"
            ),
            ("[journal]\nmax_size_mb = -1\n", "x.toml:2: journal.max_size_mb: -1 is not 0 (no limit) or in 1…1000000"),
            ("[journal]\nmax_age_days = -1\n", "x.toml:2: journal.max_age_days: -1.0 is not in 0…36500"),
            ("[journal]\npath = 3\n", "x.toml:2: journal.path: expected a string in quotes"),
            (
                "[journal]\nfile = \"x\"\n",
                "x.toml:2: journal.file: unknown key (keys of [journal] are path, synchronous"
            ),
            ("rate_hz = 100\n", "x.toml:1: rate_hz: keys belong in a section"),
            ("[sensor]\nrate_hz = 1e\n", "x.toml:2: column 11: '1e' is not a number"),
            ("[socket]\nmax_clients = 4294967297\n", "x.toml:2: socket.max_clients: 4294967297 is not in 1…100000"),
            ("[web]\nlisten = \"8080\"\n", "x.toml:2: web.listen: '8080' has no host"),
            ("[web]\n\nlisten = \"0.0.0.0:80800\"\n", "x.toml:3: web.listen: '80800' is not a port in 1…65535"),
            ("[web]\nlisten = \":8080\"\n", "x.toml:2: web.listen: ':8080' has no host"),
            ("[web]\nlisten = \"::1:8080\"\n", "x.toml:2: web.listen: '::1:8080': an IPv6 address goes in brackets"),
            ("[web]\nlisten = \"a b:8080\"\n", "x.toml:2: web.listen: 'a b' is not a host name or IP address"),
            ("[web]\nlisten = 8080\n", "x.toml:2: web.listen: expected a string in quotes"),
            ("[web]\nport = 8080\n", "x.toml:2: web.port: unknown key (keys of [web] are listen, socket)"),
            ("[web]\nsocket = 3\n", "x.toml:2: web.socket: expected a string, or an array of strings"),
            ("[web]\nsocket = [\"a=/x.sock\", 3]\n", "x.toml:2: web.socket: expected a string, or an array of strings"),
        ])
    func semanticErrors(text: String, message: String) {
        do {
            _ = try DaemonConfiguration.parse(text, file: "x.toml")
            Issue.record("accepted: \(text.debugDescription)")
        } catch {
            #expect(error.description.hasPrefix(message), "got: \(error.description)")
        }
    }
}
