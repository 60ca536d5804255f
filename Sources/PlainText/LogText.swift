/// Text from outside (client lines, sysfs values, file contents) made safe for one log line.
public enum LogText {
    /// `text` with every control character written out: `\n`, `\r`, `\t`, and `\xNN` for the other C0 controls
    /// (below 0x20) and DEL (0x7f); C1 controls (U+0080…U+009F, which some terminals obey) as `\u{NN}`.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: out += "\\x" + hex(scalar.value)
            case _ where needsEscape(scalar): out += "\\u{" + hex(scalar.value) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// At most `limit` characters (Unicode scalars) of `text`, escaped as `escaped(_:)` does, and `…` when more
    /// followed: for quoting outside text in a message, which a 3 MB line or a 5-million-digit number must not flood.
    public static func excerpt(_ text: some StringProtocol, limit: Int = 40) -> String {
        let scalars = text.unicodeScalars
        guard let end = scalars.index(scalars.startIndex, offsetBy: max(limit, 0), limitedBy: scalars.endIndex),
            end != scalars.endIndex
        else { return escaped(String(text)) }
        var head = ""
        head.unicodeScalars.append(contentsOf: scalars[..<end])
        return escaped(head) + "…"
    }

    /// `excerpt(_:limit:)` of bytes taken as UTF-8 (invalid sequences repaired), decoding only the start of them.
    public static func excerpt(utf8 bytes: UnsafeRawBufferPointer, limit: Int = 40) -> String {
        // A scalar takes at most 4 bytes: one more than `limit` of them tells whether there is more.
        let head = UnsafeRawBufferPointer(rebasing: bytes.prefix(4 * (max(limit, 0) + 1)))
        return excerpt(String(decoding: head, as: UTF8.self), limit: limit)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return digits.count < 2 ? "0" + digits : digits
    }
}
