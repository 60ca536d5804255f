/// Why a fixture file could not be read or written, with the file and line where it happened.
public struct FixtureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The file could not be opened, read or written (the system's message).
        case io(String)
        /// The file has no content at all.
        case emptyFile
        /// The first line is not a header; `found` is what stood there.
        case missingHeader(found: String)
        /// The header names a column that is not one of `t`, `ax`, `ay`, `az`.
        case unknownColumn(String)
        /// The header names a column twice.
        case duplicateColumn(String)
        /// The header lacks a required column.
        case missingColumn(String)
        /// A row has more or fewer fields than the header.
        case wrongFieldCount(expected: Int, found: Int)
        /// A field is not a number.
        case notANumber(column: String, text: String)
        /// A field is NaN or infinite.
        case notFinite(column: String, text: String)
        /// A field is finite but beyond what a sample may carry (`MotionSample.timestampLimit`, `accelerationLimit`).
        case outOfRange(column: String, text: String)
        /// A row's time is earlier than the row before it.
        case timeWentBackwards(previous: Double, found: Double)
        /// The header is there, but no data row follows.
        case noSamples
        /// A line is longer than `limit` bytes (`FixtureCSVParser.maximumLineLength`): not a recording.
        case lineTooLong(limit: Int)

        /// What is wrong, in a sentence without the file and line.
        public var description: String {
            switch self {
            case .io(let message): message
            case .emptyFile: "the file is empty (expected the header t,ax,ay,az and data rows)"
            case .missingHeader(let found): "expected the header t,ax,ay,az, found '\(found)'"
            case .unknownColumn(let name): "unknown column '\(name)' (columns are t, ax, ay, az)"
            case .duplicateColumn(let name): "column '\(name)' appears twice in the header"
            case .missingColumn(let name): "the header lacks column '\(name)'"
            case .wrongFieldCount(let expected, let found): "expected \(expected) fields, found \(found)"
            case .notANumber(let column, let text): "\(column): '\(text)' is not a number"
            case .notFinite(let column, let text): "\(column): '\(text)' is not finite (NaN and infinity are refused)"
            case .outOfRange(let column, let text) where column == "t":
                "t: '\(text)' is beyond ±10¹² s (31 700 years): times are in seconds (nanoseconds or microseconds?)"
            case .outOfRange(let column, let text):
                "\(column): '\(text)' is beyond ±1000 g: accelerations are in g (1 g = 9.80665 m/s²)"
            case .timeWentBackwards(let previous, let found): "time goes backwards: t=\(found) after t=\(previous)"
            case .noSamples: "no data rows after the header"
            case .lineTooLong(let limit):
                "the line is longer than \(limit) bytes: not a recording? (a row t,ax,ay,az is under 100 bytes)"
            }
        }
    }

    /// The file's path as given (or a name for in-memory input).
    public var file: String
    /// 1-based line number; 0 when the error concerns the whole file.
    public var line: Int
    /// What was wrong.
    public var reason: Reason

    /// Creates an error at `file:line`.
    public init(file: String, line: Int, reason: Reason) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    /// `file:line: reason`, or `file: reason` when the error concerns the whole file.
    public var description: String { line > 0 ? "\(file):\(line): \(reason)" : "\(file): \(reason)" }
}
