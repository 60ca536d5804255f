import PlainText

/// Parses the text of sysfs attributes (every value ends in a newline; numbers are locale-independent decimals).
public enum SysfsValue {
    /// A decimal number such as `0.009576806` or `-2`.
    public static func number(_ text: String, path: String) throws(IIOError) -> Double {
        guard let value = parseDecimal(text) else {
            throw IIOError(.invalidValue, path: path, "'\(printable(text))' is not a number")
        }
        return value
    }

    /// A whole number such as `3` or `-1`.
    public static func integer(_ text: String, path: String) throws(IIOError) -> Int {
        guard let value = Int(text.trimmingWhitespace()) else {
            throw IIOError(.invalidValue, path: path, "'\(printable(text))' is not a whole number")
        }
        return value
    }

    /// A raw count read from `in_accel_{x,y,z}_raw`, straight from the bytes `pread()` filled: what the kernel prints
    /// for a raw value, a 32-bit integer (`%d`) and its newline, also taken as a decimal (`12.0`) as
    /// `number(_:path:)` does. Allocates nothing, so polling can call it for every sample.
    public static func rawCount(_ bytes: UnsafeRawBufferPointer) -> RawCount {
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        guard start < end else { return .notANumber }
        for index in start..<end where !isNumeral(bytes[index]) { return .notANumber }
        guard let value = DecimalParser.parse(UnsafeRawBufferPointer(rebasing: bytes[start..<end])), value.isFinite
        else { return .notANumber }
        guard abs(value) <= Double(Int32.max) + 1 else { return .outOfRange }
        return .value(value)
    }

    /// What `rawCount(_:)` read.
    public enum RawCount: Equatable, Sendable {
        case value(Double)
        /// Not a number at all (the text is in the error message the caller writes).
        case notANumber
        /// A number no 32-bit raw value can hold: not something a kernel driver prints.
        case outOfRange
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
            || byte == UInt8(ascii: "\r")
    }

    private static func isNumeral(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }

    /// A mount matrix `"x1, y1, z1; x2, y2, z2; x3, y3, z3"` as three rows. Rows of all zeros are refused.
    public static func mountMatrix(_ text: String, path: String) throws(IIOError) -> [[Double]] {
        let rows = text.trimmingWhitespace().split(separator: ";", omittingEmptySubsequences: false)
        guard rows.count == 3 else {
            throw IIOError(
                .invalidValue, path: path, "mount matrix '\(printable(text))' does not have 3 rows separated by ';'")
        }
        var matrix: [[Double]] = []
        for row in rows {
            let values = row.split(separator: ",", omittingEmptySubsequences: false).map { parseDecimal($0) }
            guard values.count == 3, values.allSatisfy({ $0 != nil }) else {
                throw IIOError(.invalidValue, path: path, "mount matrix '\(printable(text))' needs 3 numbers per row")
            }
            let numbers = values.map { $0! }
            guard numbers.contains(where: { $0 != 0 }) else {
                throw IIOError(.invalidValue, path: path, "mount matrix '\(printable(text))' has a row of zeros")
            }
            matrix.append(numbers)
        }
        return matrix
    }

    /// A list of available values: `1 10 25 50` or a range `[min step max]`.
    public static func availableValues(_ text: String, path: String) throws(IIOError) -> [Double] {
        let trimmed = text.trimmingWhitespace()
        if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
            let parts = trimmed.dropFirst().dropLast().split(separator: " ").compactMap { parseDecimal($0) }
            guard parts.count == 3, parts[1] > 0, parts[0] <= parts[2] else {
                throw IIOError(.invalidValue, path: path, "'\(printable(text))' is not a range [min step max]")
            }
            var values: [Double] = []
            var v = parts[0]
            while v <= parts[2] + 1e-9, values.count < 10_000 {
                values.append(v)
                v += parts[1]
            }
            return values
        }
        var values: [Double] = []
        for word in trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            guard let value = parseDecimal(word) else {
                throw IIOError(.invalidValue, path: path, "'\(printable(text))' is not a list of numbers")
            }
            values.append(value)
        }
        return values
    }

    /// The value to ask for: the smallest available at or above `requested`, else the largest available.
    public static func nearestAtOrAbove(_ requested: Double, in available: [Double]) -> Double? {
        let sorted = available.filter { $0 > 0 }.sorted()
        return sorted.first { $0 >= requested - 1e-9 } ?? sorted.last
    }

    /// `text` trimmed, with control characters as `?`, at most `limit` characters: safe to put in a message or a log.
    static func printable(_ text: String, limit: Int = 80) -> String {
        String(
            text.trimmingWhitespace().unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) }
                .prefix(limit))
    }
}

extension String {
    /// Without leading and trailing white space and NULs (Linux 6.1's `current_timestamp_clock` reads
    /// `realtime\n\0`).
    func trimmingWhitespace() -> String { trimming { $0.isWhitespace || $0 == "\0" } }
}
