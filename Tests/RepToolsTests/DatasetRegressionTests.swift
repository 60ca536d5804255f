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

@Suite("Accuracy on the real recordings (when ../shared/datasets/reps is present)")
struct DatasetRegressionTests {
    /// Floors just under what the default configuration measured when it was chosen (README, "How well it counts"):
    /// a change to the detector that loses accuracy on real motion fails here, not only on sine waves.
    @Test("the default configuration keeps its measured accuracy on every folder")
    func accuracyFloors() throws {
        guard let manifest = datasetManifest else {
            print("skipped: ../shared/datasets/reps is not beside this checkout, so real-recording accuracy is not checked")
            return
        }
        let text = try String(contentsOfFile: manifest, encoding: .utf8)
        let entries = try EvaluationManifest.parse(text, file: manifest)
        let report = Evaluator.evaluate(entries, root: (manifest as NSString).deletingLastPathComponent)
        #expect(report.failures.isEmpty, "\(report.failures.map { $0.failure ?? "" })")

        let folders = Dictionary(uniqueKeysWithValues: report.byFolder)
        let clean = report.results.filter { $0.entry.file.hasPrefix("tbe_main/") || $0.entry.file.hasPrefix("cara_clean/") }
        let cleanStatistics = ErrorStatistics(errors: clean.compactMap { r in r.counted.map { $0 - r.entry.trueReps } })
        print("clean sets: n \(cleanStatistics.count), MAE \(cleanStatistics.meanAbsoluteError), ±1 \(cleanStatistics.withinOnePercent) %")
        #expect(cleanStatistics.count == 90)
        #expect(cleanStatistics.withinOnePercent >= 89)
        #expect(cleanStatistics.meanAbsoluteError <= 0.75)
        #expect((folders["tbe_main"]?.withinOnePercent ?? 0) >= 91)
        #expect((folders["cara_clean"]?.withinOnePercent ?? 0) >= 87)
        #expect((folders["cara_mixed"]?.meanAbsoluteError ?? .infinity) <= 3.8)
        for rest in report.results where rest.entry.file.hasPrefix("tbe_rest/") {
            #expect(rest.counted == 0, "\(rest.entry.file) counted \(rest.counted ?? -1) reps at rest")
        }
    }
}
