import MotionCore
import RepDetection
import RepProtocol
import Testing

@Suite("journaled events")
struct JournaledEventTests {
    @Test(
        "a workout event's kind, type and line come from the event and agree with the protocol's own names",
        arguments: [
            (WorkoutEvent.setStarted(SetEvent(setNumber: 2, timestamp: 3.5, repCount: 0)), EventKind.set, "set_start"),
            (
                .rep(
                    RepEvent(
                        setNumber: 2, repInSet: 1, totalReps: 7, timestamp: 5.25, duration: 1.5, amplitude: 0.4)),
                .rep, "rep"
            ),
            (.setEnded(SetEvent(setNumber: 2, timestamp: 20, repCount: 8, liveRepCount: 7)), .set, "set_end"),
        ])
    func workout(event: WorkoutEvent, kind: EventKind, type: String) {
        let journaled = JournaledEvent.workout(event, wall: 1_764_000_000.25)
        #expect(journaled.kind == kind)
        #expect(journaled.type == type)
        #expect(journaled.wall == 1_764_000_000.25)
        // The lines as docs/PROTOCOL.md describes them (not made by the code under test).
        let expected = [
            "set_start": #"{"type":"set_start","set":2,"t":3.5,"wall":1764000000.25}"#,
            "rep": #"{"type":"rep","set":2,"rep":1,"total":7,"t":5.25,"wall":1764000000.25,"#
                + #""duration":1.5,"amplitude":0.4}"#,
            "set_end": #"{"type":"set_end","set":2,"reps":8,"live_reps":7,"t":20,"wall":1764000000.25}"#,
        ]
        #expect(journaled.line == (expected[type] ?? "none for \(type)") + "\n")
        #expect(journaled.line.hasPrefix("{\"type\":\"\(type)\","))
        #expect(ServerMessage.kind(ofType: journaled.type) == journaled.kind)
    }

    @Test("a sensor change is a sensor event whose line is the sensor message")
    func sensor() {
        let journaled = JournaledEvent.sensor(.sensorLost(reason: "unplugged"), wall: 12.5, timestamps: "device")
        #expect(journaled.kind == .sensor)
        #expect(journaled.type == "sensor")
        #expect(journaled.wall == 12.5)
        #expect(
            journaled.line
                == #"{"type":"sensor","state":"lost","message":"unplugged","timestamps":"device","wall":12.5}"# + "\n")
        #expect(ServerMessage.kind(ofType: journaled.type) == journaled.kind)
    }

    @Test("the journal stores the line without its newline; the journaled line adds id and station at its end")
    func journaledForms() {
        let journaled = JournaledEvent.sensor(.running, wall: 7)
        #expect(journaled.line == "{\"type\":\"sensor\",\"state\":\"connected\",\"wall\":7}\n")
        #expect(journaled.json == "{\"type\":\"sensor\",\"state\":\"connected\",\"wall\":7}")
        #expect(
            journaled.line(id: 42, station: "rack-1")
                == "{\"type\":\"sensor\",\"state\":\"connected\",\"wall\":7,\"id\":42,\"station\":\"rack-1\"}\n")
    }
}
