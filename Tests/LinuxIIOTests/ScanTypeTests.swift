import LinuxIIO
import MotionCore
import Testing

@Suite("Scan types and record layout")
struct ScanTypeTests {
    @Test(
        "the scan-type grammar parses endianness, sign, bits, storage, repeat and shift",
        arguments: [
            ("le:s12/16>>4\n", ScanType(bigEndian: false, signed: true, bits: 12, storageBits: 16, shift: 4)),
            ("be:u24/32>>0", ScanType(bigEndian: true, signed: false, bits: 24, storageBits: 32)),
            ("le:s16/16X2>>0", ScanType(bigEndian: false, signed: true, bits: 16, storageBits: 16, repeatCount: 2)),
            ("le:s64/64>>0", ScanType(bigEndian: false, signed: true, bits: 64, storageBits: 64)),
            ("le:u13/16>>0", ScanType(bigEndian: false, signed: false, bits: 13, storageBits: 16)),
            ("be:s8/8>>0", ScanType(bigEndian: true, signed: true, bits: 8, storageBits: 8)),
        ])
    func grammar(text: String, expected: ScanType) throws {
        #expect(try ScanType.parse(text) == expected)
    }

    @Test(
        "malformed scan types are refused with the reason",
        arguments: [
            ("", "expected 'be:' or 'le:'"), ("xe:s12/16>>4", "expected 'be:' or 'le:'"),
            ("le:x12/16>>4", "expected 's' or 'u'"),
            ("le:s/16>>4", "bit count"), ("le:s12-16>>4", "expected '/'"), ("le:s12/12>>0", "storage of 12 bits"),
            ("le:s17/16>>0", "do not fit"), ("le:s12/16>>5", "exceed"), ("le:s12/16", "expected '>>SHIFT'"),
            ("le:s12/16>>4x", "nothing after"), ("le:s12/16X0>>0", "repeat 0"), ("le:s12/16X>>0", "repeat count"),
            ("le:s99999/16>>0", "bit count"),
        ])
    func malformed(text: String, reason: String) {
        #expect {
            try ScanType.parse(text)
        } throws: { error in
            (error as? IIOError)?.message.contains(reason) == true
        }
    }

    private func decode(_ type: String, _ bytes: [UInt8], element: Int = 0) throws -> Int64 {
        let scan = try ScanType.parse(type)
        return bytes.withUnsafeBytes { scan.decode($0, offset: 0, element: element) }
    }

    @Test("a 12-bit value shifted by 4 decodes sign-extended")
    func twelveBitShifted() throws {
        // -5 in 12 bits is 0xFFB; shifted left by 4: 0xFFB0, little-endian B0 FF.
        #expect(try decode("le:s12/16>>4", [0xB0, 0xFF]) == -5)
        #expect(try decode("le:s12/16>>4", [0xF0, 0x7F]) == 2047)
        #expect(try decode("le:u12/16>>4", [0xB0, 0xFF]) == 4091)
        // Bits outside the value (the low nibble) are ignored.
        #expect(try decode("le:s12/16>>4", [0xBF, 0xFF]) == -5)
    }

    @Test("big-endian, 24 of 32 bits, unsigned and signed")
    func bigEndian24() throws {
        #expect(try decode("be:u24/32>>0", [0xAA, 0x12, 0x34, 0x56]) == 0x123456)
        #expect(try decode("be:s24/32>>0", [0x00, 0xFF, 0xFF, 0xFE]) == -2)
        #expect(try decode("be:s16/16>>0", [0x80, 0x00]) == -32768)
    }

    @Test("repeat channels hold their elements one after another")
    func repeatElements() throws {
        #expect(try decode("le:s16/16X2>>0", [0x01, 0x00, 0xFF, 0xFF], element: 0) == 1)
        #expect(try decode("le:s16/16X2>>0", [0x01, 0x00, 0xFF, 0xFF], element: 1) == -1)
    }

    @Test("64-bit timestamps decode whole")
    func timestamp() throws {
        let ns: Int64 = 1_795_309_047_262_729_226
        let bytes = withUnsafeBytes(of: ns.littleEndian) { Array($0) }
        #expect(try decode("le:s64/64>>0", bytes) == ns)
    }

    static func channel(_ name: String, _ index: Int, _ type: String) -> ScanChannel {
        ScanChannel(name: name, index: index, type: try! ScanType.parse(type))
    }

    @Test("the real kernel's iio_simple_dummy layouts: all channels, accel_x with timestamp, accel_x alone")
    func kernelDummyLayouts() {
        let v0 = Self.channel("voltage0", 0, "le:u13/16>>0")
        let v1 = Self.channel("voltage1-voltage2", 1, "le:s12/16>>0")
        let v3 = Self.channel("voltage3-voltage4", 2, "le:s11/16>>0")
        let x = Self.channel("accel_x", 3, "le:s16/16>>0")
        let ts = Self.channel("timestamp", 4, "le:s64/64>>0")
        let all = RecordLayout(channels: [ts, x, v3, v1, v0])
        #expect(all.recordSize == 16)
        #expect(all.slots.map(\.offset) == [0, 2, 4, 6, 8])
        let xts = RecordLayout(channels: [x, ts])
        #expect(xts.recordSize == 16)
        #expect(xts.slot(named: "timestamp")?.offset == 8)
        #expect(RecordLayout(channels: [x]).recordSize == 2)
        #expect(RecordLayout(channels: [v0, ts]).recordSize == 16)
    }

    @Test("the xyz kernel's layouts: 24-byte records with all channels, 16 with x, y, z and the timestamp")
    func kernelXYZLayouts() {
        let v0 = Self.channel("voltage0", 0, "le:u13/16>>0")
        let v1 = Self.channel("voltage1-voltage2", 1, "le:s12/16>>0")
        let v3 = Self.channel("voltage3-voltage4", 2, "le:s11/16>>0")
        let x = Self.channel("accel_x", 3, "le:s16/16>>0")
        let y = Self.channel("accel_y", 4, "le:s16/16>>0")
        let z = Self.channel("accel_z", 5, "le:s16/16>>0")
        let ts = Self.channel("timestamp", 6, "le:s64/64>>0")
        let all = RecordLayout(channels: [v0, v1, v3, x, y, z, ts])
        #expect(all.recordSize == 24)
        #expect(all.slot(named: "accel_z")?.offset == 10)
        #expect(all.slot(named: "timestamp")?.offset == 16)
        #expect(RecordLayout(channels: [x, y, z]).recordSize == 6)
        #expect(RecordLayout(channels: [x, y, z, ts]).recordSize == 16)
        #expect(RecordLayout(channels: [z, ts]).recordSize == 16)
        #expect(RecordLayout(channels: [v0, z]).recordSize == 4)
    }

    @Test("mixed sizes align each channel to its own size and pad the record to the largest")
    func mixedAlignment() {
        let a = Self.channel("a", 0, "le:u8/8>>0")
        let b = Self.channel("b", 1, "le:s32/32>>0")
        let c = Self.channel("c", 2, "le:s16/16>>0")
        let layout = RecordLayout(channels: [c, a, b])
        #expect(layout.slots.map(\.offset) == [0, 4, 8])
        #expect(layout.recordSize == 12)
        // A repeat channel is aligned to its whole size, as the kernel's iio_compute_scan_bytes does.
        let r = Self.channel("quat", 1, "le:s16/16X2>>0")
        let withRepeat = RecordLayout(channels: [a, r])
        #expect(withRepeat.slots.map(\.offset) == [0, 4])
        #expect(withRepeat.recordSize == 8)
    }

    @Test("records decode to g with offset, scale and the mount matrix applied")
    func accelDecoding() throws {
        let layout = RecordLayout(channels: [
            Self.channel("accel_x", 0, "le:s12/16>>4"), Self.channel("accel_y", 1, "le:s12/16>>4"),
            Self.channel("accel_z", 2, "le:s12/16>>4"), Self.channel("timestamp", 3, "le:s64/64>>0"),
        ])
        let scale = 9.80665 / 1024  // 1024 counts per g
        let decoder = try AccelRecordDecoder(
            layout: layout, scale: [scale, scale, scale], offset: [0, 0, 2],
            mountMatrix: [[0, -1, 0], [1, 0, 0], [0, 0, 1]])
        func enc(_ v: Int) -> [UInt8] {
            let raw = UInt16(bitPattern: Int16(v << 4)); return [UInt8(raw & 0xFF), UInt8(raw >> 8)]
        }
        let ns: Int64 = 1_700_000_000_500_000_000
        let record = enc(512) + enc(-256) + enc(1022) + [0, 0] + withUnsafeBytes(of: ns.littleEndian) { Array($0) }
        let sample = record.withUnsafeBytes { decoder.decode($0) }
        #expect(abs(sample.ax - 0.25) < 1e-12)  // −y
        #expect(abs(sample.ay - 0.5) < 1e-12)  // x
        #expect(abs(sample.az - 1.0) < 1e-12)  // (1022 + 2) counts
        #expect(sample.timestamp == 1_700_000_000.5)
    }
}

