import RepProtocol
import Testing

@Suite("subscribe since=ID (the journal's replay)")
struct SubscribeSinceTests {
    @Test(
        "words and JSON forms of subscribe with since parse to the same command",
        arguments: [
            ("subscribe since=42", ClientCommand.subscribe(EventKind.defaults, since: 42)),
            ("subscribe rep,set since=0", .subscribe([.rep, .set], since: 0)),
            ("subscribe since=7 rep", .subscribe([.rep], since: 7)),
            (#"{"cmd":"subscribe","since":42}"#, .subscribe(EventKind.defaults, since: 42)),
            (#"{"cmd":"subscribe","since":3,"events":["sensor"]}"#, .subscribe([.sensor], since: 3)),
            ("subscribe rep", .subscribe([.rep], since: nil)),
            ("subscribe since=9223372036854775807", .subscribe(EventKind.defaults, since: .max)),
            (#"{"cmd":"subscribe","since":9223372036854775807}"#, .subscribe(EventKind.defaults, since: .max)),
            (
                #"{"cmd":"history","after":9223372036854775807,"limit":1}"#,
                .history(HistoryRequest(after: .max, limit: 1))
            ),
        ])
    func parses(line: String, expected: ClientCommand) throws {
        #expect(try ClientCommand.parse(line: Array(line.utf8)) == expected)
    }

    @Test(
        "a since that is not a whole number ≥ 0 is refused",
        arguments: [
            "subscribe since=-1", "subscribe since=abc", "subscribe since=", #"{"cmd":"subscribe","since":1.5}"#,
            #"{"cmd":"subscribe","since":"3"}"#, #"{"cmd":"ping","since":3}"#, #"{"cmd":"subscribe","since":1e19}"#,
            #"{"cmd":"subscribe","since":-0.5}"#,
            // "events" given empty is refused with since too (without "events", since means the defaults).
            #"{"cmd":"subscribe","since":5,"events":[]}"#,
        ])
    func refused(line: String) {
        #expect(throws: ProtocolError.self) { try ClientCommand.parse(line: Array(line.utf8)) }
    }

    @Test(
        "a field given twice is refused, in words and in JSON, with what was doubled",
        arguments: [
            ("subscribe since=1 since=2", "subscribe: since is given twice"),
            ("history limit=1 limit=2", "history: limit is given twice"),
            ("history after=1 rep after=3", "history: after is given twice"),
            (#"{"cmd":"ping","cmd":"reset"}"#, #"the key "cmd" is given twice"#),
            (#"{"cmd":"subscribe","since":1,"since":2}"#, #"the key "since" is given twice"#),
        ])
    func doubled(line: String, reason: String) {
        do {
            let command = try ClientCommand.parse(line: Array(line.utf8))
            Issue.record("\(line) parsed as \(command)")
        } catch {
            #expect(error.reason.contains(reason), "\(error.reason)")
        }
    }

    @Test("a journaled line carries id and station after the event's own fields")
    func journaledLine() {
        #expect(
            ServerMessage.journaled("{\"type\":\"rep\",\"set\":1}\n", id: 12, station: "gym \"A\"")
                == "{\"type\":\"rep\",\"set\":1,\"id\":12,\"station\":\"gym \\\"A\\\"\"}\n")
        let hello = ServerMessage.hello(
            daemonVersion: "1", sensor: .init(kind: "demo", name: "d", rateHz: 50), subscribed: [.rep], newestID: 9)
        #expect(hello.contains("\"newest_id\":9"))
    }
}
