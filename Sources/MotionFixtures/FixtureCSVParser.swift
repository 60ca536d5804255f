import MotionCore
import PlainText

/// Parses the fixture CSV format one line at a time: a header naming `t`, `ax`, `ay`, `az` (any order), then one
/// sample per row, in seconds and g. Blank lines are skipped; a trailing `\r` (CRLF files), spaces around fields and
/// a UTF-8 byte order mark before the header (spreadsheets' "CSV UTF-8") are ignored. Times beyond ±10¹² s and
/// accelerations beyond ±1000 g are refused (`MotionSample.isPlausible`): such a file is in other units.
///
/// Each line is checked as it arrives, so a file is streamed, and the first bad line ends the parse with its line
/// number and the reason. A line longer than `maximumLineLength` is refused before it is looked at (a row is under
/// 100 bytes), and the text an error quotes is at most `quotedLength` characters, control characters written out.
public struct FixtureCSVParser: Sendable {
    /// The column names a fixture has.
    public static let columns = ["t", "ax", "ay", "az"]

    /// The longest line read, in bytes without its `\n` (64 KiB): a header or a row is under 100 bytes, so a
    /// longer line is not a recording's (a binary file, a file of NULs), and reading on would hold all of it.
    public static let maximumLineLength = 1 << 16
    /// The most characters of a field or line an error quotes.
    public static let quotedLength = 40

    /// The name used in errors.
    public let file: String
    /// Lines consumed so far (the 1-based number of the last one).
    public private(set) var lineNumber = 0
    /// Samples produced so far.
    public private(set) var sampleCount = 0

    /// For each field position, which sample component it holds (0 = t, 1 = ax, 2 = ay, 3 = az).
    private var fieldOrder: [Int] = []
    private var previousTime = -Double.infinity

    /// Creates a parser whose errors name `file`.
    public init(file: String) { self.file = file }

    /// Consumes one line (without its `\n`) and returns the sample on it, or nil for the header and blank lines.
    public mutating func consume(line raw: UnsafeRawBufferPointer) throws(FixtureError) -> MotionSample? {
        lineNumber += 1
        guard raw.count <= Self.maximumLineLength else { throw error(.lineTooLong(limit: Self.maximumLineLength)) }
        var line = Self.trimmed(raw)
        if lineNumber == 1, line.starts(with: [0xEF, 0xBB, 0xBF]) {
            line = Self.trimmed(UnsafeRawBufferPointer(rebasing: line[3...]))
        }
        if line.isEmpty { return nil }
        if fieldOrder.isEmpty { try parseHeader(line); return nil }

        var values = (0.0, 0.0, 0.0, 0.0)
        var field = 0
        var start = 0
        var index = 0
        while index <= line.count {
            if index == line.count || line[index] == UInt8(ascii: ",") {
                guard field < fieldOrder.count else {
                    throw error(.wrongFieldCount(expected: fieldOrder.count, found: Self.fieldCount(line)))
                }
                let text = Self.trimmed(UnsafeRawBufferPointer(rebasing: line[start..<index]))
                let column = fieldOrder[field]
                guard let value = DecimalParser.parse(text) else {
                    throw error(.notANumber(column: Self.columns[column], text: Self.quoted(text)))
                }
                guard value.isFinite else {
                    throw error(.notFinite(column: Self.columns[column], text: Self.quoted(text)))
                }
                guard abs(value) <= (column == 0 ? MotionSample.timestampLimit : MotionSample.accelerationLimit) else {
                    throw error(.outOfRange(column: Self.columns[column], text: Self.quoted(text)))
                }
                switch column {
                case 0: values.0 = value
                case 1: values.1 = value
                case 2: values.2 = value
                default: values.3 = value
                }
                field += 1
                start = index + 1
            }
            index += 1
        }
        guard field == fieldOrder.count else {
            throw error(.wrongFieldCount(expected: fieldOrder.count, found: field))
        }
        guard values.0 >= previousTime else {
            throw error(.timeWentBackwards(previous: previousTime, found: values.0))
        }
        previousTime = values.0
        sampleCount += 1
        return MotionSample(timestamp: values.0, ax: values.1, ay: values.2, az: values.3)
    }

    /// Consumes one line given as a string (convenience for tests and small inputs).
    public mutating func consume(line: String) throws(FixtureError) -> MotionSample? {
        var copy = line
        return try copy.withUTF8 { bytes in
            Result { () throws(FixtureError) in try consume(line: UnsafeRawBufferPointer(bytes)) }
        }.get()
    }

    /// The error for the line after the last one consumed when it is longer than `maximumLineLength`: a reader that
    /// holds that much of a line without its end stops there.
    public func lineTooLong() -> FixtureError {
        FixtureError(file: file, line: lineNumber + 1, reason: .lineTooLong(limit: Self.maximumLineLength))
    }

    /// Checks the end of input: a file must have a header and at least one sample.
    public func finish() throws(FixtureError) {
        if lineNumber == 0 || (fieldOrder.isEmpty && sampleCount == 0) {
            throw FixtureError(file: file, line: 0, reason: .emptyFile)
        }
        if sampleCount == 0 { throw FixtureError(file: file, line: lineNumber, reason: .noSamples) }
    }

    private mutating func parseHeader(_ line: UnsafeRawBufferPointer) throws(FixtureError) {
        let names = line.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
            String(decoding: Self.trimmed(UnsafeRawBufferPointer(rebasing: $0)), as: UTF8.self).lowercased()
        }
        if let first = names.first, first.first.map({ $0.isNumber || $0 == "-" || $0 == "." }) == true {
            throw error(.missingHeader(found: Self.quoted(line)))
        }
        var order: [Int] = []
        for name in names {
            guard let column = Self.columns.firstIndex(of: name) else {
                throw error(.unknownColumn(LogText.excerpt(name, limit: Self.quotedLength)))
            }
            guard !order.contains(column) else { throw error(.duplicateColumn(name)) }
            order.append(column)
        }
        for (column, name) in Self.columns.enumerated() where !order.contains(column) {
            throw error(.missingColumn(name))
        }
        fieldOrder = order
    }

    private func error(_ reason: FixtureError.Reason) -> FixtureError {
        FixtureError(file: file, line: lineNumber, reason: reason)
    }

    /// Text from the file as an error quotes it: its start, control characters written out.
    private static func quoted(_ bytes: UnsafeRawBufferPointer) -> String {
        LogText.excerpt(utf8: bytes, limit: quotedLength)
    }

    private static func fieldCount(_ line: UnsafeRawBufferPointer) -> Int {
        line.reduce(1) { $0 + ($1 == UInt8(ascii: ",") ? 1 : 0) }
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    @inline(__always) private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
