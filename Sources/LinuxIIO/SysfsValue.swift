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
