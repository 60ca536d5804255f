import RepProtocol
import Testing

@Suite("the history command")
struct HistoryRequestTests {
    @Test(
        "words and JSON forms of history parse to the same request",
        arguments: [
            ("history", HistoryRequest()),
            ("history after=41 limit=50 rep", HistoryRequest(after: 41, kinds: [.rep], limit: 50)),
            (
                "history from=1700000000 to=1700003600.5 set,sensor",
                HistoryRequest(from: 1_700_000_000, to: 1_700_003_600.5, kinds: [.set, .sensor])
            ),
            ("history latest limit=5 before=90", HistoryRequest(before: 90, limit: 5, latest: true)),
            (#"{"cmd":"history"}"#, HistoryRequest()),
            (
                #"{"cmd":"history","after":41,"limit":50,"events":["rep"]}"#,
                HistoryRequest(after: 41, kinds: [.rep], limit: 50)
            ),
            (
                #"{"cmd":"history","from":1700000000,"latest":true,"before":90}"#,
                HistoryRequest(before: 90, from: 1_700_000_000, latest: true)
            ),
        ])
    func parses(line: String, expected: HistoryRequest) throws {
        #expect(try ClientCommand.parse(line: Array(line.utf8)) == .history(expected))
    }

    @Test(
        "a request's words form reads back as the same request",
        arguments: [
            HistoryRequest(),
            HistoryRequest(after: 3, before: 9, from: 1.5, to: 2.5, kinds: [.sensor], limit: 7, latest: true),
        ])
    func roundTrip(request: HistoryRequest) throws {
        #expect(try ClientCommand.parse(line: Array(request.line.utf8)) == .history(request))
    }

    @Test(
        "bad arguments are refused with the argument's name",
        arguments: [
            ("history after=-1", "after"), ("history limit=0", "limit"), ("history limit=201", "limit"),
            ("history from=yesterday", "from"), ("history samples", "samples"), ("history colour=red", "colour"),
            (#"{"cmd":"history","latest":1}"#, "latest"), (#"{"cmd":"history","events":[]}"#, "events"),
            (#"{"cmd":"history","to":-5}"#, "to"), (#"{"cmd":"history","since":3}"#, "since"),
            ("history latest latest limit=1", "latest is given twice"),
            ("history latest=true", "latest takes no value"),
        ])
    func refused(line: String, named: String) {
        let reason = refusal(of: line)
        #expect(reason?.contains(named) == true, "\(reason ?? "\(line) was accepted")")
    }

    /// Why `line` is refused, or nil when it is accepted. (do/catch rather than the error #expect(throws:) returns,
    /// which needs Swift Testing 6.1; trixie has 6.0.3.)
    private func refusal(of line: String) -> String? {
        do {
            _ = try ClientCommand.parse(line: Array(line.utf8))
            return nil
        } catch {
            return error.reason
        }
    }

    @Test(
        "a refused JSON value is quoted as the client wrote it, not as the parser holds it",
        arguments: [
            (#"{"cmd":"history","limit":300}"#, #"not "300""#), (#"{"cmd":"history","limit":2.5}"#, #"not "2.5""#),
            (#"{"cmd":"history","from":"noon"}"#, #"not "noon""#), (#"{"cmd":"history","to":[1]}"#, #"not "an array""#),
        ])
    func refusedValueQuoted(line: String, quoted: String) {
        let reason = refusal(of: line)
        #expect(reason?.contains(quoted) == true, "\(reason ?? "\(line) was accepted")")
    }

    @Test("the reply carries every event with its id and station, the count and whether more are left")
    func reply() throws {
        let line = ServerMessage.history(
            [
                (#"{"type":"rep","set":1}"#, 4, "rack-1", "rep"),
                (#"{"type":"set_end","set":1,"reps":1}"#, 5, "rack-1", "set_end"),
            ],
            more: true, newestID: 9)
        let message = try JSONParser.parse(line)
        #expect(message["type"]?.stringValue == "history")
        #expect(message["count"]?.int == 2)
        #expect(message["more"]?.bool == true)
        #expect(message["newest_id"]?.int == 9)
        guard case .array(let events)? = message["events"] else { Issue.record("no events array"); return }
        #expect(events.map { $0["id"]?.int } == [4, 5])
        #expect(events.map { $0["station"]?.stringValue } == ["rack-1", "rack-1"])
        #expect(events[1]["reps"]?.int == 1)
    }

    @Test(
        "a journal row that is not one JSON object (damaged on the disk) stands as {\"type\":\"damaged\"} with its id: the reply stays valid JSON, and nothing traps",
        arguments: [
            #"{"type":"rep","set":3,"rep"#, #"{"type":"rep","set":3,"rep}"#, "{\"type\":\"rep\",\n\"set\":3}", "",
            "[1,2]", #"{"a":1}{"b":2}"#, #"{"a":1} "#, "{\"a\":1}\t", " {\"a\":1}", "{\"a\":\r1}",
            // Objects that do not read as an event: no string type (a line without one), or a member repd adds
            // (given twice, which ServerLine.parse refuses).
            "{}", #"{"a":1}"#, #"{"type":5}"#, #"{"type":"rep","id":7}"#, #"{"type":"rep","station":"x"}"#,
            #"{"type":"rep","journal":"00ff"}"#,
        ])
    func damagedRow(json: String) throws {
        let line = ServerMessage.history(
            [(#"{"type":"rep","set":1}"#, 99, "rack-1", "rep"), (json, 100, "rack-1", "rep")], more: false,
            newestID: 100)
        let message = try JSONParser.parse(line)
        guard case .array(let events)? = message["events"] else { Issue.record("no events array"); return }
        #expect(events.map { $0["id"]?.int } == [99, 100])
        #expect(events[1]["type"]?.stringValue == "damaged")
        #expect(events[1]["of"]?.stringValue == "rep")
        #expect(events[1]["station"]?.stringValue == "rack-1")
        let single = ServerMessage.journaled(json, id: 100, station: "rack-1", journal: "abc", type: "rep")
        #expect(single == #"{"type":"damaged","of":"rep","id":100,"station":"rack-1","journal":"abc"}"# + "\n")
    }
}
