/// Writes JSON text without Foundation: objects with keys in the order given, strings escaped per RFC 8259.
public struct JSONWriter: Sendable {
    /// A JSON value.
    public indirect enum Value: Sendable, Equatable {
        /// A string.
        case string(String)
        /// A number; non-finite numbers are written as `null`, since JSON has no NaN or infinity.
        case number(Double)
        /// An integer.
        case integer(Int)
        /// `true` or `false`.
        case bool(Bool)
        /// `null`.
        case null
        /// An array.
        case array([Value])
        /// An object; keys keep their order.
        case object([(String, Value)])

        /// Equal when both write the same JSON text: key order counts, `.integer(1)` equals `.number(1)`, and a
        /// non-finite number equals `.null`.
        public static func == (a: Value, b: Value) -> Bool { a.text == b.text }

        /// The value as compact JSON text.
        public var text: String {
            var out = ""
            JSONWriter.write(self, to: &out)
            return out
        }
    }

    /// Appends `value` as compact JSON to `out`.
    public static func write(_ value: Value, to out: inout String) {
        switch value {
        case .string(let s): writeString(s, to: &out)
        case .number(let d): out += d.isFinite ? numberText(d) : "null"
        case .integer(let i): out += String(i)
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, item)) in members.enumerated() {
                if index > 0 { out += "," }
                writeString(key, to: &out)
                out += ":"
                write(item, to: &out)
            }
            out += "}"
        }
    }

    /// A number in the shortest form that reads back to the same Double (integers without a fraction).
    public static func numberText(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
        return "\(d)"
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Formats a number with a fixed count of decimals, without Foundation (`format(3.14159, 2)` is "3.14").
///
/// `decimals` is clamped to 0…17. Numbers whose digits do not fit 64 bits at that precision (1e300, or 1e6 with 15
/// decimals) and non-finite ones are written in Swift's shortest form (`1e+300`, `inf`, `nan`) instead of trapping.
public func format(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    let decimals = min(max(decimals, 0), 17)
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 0x1p63 else { return "\(value)" }
    let whole = Int64(scaled / scale)
    var fraction = String(Int64(scaled) - whole * Int64(scale))
    fraction = String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
    let sign = value < 0 && scaled != 0 ? "-" : ""
    return decimals == 0 ? "\(sign)\(whole)" : "\(sign)\(whole).\(fraction)"
}
