import MotionCore
import RepClient
import RepDetection
import RepProtocol
import Testing

/// Quality figures already rounded as the writer rounds them (3 decimals, velocity loss 1), so they read back equal.
private let barQuality = RepQuality(
    start: 8.4, end: 12.39, startsAtTop: true, concentric: 0.71, eccentric: 1.02, pauseBottom: 0.1, pauseTop: 0.86,
    velocity: RepVelocity(rangeOfMotion: 0.503, meanConcentric: 0.652, peakConcentric: 1.04, loss: 8.3))
private let wristQuality = RepQuality(start: 1.5, end: 3.25, startsAtTop: false, concentric: 0.8, eccentric: 0.9)
private let slowQuality = RepQuality(start: 2, end: 4, velocityUnavailable: "sample rate too low")

private let sensor = ServerMessage.SensorInfo(kind: "iio", name: "lis3dh-accel", rateHz: 100)

@Suite("RepClient reads what ServerMessage writes")
struct ServerLineRoundTripTests {
    static let workoutEvents: [WorkoutEvent] = [
        .setStarted(SetEvent(setNumber: 2, timestamp: 101.25, repCount: 0)),
        .rep(RepEvent(setNumber: 2, repInSet: 3, totalReps: 8, timestamp: 112.4, duration: 2.1, amplitude: 0.61)),
        .rep(
            RepEvent(
                setNumber: 1, repInSet: 3, totalReps: 3, timestamp: 12.44, duration: 3.4, amplitude: 0.31,
                quality: barQuality)),
        .rep(
            RepEvent(
                setNumber: 1, repInSet: 1, totalReps: 1, timestamp: 3, duration: 1, amplitude: 1, quality: wristQuality)
        ),
        .rep(
            RepEvent(
                setNumber: 1, repInSet: 1, totalReps: 1, timestamp: 3, duration: 1, amplitude: 1, quality: slowQuality)),
        .setEnded(SetEvent(setNumber: 2, timestamp: 130, repCount: 10)),
        .setEnded(SetEvent(setNumber: 3, timestamp: 150.5, repCount: 9, liveRepCount: 8)),
        .setEnded(
            SetEvent(
                setNumber: 4, timestamp: 170, repCount: 2,
                quality: SetQuality(reps: [barQuality, wristQuality], fastestMeanVelocity: 0.652, velocityLoss: 8.3))),
        .setEnded(
            SetEvent(
                setNumber: 5, timestamp: 171, repCount: 1,
                quality: SetQuality(reps: [slowQuality], velocityUnavailable: "sample rate too low"))),
    ]

    @Test("every workout event reads back as the event and wall time it was written from", arguments: workoutEvents)
    func workoutEvent(_ event: WorkoutEvent) throws {
        let line = ServerMessage.event(event, wall: 1_764_000_012.5)
        #expect(try ServerLine.parse(line) == .event(ServerEvent(.workout(event), wall: 1_764_000_012.5)))
    }

    static let sensorStates: [(MotionProviderState, String?)] = [
        (.idle, nil), (.running, "device"), (.stopped, nil), (.finished, nil), (.sensorLost(reason: "unplugged"), nil),
        (.sensorBack, "host"), (.polling(reason: "no buffer"), "host"),
        (.failed(MotionProviderError(.permissionDenied, "cannot open /dev/iio:device0")), nil),
    ]

    @Test("every sensor state reads back with its message, kind and timestamps", arguments: sensorStates)
    func sensorState(_ state: MotionProviderState, timestamps: String?) throws {
        let line = ServerMessage.sensor(state, wall: 5.5, timestamps: timestamps)
        #expect(try ServerLine.parse(line) == .event(ServerEvent(.sensor(state, timestamps: timestamps), wall: 5.5)))
    }

    @Test("a journaled event reads back with its id and station")
    func journaled() throws {
        let body = ServerMessage.event(.setStarted(SetEvent(setNumber: 1, timestamp: 2, repCount: 0)), wall: 3)
        let line = ServerMessage.journaled(body, id: 42, station: "rack \"1\"")
        let expected = ServerEvent(
            .workout(.setStarted(SetEvent(setNumber: 1, timestamp: 2, repCount: 0))), wall: 3, id: 42,
            station: "rack \"1\"")
        #expect(try ServerLine.parse(line) == .event(expected))
        #expect(try ServerLine.parse(line).eventID == 42)
    }

