import Foundation
import RepDetection
import RepTools
import Testing

/// ../shared/datasets/reps/manifest.csv beside the checkout, if present. The recordings are evaluation data that
/// may not be redistributed: they are read in place, never copied into the project.
private let datasetManifest: String? = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        for base in [url, url.deletingLastPathComponent()] {
            let candidate = base.appendingPathComponent("shared/datasets/reps/manifest.csv").path
            if FileManager.default.fileExists(atPath: candidate) { return candidate }
        }
    }
    return nil
}()

/// The manifest's entries and the folder their files are relative to.
private func entries(_ manifest: String) throws -> (entries: [ManifestEntry], root: String) {
    let text = try String(contentsOfFile: manifest, encoding: .utf8)
    return (try EvaluationManifest.parse(text, file: manifest), (manifest as NSString).deletingLastPathComponent)
}

@Suite(
    "Accuracy on the real recordings",
    .enabled(
        if: datasetManifest != nil,
        "../shared/datasets/reps is not beside this checkout: real-recording accuracy is not checked"))
struct DatasetRegressionTests {
    /// Floors just under what the default configuration measured when it was chosen (README, "How well it counts"):
    /// a change to the detector that loses accuracy on real motion fails here, not only on generated motion.
    @Test("the default configuration keeps its measured accuracy on every folder")
    func accuracyFloors() throws {
        let (list, root) = try entries(try #require(datasetManifest))
        let report = Evaluator.evaluate(list, root: root)
        #expect(report.failures.isEmpty, "\(report.failures.map { $0.failure ?? "" })")

        let folders = Dictionary(uniqueKeysWithValues: report.byFolder)
        let clean = report.results.filter {
            $0.entry.file.hasPrefix("tbe_main/") || $0.entry.file.hasPrefix("cara_clean/")
        }
        let cleanStatistics = ErrorStatistics(errors: clean.compactMap { r in r.counted.map { $0 - r.entry.trueReps } })
        print(
            "clean sets: n \(cleanStatistics.count), MAE \(cleanStatistics.meanAbsoluteError), ±1 \(cleanStatistics.withinOnePercent) %"
        )
        #expect(cleanStatistics.count == 90)
        // Measured with the defaults (2026-12-07, forty-third session, after "A jump rope's rhythm passes"; `repctl
        // eval`): clean sets 91 % within ±1, MAE 0.63; tbe_main 92 %, MAE 0.42; cara_clean 90 %, MAE 0.88; mixed MAE
        // 3.09. The floors sit just under them (the issue's goals are above: clean ±1 93 %, MAE 0.6; mixed 3.5).
        #expect(cleanStatistics.withinOnePercent >= 90)
        #expect(cleanStatistics.meanAbsoluteError <= 0.7)
        #expect((folders["tbe_main"]?.withinOnePercent ?? 0) >= 88)
        #expect((folders["tbe_main"]?.meanAbsoluteError ?? .infinity) <= 0.47)
        #expect((folders["cara_clean"]?.withinOnePercent ?? 0) >= 88)
        #expect((folders["cara_mixed"]?.meanAbsoluteError ?? .infinity) <= 3.2)
        let sitting = report.results.first {
            $0.entry.file.hasPrefix("tbe_rest/") && $0.entry.exercise == "rest_sitting"
        }
        #expect(sitting?.counted == 0, "sitting at rest counts nothing")
    }

    /// Real walking (manifest-more.csv) must count nothing: the walking check is what makes most of it so.
    @Test("every real walk counts nothing, and without the walking check and the exercise gate most of them count")
    func walking() throws {
        let manifest = (try #require(datasetManifest) as NSString).deletingLastPathComponent + "/manifest-more.csv"
        let (list, root) = try entries(manifest)
        let walks = list.filter { $0.exercise == "walking" }
        #expect(walks.count == 22)
        let counted = Evaluator.evaluate(walks, root: root).results.compactMap(\.counted)
        print("walking: \(counted.filter { $0 == 0 }.count) of \(counted.count) count 0: \(counted)")
        #expect(counted.count == 22 && counted.allSatisfy { $0 == 0 }, "\(counted)")  // 18 of 22 with the gate off
        var unchecked = RepDetectorConfiguration()
        unchecked.maximumWalkingLikeness = 2
        unchecked.minimumExerciseLikelihood = 0
        let without = Evaluator.evaluate(walks, root: root, configuration: unchecked).results.compactMap(\.counted)
        #expect(without.filter { $0 == 0 }.count <= 10, "without the check most walks count reps: \(without)")
    }

    /// WISDM's smartwatch recordings of 26 people walking, jogging, on stairs, sitting, standing and kicking a ball
    /// (Weiss 2019, UCI 507, CC BY 4.0; ../shared/datasets/wisdm-watch, read in place): every one is true 0.
    @Test(
        "with the defaults (the exercise gate on), WISDM's everyday activity counts 0 in at least 95 % of recordings and at most 10 false reps an hour",
        .enabled(if: wisdmManifest != nil, "../shared/datasets/wisdm-watch is not beside this checkout"))
    func everydayActivityWithTheGate() throws {
        let (list, root) = try entries(try #require(wisdmManifest))
        #expect(list.count == 155)
        let on = Evaluator.evaluate(list, root: root)
        let all = try #require(on.falseCounts.last?.1)
        print("WISDM with the defaults: \(all.zeroPercent) % count 0, \(all.falseRepsPerHour) false reps/h")
        // Measured with the defaults (the tree trained on these people too; 2026-12-06): 97 % and 5 per hour; held
        // out (each person scored by a tree trained without them, docs/gate-training.txt): 97 % and 6 over all true-0
        // recordings; gate off: 31 %, 1240. The floors sit just under them (the issue's goal: 90 %, 20).
        #expect(all.zeroPercent >= 95)
        #expect(all.falseRepsPerHour <= 10)
    }
}

/// ../shared/datasets/wisdm-watch/manifest.csv, beside the reps manifest.
private let wisdmManifest: String? = datasetManifest.flatMap { reps in
    let path =
        ((reps as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        + "/wisdm-watch/manifest.csv"
    return FileManager.default.fileExists(atPath: path) ? path : nil
}
