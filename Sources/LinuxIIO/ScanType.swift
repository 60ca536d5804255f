/// The format of one buffered channel, from its `_type` attribute: `[be|le]:[s|u]BITS/STORAGEBITS[XREPEAT]>>SHIFT`
/// (e.g. `le:s12/16>>4`, `be:u24/32>>0`, `le:s16/16X2>>0`).
public struct ScanType: Sendable, Equatable, CustomStringConvertible {
    /// Big-endian storage.
    public var bigEndian: Bool
    /// Two's-complement value.
    public var signed: Bool
    /// Bits that carry the value.
    public var bits: Int
    /// Bits of storage per element: 8, 16, 32 or 64.
    public var storageBits: Int
    /// Elements in the channel (1 unless `X` is given).
    public var repeatCount: Int
    /// Right shift applied before masking.
    public var shift: Int

    /// Bytes per element.
    public var storageBytes: Int { storageBits / 8 }
    /// Bytes the channel occupies in a record.
    public var totalBytes: Int { storageBytes * repeatCount }

    /// Creates a scan type (validated by `parse` only).
    public init(bigEndian: Bool, signed: Bool, bits: Int, storageBits: Int, repeatCount: Int = 1, shift: Int = 0) {
        self.bigEndian = bigEndian
        self.signed = signed
        self.bits = bits
        self.storageBits = storageBits
        self.repeatCount = repeatCount
        self.shift = shift
    }

    /// The type in `_type` syntax (`le:s12/16>>4`), with `X` only when the repeat count is above 1.
    public var description: String {
        "\(bigEndian ? "be" : "le"):\(signed ? "s" : "u")\(bits)/\(storageBits)\(repeatCount > 1 ? "X\(repeatCount)" : "")>>\(shift)"
    }

    /// Parses the `_type` text (a trailing newline is allowed). Errors say what is wrong.
    public static func parse(_ text: String) throws(IIOError) -> ScanType {
        var rest = Substring(text)
        while let last = rest.last, last == "\n" || last == " " { rest.removeLast() }
        func fail(_ reason: String) -> IIOError {
            IIOError(.unsupported, path: "", "scan type '\(text.filter { $0 != "\n" })': \(reason)")
        }
        let bigEndian: Bool
        if rest.hasPrefix("be:") {
            bigEndian = true
        } else if rest.hasPrefix("le:") {
            bigEndian = false
        } else {
            throw fail("expected 'be:' or 'le:'")
        }
        rest = rest.dropFirst(3)
        guard let sign = rest.first, sign == "s" || sign == "u" else {
            throw fail("expected 's' or 'u' after the endianness")
        }
        rest = rest.dropFirst()
        func number() -> Int? {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 4, let value = Int(digits) else { return nil }
            rest = rest.dropFirst(digits.count)
            return value
        }
        guard let bits = number() else { throw fail("expected the bit count") }
        guard rest.first == "/" else { throw fail("expected '/' after the bit count") }
        rest = rest.dropFirst()
        guard let storage = number() else { throw fail("expected the storage bit count") }
        var repeatCount = 1
        if rest.first == "X" {
            rest = rest.dropFirst()
            guard let r = number() else { throw fail("expected a repeat count after 'X'") }
            repeatCount = r
        }
        guard rest.hasPrefix(">>") else { throw fail("expected '>>SHIFT'") }
        rest = rest.dropFirst(2)
        guard let shift = number(), rest.isEmpty else { throw fail("expected the shift and nothing after it") }
        guard [8, 16, 32, 64].contains(storage) else {
            throw fail("storage of \(storage) bits (8, 16, 32 or 64 are supported)")
        }
        guard bits >= 1, bits <= storage else { throw fail("\(bits) value bits do not fit \(storage) storage bits") }
        guard shift + bits <= storage else {
            throw fail("shift \(shift) + \(bits) bits exceed \(storage) storage bits")
        }
        guard repeatCount >= 1, repeatCount <= 64 else { throw fail("repeat \(repeatCount) (1 to 64 supported)") }
        return ScanType(
            bigEndian: bigEndian, signed: sign == "s", bits: bits, storageBits: storage, repeatCount: repeatCount,
            shift: shift)
    }

    /// Decodes element `element` of this channel from `record` at byte `offset`: read the storage in its byte order,
    /// shift right, mask to `bits`, sign-extend if signed.
    @inline(__always)
    public func decode(_ record: UnsafeRawBufferPointer, offset: Int, element: Int = 0) -> Int64 {
        let start = offset + element * storageBytes
        var raw: UInt64
        switch storageBytes {
        case 1: raw = UInt64(record.load(fromByteOffset: start, as: UInt8.self))
        case 2:
            let v = record.loadUnaligned(fromByteOffset: start, as: UInt16.self)
            raw = UInt64(bigEndian ? UInt16(bigEndian: v) : UInt16(littleEndian: v))
        case 4:
            let v = record.loadUnaligned(fromByteOffset: start, as: UInt32.self)
            raw = UInt64(bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v))
        default:
            let v = record.loadUnaligned(fromByteOffset: start, as: UInt64.self)
            raw = bigEndian ? UInt64(bigEndian: v) : UInt64(littleEndian: v)
        }
        raw >>= UInt64(shift)
        if bits < 64 {
            raw &= (1 << UInt64(bits)) - 1
            if signed, raw & (1 << UInt64(bits - 1)) != 0 { raw |= ~((1 << UInt64(bits)) - 1) }
        }
        return Int64(bitPattern: raw)
    }
}
