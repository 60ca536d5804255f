import RepClient
import RepProtocol
import Testing

@testable import RepWeb

/// Reads protocol lines written the way repd writes them, as repd-web's link does: parsed, then read into types.
private func messages(_ lines: [String]) -> [(line: ServerLine, json: JSONValue)] {
    lines.map { text in
        let json = try! JSONParser.parse(text)
        return (try! ServerLine.read(json), json)
    }
}

private func state(after lines: [String], label: String? = nil) -> StationState {
    var state = StationState(socketPath: "/tmp/x.sock", label: label, defaultName: "host")
    for message in messages(lines) { state.apply(message.line, json: message.json) }
    return state
}

@Suite("a station's state, fed repd's messages")
struct StationStateTests {
    let workout = [
        #"{"type":"hello","protocol":1,"version":"0.1.0","sensor":{"kind":"fixture","name":"w.csv","rate_hz":50},"rate_hz":50,"subscribed":["rep","sensor","set"],"newest_id":0}"#,
        #"{"type":"sensor","state":"connected","wall":1.0,"id":1,"station":"rack-1"}"#,
        #"{"type":"set_start","set":1,"t":3.1,"wall":2.0,"id":2,"station":"rack-1"}"#,
        #"{"type":"rep","set":1,"rep":1,"total":1,"t":5.0,"wall":2.0,"duration":2.2,"amplitude":0.6,"id":3,"station":"rack-1"}"#,
        #"{"type":"rep","set":1,"rep":2,"total":2,"t":7.2,"wall":2.5,"duration":2.1,"amplitude":0.5,"id":4,"station":"rack-1"}"#,
    ]

    @Test("hello brings the link up; a set's reps set the count; the station is named by repd's events")
    func liveSet() {
        let s = state(after: workout)
        #expect(s.link == .up)
        #expect(s.name == "rack-1")
        #expect(s.daemonVersion == "0.1.0")
        #expect(s.sensor == "connected")
        #expect(s.set == 1 && s.inSet && s.count == 2)
        #expect(s.reps.map(\.number) == [1, 2])
        #expect(s.lastID == 4)
        #expect(s.sets.isEmpty)
    }

    @Test("a label given by the user names the station whatever repd says")
    func label() {
        #expect(state(after: workout, label: "squat rack").name == "squat rack")
    }