@Suite("sysfs values")
struct SysfsValueTests {
    @Test(
        "decimal numbers parse without locale",
        arguments: [("3.000000033\n", 3.000000033), ("-2\n", -2.0), ("0.009576806", 0.009576806), (" 100 ", 100.0)])
    func numbers(text: String, value: Double) throws {
        #expect(try SysfsValue.number(text, path: "x") == value)
    }

    @Test("garbage numbers are refused naming the file", arguments: ["", "abc", "1,5", "nan", "inf", "0x10", "1 2"])
    func badNumbers(text: String) {
        #expect(throws: IIOError.self) { try SysfsValue.number(text, path: "/sys/x/in_accel_scale") }
    }

    @Test(
        "raw counts parse from the bytes read, with the kernel's newline; anything else is not a number",
        arguments: [
            ("-1234\n", SysfsValue.RawCount.value(-1234)), ("0\n", .value(0)), (" 17 ", .value(17)),
            ("12.0\n", .value(12)), ("2147483647\n", .value(2_147_483_647)), ("-2147483648\n", .value(-2_147_483_648)),
            ("", .notANumber), ("\n", .notANumber), ("oops\n", .notANumber), ("1 2\n", .notANumber),
            ("0x10\n", .notANumber), ("nan\n", .notANumber), ("1e400\n", .notANumber), ("12\u{0}\n", .notANumber),
        ])
    func rawCounts(text: String, expected: SysfsValue.RawCount) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { SysfsValue.rawCount($0) } == expected)
    }

    @Test(
        "a raw count no 32-bit value can hold is out of range, not a reading",
        arguments: ["2147483649\n", "-2147483649\n", "99999999999\n", "1e12\n"])
    func rawCountsOutOfRange(text: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBytes { SysfsValue.rawCount($0) } == .outOfRange)
    }

    @Test("mount matrices parse; rows of zeros and wrong shapes are refused")
    func mountMatrix() throws {
        #expect(
            try SysfsValue.mountMatrix("0, -1, 0; 1, 0, 0; 0, 0, 1\n", path: "m") == [
                [0, -1, 0], [1, 0, 0], [0, 0, 1],
            ])
        for bad in [
            "1, 0, 0; 0, 1, 0", "1, 0; 0, 1, 0; 0, 0, 1", "0, 0, 0; 0, 1, 0; 0, 0, 1", "a, 0, 0; 0, 1, 0; 0, 0, 1",
        ] {
            #expect(throws: IIOError.self) { try SysfsValue.mountMatrix(bad, path: "m") }
        }
    }

    @Test("available frequencies: lists and [min step max] ranges; the nearest at or above is chosen")
    func available() throws {
        let list = try SysfsValue.availableValues("1 10 25 50 100 200 400\n", path: "f")
        #expect(list == [1, 10, 25, 50, 100, 200, 400])
        #expect(SysfsValue.nearestAtOrAbove(90, in: list) == 100)
        #expect(SysfsValue.nearestAtOrAbove(1000, in: list) == 400)
        #expect(try SysfsValue.availableValues("[12.5 12.5 50]", path: "f") == [12.5, 25, 37.5, 50])
        #expect(throws: IIOError.self) { try SysfsValue.availableValues("1 ten 100", path: "f") }
    }
}

