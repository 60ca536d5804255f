import Foundation
import MotionCore
import MotionFixtures
import MotionSimulation
import RepDetection
import RepProtocol
import RepTools
import TestScratch
import Testing

private func makeDirectory() -> String {
    Scratch.directory("eval")
}

@Suite("repctl eval")
struct EvaluationTests {
    @Test("a manifest lacking a required column is refused, naming it")
    func missingColumn() {
        #expect(throws: ManifestError(file: "m.csv", line: 1, reason: "the header lacks column 'true_reps'")) {
            try EvaluationManifest.parse("file,exercise,participant\na.csv,squat,p1\n", file: "m.csv")
        }
    }

    @Test("a byte order mark before the manifest's header is skipped")
    func byteOrderMark() throws {
        let entries = try EvaluationManifest.parse(
            "\u{FEFF}file,exercise,participant,true_reps\na.csv,squat,p1,5\n", file: "m.csv")
        #expect(entries.map(\.file) == ["a.csv"])
    }

    @Test("a manifest that is not UTF-8 (a Latin-1 byte) is refused with its file and line, not decoded as U+FFFD")
    func notUTF8() throws {
        let bytes =
            Array("file,exercise,participant,true_reps\na.csv,squat,p1,5\nb.csv,sin".utf8) + [0xE9]
            + Array(",p1,5\n".utf8)
        #expect(throws: ManifestError(file: "m.csv", line: 3, reason: "not valid UTF-8 text (manifests are UTF-8)")) {
            try EvaluationManifest.parse(bytes: bytes, file: "m.csv")
        }
        let valid = try EvaluationManifest.parse(
            bytes: Array("file,exercise,participant,true_reps\na.csv,sinké,p1,5\n".utf8), file: "m.csv")
        #expect(valid.map(\.exercise) == ["sinké"])
    }

    @Test(
        "sets are grouped by their folder as the manifest writes it (an absolute one too), with the same names in the table as in --json's by_folder"
    )
    func foldersAsWritten() throws {
        let files = [
            "a.csv", "./b.csv", "sets/c.csv", "sets//d.csv", "deep/p1/e.csv", "/tmp/review/ev/s10.csv", "/f.csv",
        ]
        let manifest = "file,exercise,participant,true_reps\n" + files.map { "\($0),squat,p1,5\n" }.joined()
        let report = Evaluator.evaluate(try EvaluationManifest.parse(manifest, file: "m.csv"), root: makeDirectory())
        let folders = [".", "/", "/tmp/review/ev", "deep/p1", "sets"]
        #expect(report.byFolder.map { $0.0 } == folders)
        #expect(report.byFolder.map { $0.1.count } == [0, 0, 0, 0, 0], "every file is missing: none evaluated")
        let json = try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as! [String: Any]
        let byFolder = json["by_folder"] as! [String: Any]
        #expect(Set(byFolder.keys) == Set(folders))
        let names = report.table.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first.map { String($0) }
        }
        for folder in folders { #expect(names.contains(folder), "\(folder) in the table:\n\(report.table)") }
        #expect(!names.contains("tmp/") && !names.contains("./"), "\(report.table)")
    }

    @Test("a bad true_reps value is refused with its line")
    func badTrueReps() {
        let text = "file,exercise,participant,true_reps\na.csv,squat,p1,5\nb.csv,squat,p1,five\n"
        #expect(throws: ManifestError(file: "m.csv", line: 3, reason: "true_reps: 'five' is not a whole number ≥ 0")) {
            try EvaluationManifest.parse(text, file: "m.csv")
        }
    }

    @Test("a true_reps beyond 100000 is refused with its line and field (9223372036854775807 trapped eval)")
    func hugeTrueReps() throws {
        let text = "file,exercise,participant,true_reps\na.csv,squat,p1,100000\nb.csv,squat,p1,9223372036854775807\n"
        #expect(
            throws: ManifestError(
                file: "m.csv", line: 3,
                reason: "true_reps: '9223372036854775807' is beyond 100000 reps (no set holds that many)")
        ) {
            try EvaluationManifest.parse(text, file: "m.csv")
        }
        let entries = try EvaluationManifest.parse(
            "file,exercise,participant,true_reps\na.csv,squat,p1,100000\n", file: "m.csv")
        #expect(entries.map(\.trueReps) == [100_000])
    }

    @Test("error statistics of errors whose sum or magnitude overflows an Int are computed, not trapped")
    func statisticsDoNotOverflow() {
        let statistics = ErrorStatistics(errors: [Int.min, Int.min, Int.max, Int.max, 0])
        #expect(statistics.count == 5)
        #expect(statistics.meanAbsoluteError > 7e18)
        #expect(abs(statistics.bias) < 1e3)
        #expect(statistics.exactPercent == 20)
        #expect(statistics.withinOnePercent == 20)
    }

    @Test("missing and malformed sets are listed as failed with their reason; the others are evaluated")
    func failuresDoNotStopTheRest() throws {
        let dir = makeDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/sets", withIntermediateDirectories: true)
        let sine = SineMotion(frequency: 1, amplitude: 0.4, direction: .x)
        try FixtureFileWriter.write(
            SignalGenerator.repetitions(count: 8, of: sine, noise: 0.005), to: dir + "/sets/a.csv")
        try FixtureFileWriter.write(
            SignalGenerator.repetitions(count: 5, of: sine, noise: 0.005), to: dir + "/sets/b.csv")
        try "t,ax,ay,az\n0,0,0,1\n0.1,zero,0,1\n".write(
            toFile: dir + "/sets/bad.csv", atomically: true, encoding: .utf8)
        let manifest = """
            file,exercise,participant,true_reps,sample_rate_hz,duration_s,source
            sets/a.csv,squat,p1,8,50,16,generated
            sets/b.csv,press,p1,6,50,11,generated
            sets/missing.csv,squat,p2,5,50,10,generated
            sets/bad.csv,press,p2,5,50,10,generated
            """
        let entries = try EvaluationManifest.parse(manifest, file: "manifest.csv")
        let report = Evaluator.evaluate(entries, root: dir)
        #expect(report.results.map(\.counted) == [8, 5, nil, nil])
        #expect(report.failures.count == 2)
        #expect(report.failures[0].failure?.contains("cannot open") == true)
        #expect(report.failures[1].failure?.contains("bad.csv:3: ax: 'zero' is not a number") == true)
        let overall = report.overall
        #expect(overall.count == 2)
        #expect(overall.meanAbsoluteError == 0.5)
        #expect(overall.bias == -0.5)
        #expect(overall.exactPercent == 50)
        #expect(overall.withinOnePercent == 100)

        let json = try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as! [String: Any]
        let overallJSON = json["overall"] as! [String: Any]
        #expect(overallJSON["n"] as? Int == 2)
        #expect(overallJSON["mae"] as? Double == 0.5)
        #expect(
            Set((overallJSON as NSDictionary).allKeys as! [String]) == ["n", "mae", "bias", "exact_pct", "within1_pct"])
        let byExercise = json["by_exercise"] as! [String: [String: Any]]
        #expect(Set(byExercise.keys) == ["press", "squat"])
        let sets = json["sets"] as! [[String: Any]]
        #expect(sets.count == 4)
        #expect(sets[0]["counted"] as? Int == 8)
        #expect(sets[2]["counted"] is NSNull)
        #expect((sets[2]["error"] as? String)?.contains("missing.csv") == true)
    }

    @Test(
        "the replay goes through the fixture provider in batches and counts the same at any batch size",
        arguments: [1, 10, 64])
    func countRepsThroughProvider(batch: Int) {
        let workout = WorkoutGenerator.demo.generate()
        let counted = Evaluator.countReps(in: workout.samples, batchSize: batch)
        #expect(counted == workout.totalReps)
    }

    @Test("recordings without exercise report the share counting 0 and sending no rep live, and both per hour")
    func falseCountsFinalAndLive() {
        // Three recordings of 30 min: counted 0 and sent 0; counted 0 but sent 4 (taken back); counted 2, sent 3.
        let stats = FalseCountStatistics([(0, 0, 1800), (0, 4, 1800), (2, 3, 1800)])
        #expect(stats.count == 3)
        #expect(abs(stats.zeroPercent - 200.0 / 3) < 1e-9)
        #expect(abs(stats.liveZeroPercent - 100.0 / 3) < 1e-9)
        #expect(abs(stats.falseRepsPerHour - 2.0 / 1.5) < 1e-9)
        #expect(abs(stats.liveFalseRepsPerHour - 7.0 / 1.5) < 1e-9)
    }

    @Test(
        "the replay tallies the rep events sent live: a generated workout sends one per rep, each after its rep's end, later with larger batches",
        arguments: [1, 64])
    func liveRepsOfAReplay(batch: Int) {
        let workout = WorkoutGenerator.demo.generate()
        let replayed = Evaluator.replay(workout.samples, batchSize: batch)
        #expect(replayed.counted == workout.totalReps)
        #expect(replayed.live.events == workout.totalReps)
        #expect(replayed.live.meanDelay > 0 && replayed.live.maximumDelay >= replayed.live.meanDelay)
        #expect(replayed.live.maximumDelay < 30, "the first reps of a set come when it is established")
        if batch == 64 {
            let single = Evaluator.replay(workout.samples, batchSize: 1)
            #expect(replayed.live.meanDelay > single.live.meanDelay)
        }
    }
}

