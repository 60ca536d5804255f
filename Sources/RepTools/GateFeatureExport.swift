import MotionCore
import MotionFixtures
import PlainText
import RepDetection
import RepProtocol

/// The exercise gate's training material: every moment the gate judged in every recording of a manifest, with the
/// recording's labels (`scripts/train-gate` reads it; `repctl eval --features FILE`).
public enum GateFeatureExport {
    /// The CSV header: the recording, then the moment (its time, whether a set was open, the gate's probability),
    /// then the features in `ExerciseGateFeatures.names` order.
    public static var header: String {
        (["file", "exercise", "participant", "true_reps", "t", "in_set", "likelihood"] + ExerciseGateFeatures.names)
            .joined(separator: ",")
    }

    /// The rows of one recording: one per gate judgement (every fourth grid point while the motion is periodic).
    public static func rows(
        entry: ManifestEntry, samples: [MotionSample], configuration: RepDetectorConfiguration
    ) -> [String] {
        // The gate measures only while it is on: with it off, an open gate (whose tree lets everything through)
        // measures the same features. The detector is then not quite gate-less: the walking rule still looks at the
        // judgements, and the hand rules still refuse (gait's signature, the arm swings, a slow stride's bounce, motion
        // too small for its pace), so `in_set` can differ from a gate-off run's.
        var configuration = configuration
        if configuration.minimumExerciseLikelihood == 0 {
            configuration.exerciseGate = .open
            configuration.minimumExerciseLikelihood = 0.5
        }
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var rows: [String] = []
        var last: ExerciseGateFeatures?
        let prefix = "\(entry.file),\(entry.exercise),\(entry.participant),\(entry.trueReps),"
        for sample in samples {
            let before = detector.gridPoints
            detector.process(sample, into: &events)
            guard detector.gridPoints != before, let features = detector.gateFeatures, features != last else {
                continue
            }
            last = features
            var cells = [
                format(sample.timestamp, decimals: 2), detector.inSet ? "1" : "0",
                format(detector.exerciseLikelihood ?? 0, decimals: 4),
            ]
            cells += features.values.map { format($0, decimals: 5) }
            rows.append(prefix + cells.joined(separator: ","))
        }
        return rows
    }
}

/// Reads a gate model written by `scripts/train-gate`: lines `feature …`, `threshold …`, `left …`, `right …`,
/// `score …` (numbers separated by spaces, one per node), `roots …` (each tree's first node) and `offset X` (the
/// prior log-odds), for cross-validation: `repctl eval --gate FILE`. Lines starting with `#` are comments.
public enum GateModelFile {
    /// Parses the text; errors name the line.
    public static func parse(_ text: String, file: String) throws(ManifestError) -> ExerciseGateModel {
        var values: [String: [Double]] = [:]
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = line.split(separator: " ")
            guard let key = words.first, !key.hasPrefix("#") else { continue }
            var numbers: [Double] = []
            for word in words.dropFirst() {
                guard let number = parseDecimal(word) else {
                    throw ManifestError(file: file, line: offset + 1, reason: "'\(word)' is not a number")
                }
                numbers.append(number)
            }
            values[String(key)] = numbers
        }
        for key in ["feature", "threshold", "left", "right", "score", "roots", "offset"] where values[key] == nil {
            throw ManifestError(file: file, line: 0, reason: "the line '\(key) …' is missing")
        }
        guard values["offset"]!.count == 1 else {
            throw ManifestError(file: file, line: 0, reason: "the line 'offset …' must hold one number")
        }
        func indices(_ key: String) throws(ManifestError) -> [Int] {
            var result: [Int] = []
            for value in values[key]! {
                guard let index = Int(exactly: value) else {
                    throw ManifestError(file: file, line: 0, reason: "'\(key)' holds \(value), not a whole number")
                }
                result.append(index)
            }
            return result
        }
        let model = ExerciseGateModel(
            feature: try indices("feature"), threshold: values["threshold"]!, left: try indices("left"),
            right: try indices("right"), score: values["score"]!, roots: try indices("roots"),
            offset: values["offset"]![0])
        guard model.isValid else {
            throw ManifestError(
                file: file, line: 0, reason: "not a valid model (lengths, roots, children, features or scores)")
        }
        return model
    }
}
