import PlainText

/// One recorded set to evaluate: a fixture file and its true rep count.
public struct ManifestEntry: Sendable, Equatable {
    /// The fixture path, relative to the manifest's folder.
    public var file: String
    /// The exercise's name (the grouping of the report).
    public var exercise: String
    /// Who performed it.
    public var participant: String
    /// The true number of reps.
    public var trueReps: Int
    /// The 1-based line of the manifest this entry came from.
    public var line: Int
}

/// Why a manifest could not be read.
public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manifest's path.
    public var file: String
    /// 1-based line (0 for the whole file).
    public var line: Int
    /// What was wrong.
    public var reason: String

    /// Creates the error at `file:line`.
    public init(file: String, line: Int, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    /// `file:line: reason`, or `file: reason` when the error concerns the whole file.
    public var description: String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }
}

/// Reads evaluation manifests: CSV with the columns
/// `file,exercise,participant,true_reps,sample_rate_hz,duration_s,source` (any order; extra columns ignored).
public enum EvaluationManifest {
    /// The columns a manifest must have.
    public static let requiredColumns = ["file", "exercise", "participant", "true_reps"]

    /// The largest true rep count a manifest may give a set: far beyond any real set, far below where its sums
    /// could overflow.
    public static let maximumTrueReps = 100_000

    /// Parses a manifest file's bytes: they must be UTF-8 (the first byte that is not is reported with its line, as
    /// the configuration's reader does), then as `parse(_:file:)`.
    public static func parse(bytes: [UInt8], file: String) throws(ManifestError) -> [ManifestEntry] {
        switch TextFile.utf8Text(bytes) {
        case .success(let text): return try parse(text, file: file)
        case .failure(let invalid):
            throw ManifestError(file: file, line: invalid.line, reason: "not valid UTF-8 text (manifests are UTF-8)")
        }
    }

    /// Parses manifest text; errors name `file` and the line.
    public static func parse(_ text: String, file: String) throws(ManifestError) -> [ManifestEntry] {
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        if lines.last == "" { lines.removeLast() }
        guard var header = lines.first else { throw ManifestError(file: file, line: 0, reason: "the file is empty") }
        if header.hasPrefix("\u{FEFF}") { header.removeFirst() }  // a spreadsheet's "CSV UTF-8" byte order mark
        let names = fields(header)
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() { index[name] = position }
        for column in requiredColumns where index[column] == nil {
            throw ManifestError(file: file, line: 1, reason: "the header lacks column '\(column)'")
        }
        var entries: [ManifestEntry] = []
        for (offset, line) in lines.enumerated().dropFirst() {
            let lineNumber = offset + 1
            if line.allSatisfy({ $0 == " " || $0 == "\r" }) { continue }
            let values = fields(line)
            guard values.count == names.count else {
                throw ManifestError(
                    file: file, line: lineNumber, reason: "expected \(names.count) fields, found \(values.count)")
            }
            let repsText = values[index["true_reps"]!]
            guard let reps = Int(repsText), reps >= 0 else {
                throw ManifestError(
                    file: file, line: lineNumber, reason: "true_reps: '\(repsText)' is not a whole number ≥ 0")
            }
            guard reps <= maximumTrueReps else {
                throw ManifestError(
                    file: file, line: lineNumber,
                    reason: "true_reps: '\(repsText)' is beyond \(maximumTrueReps) reps (no set holds that many)")
            }
            let path = values[index["file"]!]
            guard !path.isEmpty else { throw ManifestError(file: file, line: lineNumber, reason: "file is empty") }
            entries.append(
                ManifestEntry(
                    file: path, exercise: values[index["exercise"]!], participant: values[index["participant"]!],
                    trueReps: reps, line: lineNumber))
        }
        return entries
    }

    private static func fields(_ line: String) -> [String] {
        line.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimming { $0 == " " || $0 == "\r" || $0 == "\t" }
        }
    }
}