    @Test("the set_end repd journals for a set a crash left open reads back as that set's end, interrupted")
    func interruptedSetEnd() throws {
        let line = ServerMessage.interruptedSetEnd(set: 2, reps: 7, t: 81.5, wall: 9)
        let expected = ServerEvent(
            .workout(.setEnded(SetEvent(setNumber: 2, timestamp: 81.5, repCount: 7))), wall: 9, interrupted: true)
        #expect(try ServerLine.parse(line) == .event(expected))
        let ordinary = ServerMessage.event(.setEnded(SetEvent(setNumber: 2, timestamp: 81.5, repCount: 7)), wall: 9)
        #expect(
            try ServerLine.parse(ordinary)
                == .event(
                    ServerEvent(.workout(.setEnded(SetEvent(setNumber: 2, timestamp: 81.5, repCount: 7))), wall: 9)))
    }

    @Test("the uplink's form of a journaled event names the journal file after the station and reads back the same")
    func journaledWithJournal() throws {
        let body = ServerMessage.event(.setStarted(SetEvent(setNumber: 1, timestamp: 2, repCount: 0)), wall: 3)
        let plain = ServerMessage.journaled(body, id: 42, station: "gym")
        let line = ServerMessage.journaled(body, id: 42, station: "gym", journal: "00ff")
        #expect(line == String(plain.dropLast(2)) + ",\"journal\":\"00ff\"}\n")
        #expect(try ServerLine.parse(line) == ServerLine.parse(plain))
    }

    @Test("hello reads back with and without a journal", arguments: [nil, Int64(45)])
    func hello(newestID: Int64?) throws {
        let line = ServerMessage.hello(
            daemonVersion: "0.1.0", sensor: sensor, subscribed: [.rep, .set], newestID: newestID)
        let expected = ServerLine.Hello(
            protocolVersion: 1, version: "0.1.0", sensor: sensor, subscribed: [.rep, .set], newestID: newestID)
        #expect(try ServerLine.parse(line) == .hello(expected))
    }

    static let statuses: [ServerMessage.Status] = {
        var plain = ServerMessage.Status(
            uptime: 3.25, sensor: sensor, sensorState: "connected", samples: 1200, ringCapacity: 4096,
            ringDroppedBatches: 1, ringDroppedSamples: 16, clients: 2, reps: 18, sets: 2, inSet: true)
        var full = plain
        full.iio = ServerMessage.SensorCounters(
            recordsRead: 1200, bytesDiscarded: 8, reconnects: 1, timestamps: "device")
        full.journal = ServerMessage.JournalStatus(
            path: "/var/lib/repd/j.db", newestID: 31, writing: false, error: "disk full")
        full.uplink = ServerMessage.UplinkInfo(
            state: "error", broker: "mqtt://hub:1883", lastError: "refused", ackedID: 20, backlog: 11, inFlight: 3,
            published: 40, connections: 2)
        plain.uplink = ServerMessage.UplinkInfo(state: "disabled")
        return [plain, full]
    }()

    @Test("status reads back with its iio, journal and uplink parts", arguments: statuses)
    func status(_ status: ServerMessage.Status) throws {
        #expect(
            try ServerLine.parse(ServerMessage.status(status, daemonVersion: "0.1.0"))
                == .status(status, version: "0.1.0"))
    }

    @Test("history reads back its events, and the text of each exactly as it was sent")
    func history() throws {
        let rep = ServerMessage.event(Self.workoutEvents[2], wall: 10)
        let sensorLine = ServerMessage.sensor(.sensorLost(reason: "gone"), wall: 11)
        let line = ServerMessage.history(
            [
                (json: rep, id: 7, station: "gym", type: "rep"),
                (json: sensorLine, id: 9, station: "gym", type: "sensor"),
            ],
            more: true, newestID: 31)
        guard case .history(let history) = try ServerLine.parse(line) else {
            Issue.record("not a history reply")
            return
        }
        #expect(history.more)
        #expect(history.newestID == 31)
        #expect(history.events.map(\.id) == [7, 9])
        #expect(history.events[0] == ServerEvent(.workout(Self.workoutEvents[2]), wall: 10, id: 7, station: "gym"))
        #expect(
            history.eventTexts == [
                String(ServerMessage.journaled(rep, id: 7, station: "gym").dropLast()),
                String(ServerMessage.journaled(sensorLine, id: 9, station: "gym").dropLast()),
            ])
    }

    @Test("an empty history reads back as no events")
    func emptyHistory() throws {
        let expected = ServerLine.History(events: [], eventTexts: [], more: false, newestID: nil)
        #expect(try ServerLine.parse(ServerMessage.history([], more: false, newestID: nil)) == .history(expected))
    }

    @Test("samples read back as the samples written")
    func samples() throws {
        let batch = [
            MotionSample(timestamp: 1.02, ax: 0.0195, ay: -0.5, az: 1),
            MotionSample(timestamp: 1.04, ax: 0, ay: 0, az: 0.98),
        ]
        #expect(try ServerLine.parse(ServerMessage.samples(batch)) == .samples(batch))
    }

    @Test("the replies read back: subscribed, reset, pong, error, bye")
    func replies() throws {
        #expect(
            try ServerLine.parse(ServerMessage.subscribed([.rep, .sensor])) == .subscribed([.rep, .sensor], since: nil))
        #expect(try ServerLine.parse(ServerMessage.subscribed([.set], since: 41)) == .subscribed([.set], since: 41))
        #expect(try ServerLine.parse(ServerMessage.resetDone()) == .reset)
        #expect(try ServerLine.parse(ServerMessage.pong()) == .pong)
        #expect(try ServerLine.parse(ServerMessage.error("unknown command \"x\"")) == .error("unknown command \"x\""))
        #expect(try ServerLine.parse(ServerMessage.bye(reason: "SIGTERM")) == .bye(reason: "SIGTERM"))
    }

    @Test("a type this version does not know, and members it does not know, are not errors")
    func laterVersions() throws {
        #expect(try ServerLine.parse(#"{"type":"calibration","x":1}"#) == .unknown(type: "calibration"))
        #expect(try ServerLine.parse(#"{"type":"notice","id":"n-3"}"#) == .unknown(type: "notice"))
        #expect(try ServerLine.parse(#"{"type":"pong","extra":[1,{"a":2}]}"#) == .pong)
    }

    @Test(
        "a later repd's journaled event this version cannot read whole (a new type, sensor state or error kind) reads as .other with its id, station and wall"
    )
    func laterVersionsEvents() throws {
        let cases: [(line: String, expected: ServerEvent)] = [
            (
                #"{"type":"calibration","axis":"z","wall":12.5,"id":41,"station":"gym"}"#,
                ServerEvent(.other(type: "calibration"), wall: 12.5, id: 41, station: "gym")
            ),
            (
                #"{"type":"sensor","state":"recalibrating","wall":13,"id":42,"station":"gym"}"#,
                ServerEvent(.other(type: "sensor"), wall: 13, id: 42, station: "gym")
            ),
            (
                #"{"type":"sensor","state":"error","kind":"overheated","message":"hot","wall":14,"id":43}"#,
                ServerEvent(.other(type: "sensor"), wall: 14, id: 43)
            ),
            (#"{"type":"calibration","id":44}"#, ServerEvent(.other(type: "calibration"), wall: 0, id: 44)),
        ]
        for (line, expected) in cases {
            #expect(try ServerLine.parse(line) == .event(expected), "\(line)")
        }
        let sensor = try #require(ServerLine.parse(cases[1].line).eventID)
        #expect(sensor == 42)
        #expect(ServerEvent(.other(type: "sensor"), wall: 0).kind == .sensor)
        #expect(ServerEvent(.other(type: "calibration"), wall: 0).kind == nil)
        #expect(ServerEvent(.other(type: "calibration"), wall: 0).type == "calibration")
        // A known state still reads as itself; a known type with a member missing is still an error.
        #expect(
            try ServerLine.parse(#"{"type":"sensor","state":"back","wall":1,"id":2}"#)
                == .event(ServerEvent(.sensor(.sensorBack, timestamps: nil), wall: 1, id: 2)))
        #expect(throws: ServerLineError(reason: "missing (a number)", member: "sensor.wall")) {
            try ServerLine.parse(#"{"type":"sensor","state":"back","id":2}"#)
        }
    }

    @Test("a history page holding a later repd's events reads whole: each is .other with its id, so paging goes on")
    func historyWithLaterEvents() throws {
        let rep = String(
            ServerMessage.journaled(ServerMessage.event(Self.workoutEvents[2], wall: 10), id: 7, station: "gym")
                .dropLast())
        let line =
            #"{"type":"history","events":["# + rep
            + #",{"type":"calibration","axis":"z","wall":11,"id":8,"station":"gym"},{"type":"sensor","state":"recalibrating","wall":12,"id":9,"station":"gym"}],"count":3,"more":true,"newest_id":30}"#
        guard case .history(let history) = try ServerLine.parse(line) else {
            Issue.record("not a history reply")
            return
        }
        #expect(history.events.map(\.id) == [7, 8, 9])
        #expect(history.events.map(\.type) == ["rep", "calibration", "sensor"])
        #expect(history.events[1] == ServerEvent(.other(type: "calibration"), wall: 11, id: 8, station: "gym"))
        #expect(history.eventTexts.count == 3)
        #expect(history.more && history.newestID == 30)
    }

    @Test("an event type a later repd adds to hello's or subscribed's list is left out, not an error")
    func laterEventKinds() throws {
        let hello =
            #"{"type":"hello","protocol":1,"version":"x","sensor":{"kind":"demo","name":"d","rate_hz":50},"rate_hz":50,"subscribed":["rep","steps"]}"#
        guard case .hello(let read) = try ServerLine.parse(hello) else {
            Issue.record("not a hello")
            return
        }
        #expect(read.subscribed == [.rep])
        #expect(
            try ServerLine.parse(#"{"type":"subscribed","events":["set","steps"]}"#) == .subscribed([.set], since: nil))
    }
}

@Suite("RepClient refuses malformed lines with what and where")
struct ServerLineErrorTests {
    static let cases: [(line: String, error: ServerLineError)] = [
        (#"{"type":"pong""#, ServerLineError(reason: "unexpected end in an object", offset: 14)),
        (#"{"type":pong}"#, ServerLineError(reason: "unexpected character", offset: 8)),
        ("[1,2]", ServerLineError(reason: "a line must be one JSON object")),
        (#"{"set":1}"#, ServerLineError(reason: "missing \"type\" (a string)", member: "type")),
        (
            #"{"type":"rep","set":"two","rep":1,"total":1,"t":1,"wall":1,"duration":1,"amplitude":1}"#,
            ServerLineError(reason: "expected a whole number", member: "rep.set")
        ),
        (
            #"{"type":"rep","set":1,"rep":1,"total":1,"t":1,"wall":1,"duration":1}"#,
            ServerLineError(reason: "missing (a number)", member: "rep.amplitude")
        ),
        (
            #"{"type":"status","version":"1","uptime_s":1,"sensor":{"kind":"demo","name":"d","rate_hz":50},"sensor_state":"connected","samples":1,"ring":{"capacity":8,"dropped_batches":0},"clients":0,"reps":0,"sets":0,"in_set":false}"#,
            ServerLineError(reason: "missing (a whole number)", member: "status.ring.dropped_samples")
        ),
        (
            #"{"type":"set_end","set":1,"reps":1,"t":1,"wall":1,"quality":[{"start_t":1,"end_t":2},{"end_t":3}]}"#,
            ServerLineError(reason: "missing \"start_t\" (a number)", member: "set_end.quality[1]")
        ),
        (
            #"{"type":"history","events":[{"type":"pong"}],"count":1,"more":false}"#,
            ServerLineError(reason: "not a journaled event", member: "history.events[0]")
        ),
        (
            #"{"type":"samples","samples":[[1,2,3,4],[1,2,3]]}"#,
            ServerLineError(reason: "expected [t, ax, ay, az] (numbers)", member: "samples.samples[1]")
        ),
        (
            #"{"type":"hello","protocol":1,"version":"x","sensor":{"kind":"demo","name":"d","rate_hz":50},"rate_hz":50,"subscribed":["rep",2]}"#,
            ServerLineError(reason: "expected an event type's name", member: "hello.subscribed[1]")
        ),
        (
            #"{"type":"history","events":[{"set":1,"id":3}],"count":1,"more":false}"#,
            ServerLineError(reason: "not a journaled event", member: "history.events[0]")
        ),
    ]

    @Test("a malformed line gives a ServerLineError naming the byte or the member", arguments: cases)
    func malformed(line: String, error: ServerLineError) {
        #expect(throws: error) { try ServerLine.parse(line) }
    }

    @Test("the error's description says where: the byte for JSON syntax, the member's path otherwise")
    func descriptions() {
        #expect(
            ServerLineError(reason: "unexpected character", offset: 8).description
                == "malformed JSON at byte 8: unexpected character")
        #expect(
            ServerLineError(reason: "expected a whole number", member: "rep.set").description
                == "rep.set: expected a whole number")
    }
}

@Suite("Client commands and lines")
struct ClientSideTests {
    static let commands: [ClientCommand] = [
        .status, .ping, .reset, .subscribe([.rep, .set, .sensor]), .subscribe([.samples, .rep], since: 0),
        .subscribe([.sensor], since: 42), .history(HistoryRequest(after: 41, before: 90, limit: 50, latest: true)),
    ]

    @Test("each command's words form parses back to the command", arguments: commands)
    func commandLine(_ command: ClientCommand) throws {
        #expect(try ClientCommand.parse(line: Array(command.line.utf8)) == command)
    }

    @Test("a line buffer hands out whole lines only, across chunks cut anywhere")
    func lineBuffer() {
        let text = Array("{\"type\":\"pong\"}\n{\"type\":\"bye\",\"reason\":\"x\"}\n{\"ty".utf8)
        for cut in 0...text.count {
            var buffer = LineBuffer()
            var lines: [String] = []
            for part in [text[..<cut], text[cut...]] {
                buffer.append(part)
                while let line = buffer.nextLine() { lines.append(String(decoding: line, as: UTF8.self)) }
            }
            #expect(lines == [#"{"type":"pong"}"#, #"{"type":"bye","reason":"x"}"#])
            #expect(buffer.pendingCount == 4)
        }
    }
}
