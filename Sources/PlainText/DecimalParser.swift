#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(ucrt)
    import ucrt
#endif

/// Parses decimal numbers from ASCII bytes without allocating, exactly as `Double(String)` would.
///
/// Fast path (Clinger): at most 15 significant digits and a decimal exponent within ±22 give an exactly rounded
/// result from one multiplication or division. Up to 19 digits: Eisel–Lemire. Anything else: `strtod`.
public enum DecimalParser {
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// The value of `bytes`, or nil when they are not a number. NaN and infinity come back as such.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> Double? {
        var index = 0
        let count = bytes.count
        guard count > 0 else { return nil }
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        var mantissa: UInt64 = 0
        var significant = 0
        var digits = 0
        var exponent = 0
        while index < count, let d = digit(bytes[index]) {
            if mantissa != 0 || d != 0 { significant += 1 }
            if significant <= 19 { mantissa = mantissa &* 10 &+ UInt64(d) } else { exponent += 1 }
            digits += 1
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, let d = digit(bytes[index]) {
                if mantissa != 0 || d != 0 { significant += 1 }
                if significant <= 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    exponent -= 1
                }
                digits += 1
                index += 1
            }
        }
        guard digits > 0 else { return slowPath(bytes) }
        if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var exponentNegative = false
            if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var value = 0
            var exponentDigits = 0
            while index < count, let d = digit(bytes[index]) {
                if value < 100_000 { value = value * 10 + d }
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            exponent += exponentNegative ? -value : value
        }
        guard index == count else { return slowPath(bytes) }
        guard significant <= 15, abs(exponent) <= 22 else {
            if significant <= 19,
                let value = EiselLemire.convert(mantissa: mantissa, exponent: exponent, negative: negative)
            {
                return value
            }
            return slowPath(bytes)
        }
        var result = Double(mantissa)
        if exponent < 0 { result /= powersOfTen[-exponent] } else { result *= powersOfTen[exponent] }
        return negative ? -result : result
    }

    @inline(__always) private static func digit(_ byte: UInt8) -> Int? {
        byte >= 0x30 && byte <= 0x39 ? Int(byte &- 0x30) : nil
    }

    /// Numbers the fast path cannot do exactly (more than 15 significant digits, large exponents, `nan`, `inf`):
    /// the C library's `strtod` on a NUL-terminated copy on the stack, so nothing is allocated. repd never calls
    /// `setlocale`, so `strtod` runs in the "C" locale and the decimal point is always `.`.
    private static func slowPath(_ bytes: UnsafeRawBufferPointer) -> Double? {
        guard bytes.count < 64 else { return Double(String(decoding: bytes, as: UTF8.self)) }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer -> Double? in
            let base = buffer.baseAddress!
            UnsafeMutableRawPointer(base).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            base[bytes.count] = 0
            var end: UnsafeMutablePointer<CChar>? = nil
            let value = strtod(base, &end)
            guard let end, end == base + bytes.count, bytes.count > 0 else { return nil }
            // strtod also takes forms Swift's Double(String) takes: hex floats, "nan", "inf"; and leading spaces,
            // which the CSV parser has trimmed already.
            return value
        }
    }
}

/// Parses a decimal number the way sysfs and CSV files print them ("3.000000033", "-2", "1e-3"), independent of
/// the locale. Returns nil for anything else, including NaN and infinity. Leading and trailing white space is allowed.
public func parseDecimal(_ text: some StringProtocol) -> Double? {
    var s = text.trimming { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }) else { return nil }
    let value = s.withUTF8 { DecimalParser.parse(UnsafeRawBufferPointer($0)) }
    guard let value, value.isFinite else { return nil }
    return value
}
