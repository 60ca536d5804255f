import Foundation
import MotionFixtures
import MotionSimulation
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `date -s` in a real kernel (qemu): a board without a clock of its own (a Raspberry Pi) starts with the time it
/// last saved, here 40 days behind; repd journals a workout dated then, and the clock is set right (a time server
/// answered) while repd runs, with `journal.max_age_days = 30`. Retention runs again at the 1000th event.
@Suite(
    "age retention after the clock was set forward (real kernel, qemu)", .serialized,
    .enabled(if: dummyKernelPrerequisite == nil, Comment(rawValue: dummyKernelPrerequisite ?? "")))
struct ClockSetForwardKernelTests {
    @Test(
        "events repd journaled before the clock was set forward 40 days stay (max_age_days 30), with one warning that says why"
    )
    func workoutBeforeTheClockWasSet() throws {
        let harness = try #require(kernelHarness)
        let dir = Scratch.directory("clock")
        // The harness's /tmp is a tmpfs mounted over what it copies in: the fixture goes to /fixtures. 10 sets of 105
        // reps of 1 s at 12.5 Hz, replayed at 60 times real time (at 100 times the ring dropped samples): more than
        // 1000 events, so retention runs again after the clock was set. The script follows the ids with one repctl
        // subscribe: a repctl status every second took the emulated CPU about 1.5 s each, which repd then lacked.
        var generator = WorkoutGenerator()
        generator.repsPerSet = Array(repeating: 105, count: 10)
        generator.sets = 10
        generator.restSeconds = 10
        generator.leadSeconds = 3
        generator.repPeriod = 1.0
        generator.pauseSeconds = 0.1
        generator.sampleRate = 12.5
        let fixture = dir + "/workout.csv"
        try FixtureFileWriter.write(generator.generate().samples, to: fixture)
        let now = Int(Date().timeIntervalSince1970)
        func utc(_ seconds: Int) -> String {
            var time = time_t(seconds)
            var parts = tm()
            gmtime_r(&time, &parts)
            return String(
                format: "%04d-%02d-%02d %02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                parts.tm_hour, parts.tm_min, parts.tm_sec)
        }
        let script = """
            date -s "\(utc(now - 40 * 86_400))" > /dev/null
            printf '[journal]\\npath = "/tmp/events.db"\\nmax_age_days = 30\\n[socket]\\npath = "/tmp/repd.sock"\\n' > /tmp/repd.toml
            repd --config /tmp/repd.toml --fixture /fixtures/workout.csv --speed 60 > /tmp/repd.out 2> /tmp/repd.err &
            P=$!
            n=0; until [ -S /tmp/repd.sock ]; do sleep 0.2; n=$((n+1)); [ $n -gt 300 ] || ! kill -0 $P && break; done
            repctl subscribe --json --socket /tmp/repd.sock > /tmp/events.jsonl 2> /tmp/subscribe.err &
            S=$!
            newest() { n=$(tail -n 1 /tmp/events.jsonl | sed -n 's/.*"id":\\([0-9]*\\).*/\\1/p'); echo ${n:-0}; }
            n=0; until [ $(newest) -ge 100 ]; do sleep 1; n=$((n+1)); [ $n -gt 120 ] || ! kill -0 $P && break; done
            echo "OLD-CLOCK $(date +%s) $(newest)"
            date -s "\(utc(now))" > /dev/null
            echo "SET $(date +%s) $(newest)"
            n=0; until [ $(newest) -gt 1000 ]; do sleep 1; n=$((n+1)); [ $n -gt 180 ] || ! kill -0 $P && break; done
            echo "PAST-1000 $(newest)"
            repctl status --json --socket /tmp/repd.sock | sed 's/^/STATUS /'
            repctl history --json --socket /tmp/repd.sock --before 2 | sed 's/^/OLDEST /'
            repctl history --json --socket /tmp/repd.sock --last 1 | sed 's/^/NEWEST /'
            kill -TERM $S; wait $S
            kill -TERM $P; wait $P; echo "REPD-EXIT $?"
            sed 's/^/REPD-LOG /' /tmp/repd.err
            """
        let result = try runProgram(
            harness,
            [
                "--quiet", "-t", "330", "-b", productsDirectory + "/repd", "-b", productsDirectory + "/repctl", "-f",
                fixture + ":/fixtures/workout.csv", "-r", script,
            ], timeout: 360)
        let console = String(decoding: result.output, as: UTF8.self) + result.errors
        let lines = console.split(separator: "\n").map { $0.replacingOccurrences(of: "\r", with: "") }
        func tagged(_ tag: String) -> [String] {
            lines.filter { $0.hasPrefix(tag + " ") }.map { String($0.dropFirst(tag.count + 1)) }
        }
        func event(_ tag: String) -> (id: Int, wall: Double)? {
            guard let line = tagged(tag).first,
                let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let id = object["id"] as? Int, let wall = object["wall"] as? Double
            else { return nil }
            return (id, wall)
        }
        #expect(result.status == 0, "\(console.suffix(3000))")
        #expect(tagged("REPD-EXIT") == ["0"], "\(console.suffix(3000))")
        let set = Double(now)
        // The premise: the first events carry the old date (else the test could not tell the two rules apart).
        let oldest = event("OLDEST"), newest = event("NEWEST")
        #expect(oldest.map { $0.wall < set - 39 * 86_400 } == true, "oldest: \(oldest as Any) \(console.suffix(3000))")
        // Nothing this run journaled was deleted: the journal still starts at id 1; its newest are dated today.
        #expect(oldest?.id == 1, "\(tagged("PAST-1000")) \(tagged("STATUS"))")
        #expect(newest.map { $0.id > 1000 && $0.wall > set - 86_400 } == true, "newest: \(newest as Any)")
        let warnings = tagged("REPD-LOG").filter {
            $0.contains("carry a time more than journal.max_age_days ago: the clock was set forward since")
        }
        #expect(warnings.count == 1, "\(tagged("REPD-LOG").suffix(20))")
    }
}