@Suite("Bulk record decoding")
struct BulkDecodeTests {
    private static func channel(_ name: String, _ index: Int, _ type: String) -> ScanChannel {
        ScanChannel(name: name, index: index, type: try! ScanType.parse(type))
    }

    /// x, y, z le:s16 + timestamp (16-byte records, the common layout); the same with a leading 16-bit channel
    /// (24-byte records, other offsets); big-endian axes (the general path).
    static let layouts: [(String, RecordLayout)] = [
        (
            "x y z ts",
            RecordLayout(channels: [
                channel("accel_x", 0, "le:s16/16>>0"), channel("accel_y", 1, "le:s16/16>>0"),
                channel("accel_z", 2, "le:s16/16>>0"), channel("timestamp", 3, "le:s64/64>>0"),
            ])
        ),
        (
            "v x y z ts",
            RecordLayout(channels: [
                channel("voltage0", 0, "le:u16/16>>0"), channel("accel_x", 1, "le:s16/16>>0"),
                channel("accel_y", 2, "le:s16/16>>0"), channel("accel_z", 3, "le:s16/16>>0"),
                channel("timestamp", 4, "le:s64/64>>0"),
            ])
        ),
        (
            "be x y z ts",
            RecordLayout(channels: [
                channel("accel_x", 0, "be:s16/16>>0"), channel("accel_y", 1, "be:s16/16>>0"),
                channel("accel_z", 2, "be:s16/16>>0"), channel("timestamp", 3, "le:s64/64>>0"),
            ])
        ),
    ]

    @Test(
        "every bulk path (common layout, other offsets, offset and mount matrix, big-endian) equals record-by-record decoding",
        arguments: 0..<3, [false, true])
    func bulkEqualsSingle(layoutIndex: Int, transformed: Bool) throws {
        let layout = Self.layouts[layoutIndex].1
        let decoder = try AccelRecordDecoder(
            layout: layout, scale: [0.0096, 0.0098, 0.01], offset: transformed ? [3, -2, 1] : [0, 0, 0],
            mountMatrix: transformed ? [[0, 1, 0], [-1, 0, 0], [0, 0, 1]] : nil)
        var random = SystemRandomNumberGenerator()
        let count = 257
        let bytes = (0..<(count * layout.recordSize)).map { _ in UInt8.random(in: 0...255, using: &random) }
        var bulk = [MotionSample](repeating: MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: count)
        let decoded = bytes.withUnsafeBytes { raw in
            bulk.withUnsafeMutableBufferPointer { decoder.decode(raw, into: $0.baseAddress!) }
        }
        #expect(decoded == count)
        bytes.withUnsafeBytes { raw in
            for i in 0..<count {
                let single = decoder.decode(
                    UnsafeRawBufferPointer(rebasing: raw[(i * layout.recordSize)..<((i + 1) * layout.recordSize)]))
                #expect(single == bulk[i], "record \(i) of \(Self.layouts[layoutIndex].0)")
            }
        }
    }
}