@Suite("JSON and number formatting")
struct JSONWriterTests {
    @Test("strings are escaped and numbers read back as they were")
    func escaping() throws {
        let value = JSONWriter.Value.object([
            ("s", .string("a\"b\\c\n\u{1}é")), ("n", .number(0.1)), ("i", .integer(-3)), ("nan", .number(.nan)),
            ("a", .array([.bool(true), .null])),
        ])
        let parsed = try JSONSerialization.jsonObject(with: Data(value.text.utf8)) as! [String: Any]
        #expect(parsed["s"] as? String == "a\"b\\c\n\u{1}é")
        #expect(parsed["n"] as? Double == 0.1)
        #expect(parsed["i"] as? Int == -3)
        #expect(parsed["nan"] is NSNull)
    }

    @Test(
        "fixed decimals",
        arguments: [(3.14159, 2, "3.14"), (-0.004, 2, "0.00"), (-1.5, 0, "-2"), (2.0, 1, "2.0"), (0.999, 2, "1.00")])
    func decimals(value: Double, decimals: Int, text: String) {
        #expect(format(value, decimals: decimals) == text)
    }
}

@Suite("repctl plot")
struct DetectorPlotTests {
    @Test("the picture is SVG with the count in its title and one marker per rep")
    func svg() {
        let samples = SignalGenerator.makeSamples(repCount: 7)
        let (svg, events) = DetectorPlot.render(samples: samples, title: "seven", trueReps: 7)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.contains("seven — counted 7 reps (true 7)"))
        #expect(svg.components(separatedBy: "stroke=\"#e377c2\"").count - 1 == 7)
        #expect(events.count == 9)  // set started, 7 reps, set ended
    }

    @Test("the plot shows the tracked period, the periodicity, the match inside the set and each matched cycle")
    func plotShowsTracking() {
        let sine = SineMotion(frequency: 0.8, amplitude: 0.3, direction: .y, gravity: .z)
        let samples = SignalGenerator.repetitions(count: 8, of: sine, noise: 0.005)
        let (svg, events) = DetectorPlot.render(samples: samples, title: "eight")
        let repsDrawn = svg.components(separatedBy: "stroke=\"#e377c2\"").count - 1
        let repEvents = events.filter { if case .rep = $0 { true } else { false } }.count
        #expect(repsDrawn == repEvents && repEvents >= 7, "\(repsDrawn) lines, \(repEvents) reps")
        #expect(svg.contains("stroke=\"#ff7f0e\""), "the period line")
        #expect(svg.contains("stroke=\"#9467bd\""), "the match line")
        #expect(svg.contains("stroke-dasharray"), "the thresholds")
    }
}