    @Test("set_end's final count replaces the live one and the set joins the history")
    func setEndCorrects() {
        let s = state(after: workout + [#"{"type":"set_end","set":1,"reps":3,"live_reps":2,"t":8,"wall":9,"id":5}"#])
        #expect(!s.inSet && s.count == 3 && s.set == 1)
        #expect(s.sets == [StationState.DoneSet(number: 1, reps: 3, wall: 9)])
        #expect(s.reps.count == 2, "the bars of the set just done stay until the next set starts")
    }

    @Test("an event already applied (id at or below the last) changes nothing: a replay overlapping is harmless")
    func duplicateIDs() {
        var s = state(after: workout)
        let before = s
        let replayed = messages([workout[3]])[0]
        let changed = s.apply(replayed.line, json: replayed.json)
        #expect(!changed)
        #expect(s == before)
    }

    @Test(
        "a later repd's event this version cannot read (a new type, a new sensor state) counts as seen and changes nothing shown"
    )
    func laterRepdsEvents() {
        var s = state(after: workout)
        for line in [
            #"{"type":"calibration","axis":"z","wall":3.0,"id":5,"station":"rack-1"}"#,
            #"{"type":"sensor","state":"recalibrating","wall":3.5,"id":6,"station":"rack-1"}"#,
        ] {
            let before = s
            let message = messages([line])[0]
            let changed = s.apply(message.line, json: message.json)
            #expect(!changed, "\(line)")
            #expect(s.lastID == before.lastID.map { $0 + 1 }, "a resume goes on after it")
            s.lastID = before.lastID
            #expect(s == before, "nothing else changed")
            s.lastID = before.lastID.map { $0 + 1 }
        }
        #expect(s.sensor == "connected" && s.count == 2)
    }

    @Test("set numbers starting over (a reset, a new repd) start a new workout: the history is cleared")
    func newWorkout() {
        let s = state(
            after: workout + [
                #"{"type":"set_end","set":1,"reps":2,"t":8,"wall":9,"id":5}"#,
                #"{"type":"set_start","set":2,"t":20,"wall":20,"id":6}"#,
                #"{"type":"set_end","set":2,"reps":4,"t":30,"wall":30,"id":7}"#,
                #"{"type":"set_start","set":1,"t":3,"wall":40,"id":8}"#,
            ])
        #expect(s.sets.isEmpty)
        #expect(s.set == 1 && s.inSet && s.count == 0 && s.reps.isEmpty)
    }

    @Test("bye and a lost sensor are shown; the link state is set from outside when the connection drops")
    func byeAndSensor() {
        var s = state(after: workout + [#"{"type":"sensor","state":"lost","message":"ENODEV","wall":3,"id":5}"#])
        #expect(s.sensor == "lost" && s.sensorMessage == "ENODEV")
        let bye = messages([#"{"type":"bye","reason":"SIGTERM"}"#])[0]
        let byeChanged = s.apply(bye.line, json: bye.json)
        #expect(byeChanged && s.link == .down)
        let downAgain = s.setLink(.down)
        let connecting = s.setLink(.connecting)
        #expect(!downAgain && connecting)
    }

    @Test(
        "per-rep fields later versions add are kept as measures (top level or one object deep); others are not",
        arguments: [
            (
                #"{"type":"rep","set":1,"rep":1,"total":1,"t":1,"wall":1,"duration":2,"amplitude":0.5}"#,
                ["duration", "amplitude"]
            ),
            (
                #"{"type":"rep","set":1,"rep":1,"total":1,"t":1,"wall":1,"duration":2,"amplitude":0.5,"mean_velocity":0.61,"rom":0.42,"note":"x","id":9,"station":"s"}"#,
                ["duration", "amplitude", "mean_velocity", "rom"]
            ),
            // What repd sends on a bar (docs/PROTOCOL.md): the window's times are not measures, and the bar's velocity
            // and range of motion come before the tempo, whose fields sort before them by name.
            (
                #"{"type":"rep","set":1,"rep":3,"total":3,"t":12.44,"wall":1764000012.5,"duration":3.4,"amplitude":0.31,"start_t":8.4,"end_t":12.39,"starts_at":"top","eccentric_s":1.02,"concentric_s":0.71,"pause_bottom_s":0.1,"pause_top_s":0.86,"rom_m":0.503,"mean_velocity_m_s":0.652,"peak_velocity_m_s":1.04,"velocity_loss_pct":8.3}"#,
                [
                    "duration", "amplitude", "mean_velocity_m_s", "peak_velocity_m_s", "rom_m", "eccentric_s",
                    "concentric_s", "pause_bottom_s",
                ]
            ),
            // On a wrist: the tempo only.
            (
                #"{"type":"rep","set":1,"rep":1,"total":1,"t":5.1,"wall":1,"duration":2.2,"amplitude":0.2,"start_t":2.8,"end_t":5.0,"starts_at":"bottom","eccentric_s":1.1,"concentric_s":0.9}"#,
                ["duration", "amplitude", "eccentric_s", "concentric_s"]
            ),
            (
                #"{"type":"rep","set":1,"rep":1,"total":1,"t":1,"wall":1,"duration":2,"amplitude":0.5,"quality":{"peak_velocity":1.1,"tempo":"2-0-1"}}"#,
                ["duration", "amplitude", "peak_velocity"]
            ),
        ])
    func metrics(line: String, names: [String]) {
        let s = state(after: [line])
        #expect(s.reps.first?.metrics.map(\.0) == names)
    }

    @Test("the JSON a page gets carries the count, the set, the history and each rep's measures")
    func json() throws {
        let s = state(
            after: workout + [
                #"{"type":"rep","set":1,"rep":3,"total":3,"t":9,"wall":3,"duration":2.0,"amplitude":0.5,"mean_velocity_m_s":0.55,"id":5}"#
            ])
        let parsed = try JSONParser.parse(s.json.text)
        #expect(parsed["station"]?.stringValue == "rack-1")
        #expect(parsed["repd"]?.stringValue == "up")
        #expect(parsed["count"]?.int == 3)
        #expect(parsed["set"]?.int == 1)
        #expect(parsed["in_set"]?.bool == true)
        #expect(parsed["last_id"]?.int == 5)
        guard case .array(let reps) = parsed["reps"] else {
            Issue.record("no reps array")
            return
        }
        #expect(reps.count == 3)
        #expect(reps.last?["metrics"]?["mean_velocity_m_s"]?.double == 0.55)
        #expect(reps.first?["metrics"]?["mean_velocity_m_s"] == nil)
    }

    @Test("the bars keep the newest reps and the history the newest sets, whatever the length of a session")
    func bounded() {
        var lines: [String] = []
        var id = 0
        for set in 1...(StationState.maximumSets + 5) {
            id += 1
            lines.append(#"{"type":"set_start","set":\#(set),"t":0,"wall":0,"id":\#(id)}"#)
            for rep in 1...(set == 1 ? StationState.maximumReps + 20 : 2) {
                id += 1
                lines.append(
                    #"{"type":"rep","set":\#(set),"rep":\#(rep),"total":0,"t":0,"wall":0,"duration":1,"amplitude":0.5,"id":\#(id)}"#
                )
                if set == 1, rep == StationState.maximumReps + 20 {
                    #expect(state(after: lines).reps.count == StationState.maximumReps)
                }
            }
            id += 1
            lines.append(#"{"type":"set_end","set":\#(set),"reps":2,"t":0,"wall":0,"id":\#(id)}"#)
        }
        let s = state(after: lines)
        #expect(s.sets.count == StationState.maximumSets)
        #expect(s.sets.last?.number == StationState.maximumSets + 5)
    }

    @Test(
        "names alike are numbered by the order given, not by which repd spoke first, and a label the user gave is never renamed"
    )
    func namesAreNumberedByOrder() {
        func sensor(_ station: String) -> [String] {
            [#"{"type":"sensor","state":"connected","wall":1.0,"id":1,"station":"\#(station)"}"#]
        }
        let blank = [
            StationState(socketPath: "/a", label: nil, defaultName: "vm"),
            StationState(socketPath: "/b", label: nil, defaultName: "vm"),
            StationState(socketPath: "/c", label: "vm", defaultName: "vm"),
        ]
        #expect(StationBoard.named(blank).map(\.name) == ["vm-2", "vm-3", "vm"], "the label keeps its name")
        // The second repd names its station first, then the first one says the same name.
        var stations = blank
        for message in messages(sensor("gym")) { stations[1].apply(message.line, json: message.json) }
        #expect(StationBoard.named(stations).map(\.name) == ["vm-2", "gym", "vm"])
        for message in messages(sensor("gym")) { stations[0].apply(message.line, json: message.json) }
        #expect(StationBoard.named(stations).map(\.name) == ["gym", "gym-2", "vm"], "the first given keeps it")
        for message in messages(sensor("other")) { stations[2].apply(message.line, json: message.json) }
        #expect(StationBoard.named(stations)[2].name == "vm", "a label is not renamed by repd")
    }
}
