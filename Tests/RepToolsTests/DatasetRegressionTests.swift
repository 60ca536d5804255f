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

/// The dataset's manifest entries and the folder their files are relative to (the suite runs only when the
/// dataset is beside the checkout).
private func datasetEntries() throws -> (entries: [ManifestEntry], root: String) {
    let manifest = try #require(datasetManifest)
    let text = try String(contentsOfFile: manifest, encoding: .utf8)
    return (try EvaluationManifest.parse(text, file: manifest), (manifest as NSString).deletingLastPathComponent)
}

@Suite(
    "Accuracy on the real recordings",
    .enabled(
        if: datasetManifest != nil,
        "../shared/datasets/reps is not beside this checkout, so real-recording accuracy is not checked"))
struct DatasetRegressionTests {
    /// Floors just under what the default configuration measured when it was chosen (README, "How well it counts"):
    /// a change to the detector that loses accuracy on real motion fails here, not only on sine waves.
    @Test("the default configuration keeps its measured accuracy on every folder")
    func accuracyFloors() throws {
        let (entries, root) = try datasetEntries()
        let report = Evaluator.evaluate(entries, root: root)
        #expect(report.failures.isEmpty, "\(report.failures.map { $0.failure ?? "" })")

        let folders = Dictionary(uniqueKeysWithValues: report.byFolder)
        let clean = report.results.filter { $0.entry.file.hasPrefix("tbe_main/") || $0.entry.file.hasPrefix("cara_clean/") }
        let cleanStatistics = ErrorStatistics(errors: clean.compactMap { r in r.counted.map { $0 - r.entry.trueReps } })
        print("clean sets: n \(cleanStatistics.count), MAE \(cleanStatistics.meanAbsoluteError), ±1 \(cleanStatistics.withinOnePercent) %")
        #expect(cleanStatistics.count == 90)
        #expect(cleanStatistics.withinOnePercent >= 89)
        #expect(cleanStatistics.meanAbsoluteError <= 0.72)
        #expect((folders["tbe_main"]?.withinOnePercent ?? 0) >= 91)
        #expect((folders["cara_clean"]?.withinOnePercent ?? 0) >= 87)
        #expect((folders["cara_mixed"]?.meanAbsoluteError ?? .infinity) <= 3.65)
        for rest in report.results where rest.entry.file.hasPrefix("tbe_rest/") {
            #expect(rest.counted == 0, "\(rest.entry.file) counted \(rest.counted ?? -1) reps at rest")
        }
    }

    /// The README claims the rest recordings count 0 with some margin: settings next to the defaults count 0 there
    /// too, and it is the periodicity check that makes it so (without it the defaults count reps at standing rest).
    @Test("the rest recordings count nothing at settings next to the defaults, thanks to the periodicity check")
    func restMargin() throws {
        let (entries, root) = try datasetEntries()
        let rest = entries.filter { $0.file.hasPrefix("tbe_rest/") }
        #expect(rest.count == 2)
        var neighbours: [(String, RepDetectorConfiguration)] = []
        for (name, path, values) in [
            ("sensitivity", \RepDetectorConfiguration.sensitivity, [0.8, 1.0]),
            ("rhythmTolerance", \.rhythmTolerance, [1.3, 1.5]), ("maximumPauseFactor", \.maximumPauseFactor, [1.6, 2.0]),
            ("minimumPeriodicity", \.minimumPeriodicity, [0.5]),
        ] as [(String, WritableKeyPath<RepDetectorConfiguration, Double>, [Double])] {
            for value in values {
                var configuration = RepDetectorConfiguration()
                configuration[keyPath: path] = value
                neighbours.append(("\(name) = \(value)", configuration))
            }
        }
        for (name, configuration) in neighbours {
            let report = Evaluator.evaluate(rest, root: root, configuration: configuration)
            #expect(report.results.map(\.counted) == [0, 0], "\(name)")
        }
        var unchecked = RepDetectorConfiguration()
        unchecked.minimumPeriodicity = 0
        let report = Evaluator.evaluate(rest, root: root, configuration: unchecked)
        #expect(report.results.compactMap(\.counted).reduce(0, +) > 0, "without the check, rest counts reps")
    }
}
