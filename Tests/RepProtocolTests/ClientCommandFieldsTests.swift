import RepProtocol
import Testing

@Suite("client commands: fields and separators")
struct ClientCommandFieldsTests {
    @Test(
        "a command that takes no arguments refuses any field besides cmd, events included (a stray reset is not done)",
        arguments: [
            #"{"cmd":"reset","events":{"a":1}}"#, #"{"cmd":"reset","events":null}"#, #"{"cmd":"ping","events":5}"#,
            #"{"cmd":"status","events":["bogus"]}"#,
        ])
    func strayFieldsRefused(line: String) {
        let reason = refusal(line)
        #expect(reason.contains("unknown field \"events\"") && reason.contains("takes only \"cmd\""), "\(reason)")
    }

    @Test("an unknown command with fields is named as an unknown command, not as an unknown field")
    func unknownCommandFirst() {
        #expect(refusal(#"{"cmd":"bogus","events":["rep"]}"#).contains("unknown command \"bogus\""))
    }

    @Test("a cmd that is not a string is named as such, not as missing")
    func cmdOfTheWrongType() {
        #expect(refusal(#"{"cmd":5}"#) == "\"cmd\" must be a string (the command's name)")
        #expect(refusal(#"{"cmd":null}"#) == "\"cmd\" must be a string (the command's name)")
        #expect(refusal(#"{"command":"status"}"#) == "missing \"cmd\" (a string)")
    }

    @Test("subscribe still takes events and since; the words form accepts tabs between words")
    func subscribeFieldsAndTabs() throws {
        #expect(
            try ClientCommand.parse(line: Array(#"{"cmd":"subscribe","events":["rep"],"since":4}"#.utf8))
                == .subscribe([.rep], since: 4))
        #expect(
            try ClientCommand.parse(line: Array("subscribe\trep,set".utf8)) == .subscribe([.rep, .set], since: nil))
        #expect(
            try ClientCommand.parse(line: Array("subscribe \t since=3".utf8))
                == .subscribe(EventKind.defaults, since: 3))
    }

    private func refusal(_ line: String) -> String {
        do {
            _ = try ClientCommand.parse(line: Array(line.utf8))
            return "accepted"
        } catch { return error.reason }
    }
}
