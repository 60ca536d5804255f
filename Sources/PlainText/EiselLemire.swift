/// Exact decimal-to-binary conversion for up to 19 significant digits (Eisel–Lemire, as in Go's strconv and
/// fast_float): `mantissa × 10^exponent` rounded to the nearest Double, or nil in the rare cases the algorithm
/// cannot decide (the caller then uses the C library). No allocation; a table of 128-bit powers of ten for the
/// exponents fixtures use (10^-38 … 10^38), computed once.
enum EiselLemire {
    static let minimumExponent = -38
    static let maximumExponent = 38

    /// 10^e for e in minimumExponent…maximumExponent, as a 128-bit mantissa with its top bit set, truncated.
    private static let powers: [(hi: UInt64, lo: UInt64)] = (minimumExponent...maximumExponent).map(normalizedPower)

    static func convert(mantissa: UInt64, exponent: Int, negative: Bool) -> Double? {
        if mantissa == 0 { return negative ? -0.0 : 0.0 }
        guard exponent >= minimumExponent, exponent <= maximumExponent else { return nil }
        let power = powers[exponent - minimumExponent]
        let shift = UInt64(mantissa.leadingZeroBitCount)
        let man = mantissa << shift
        var exponent2 = UInt64(bitPattern: Int64((217706 * exponent) >> 16 + 64 + 1023)) &- shift

        var (xHi, xLo) = man.multipliedFullWidth(by: power.hi)
        if xHi & 0x1FF == 0x1FF, xLo &+ man < man {
            let (yHi, yLo) = man.multipliedFullWidth(by: power.lo)
            var mergedHi = xHi
            let mergedLo = xLo &+ yHi
            if mergedLo < xLo { mergedHi &+= 1 }
            if mergedHi & 0x1FF == 0x1FF, mergedLo &+ 1 == 0, yLo &+ man < man { return nil }
            xHi = mergedHi
            xLo = mergedLo
        }
        let msb = xHi >> 63
        var result = xHi >> (msb + 9)
        exponent2 &-= 1 ^ msb
        if xLo == 0, xHi & 0x1FF == 0, result & 3 == 1 { return nil }  // exactly half-way: let strtod decide
        result &+= result & 1
        result >>= 1
        if result >> 53 > 0 {
            result >>= 1
            exponent2 &+= 1
        }
        if exponent2 &- 1 >= 0x7FF - 1 { return nil }  // subnormal, infinite or NaN territory
        var bits = exponent2 << 52 | result & 0x000F_FFFF_FFFF_FFFF
        if negative { bits |= 1 << 63 }
        return Double(bitPattern: bits)
    }

    /// The top 128 bits of 10^e (e ≥ 0 exactly, e < 0 by long division), normalized so the top bit is set.
    private static func normalizedPower(_ e: Int) -> (hi: UInt64, lo: UInt64) {
        var ten: UInt128 = 1
        for _ in 0..<abs(e) { ten *= 10 }
        let value: UInt128
        if e >= 0 {
            value = ten << UInt128(ten.leadingZeroBitCount)
        } else {
            // Binary long division of 1 by 10^|e|: skip the leading zero bits, then take 128 quotient bits.
            var remainder: UInt128 = 1
            var quotient: UInt128 = 0
            var taken = 0
            while taken < 128 {
                let overflow = remainder >> 127 != 0
                remainder <<= 1
                let bit = overflow || remainder >= ten
                if bit { remainder &-= ten }
                if bit || taken > 0 {
                    quotient = quotient << 1 | (bit ? 1 : 0)
                    taken += 1
                }
            }
            value = quotient
        }
        return (UInt64(truncatingIfNeeded: value >> 64), UInt64(truncatingIfNeeded: value))
    }
}
