import CBenchDecoder
import LinuxIIO
import MotionCore

/// IIO record decoding (x, y, z le:s16 + le:s64 timestamp, 16-byte records) in Swift vs a hand-written C decoder.
enum DecodeBenchmark {
    static func run(quick: Bool) -> [Figure] {
        let count = quick ? 200_000 : 1_000_000
        var bytes = [UInt8](repeating: 0, count: count * 16)
        for i in 0..<count {
            let base = i * 16
            let values: [Int16] = [
                Int16(truncatingIfNeeded: i &* 7), Int16(truncatingIfNeeded: -i),
                Int16(truncatingIfNeeded: 16384 + i % 1000),
            ]
            for (k, v) in values.enumerated() {
                bytes[base + 2 * k] = UInt8(truncatingIfNeeded: v)
                bytes[base + 2 * k + 1] = UInt8(truncatingIfNeeded: v >> 8)
            }
            let ns = Int64(1_700_000_000_000_000_000) + Int64(i) * 625_000
            for k in 0..<8 { bytes[base + 8 + k] = UInt8(truncatingIfNeeded: ns >> (8 * Int64(k))) }
        }
        let s16 = try! ScanType.parse("le:s16/16>>0")
        let layout = RecordLayout(channels: [
            ScanChannel(name: "accel_x", index: 0, type: s16), ScanChannel(name: "accel_y", index: 1, type: s16),
            ScanChannel(name: "accel_z", index: 2, type: s16),
            ScanChannel(name: "timestamp", index: 3, type: try! ScanType.parse("le:s64/64>>0")),
        ])
        let scale = 0.000598550
        let decoder = try! AccelRecordDecoder(
            layout: layout, scale: [scale, scale, scale], offset: [0, 0, 0], mountMatrix: nil)
        var swiftOut = [MotionSample](repeating: MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: count)
        var cOut = [bench_sample](repeating: bench_sample(), count: count)
        var swiftBest = Double.infinity
        var cBest = Double.infinity
        var checksum = 0.0
        for _ in 0..<5 {
            let t0 = monotonicNow()
            bytes.withUnsafeBytes { raw in
                swiftOut.withUnsafeMutableBufferPointer { out in _ = decoder.decode(raw, into: out.baseAddress!) }
            }
            swiftBest = min(swiftBest, monotonicNow() - t0)
            let t1 = monotonicNow()
            bytes.withUnsafeBufferPointer { raw in
                cOut.withUnsafeMutableBufferPointer { out in
                    _ = bench_decode_xyz_ts(
                        raw.baseAddress, count, scale / MotionSample.standardGravity, out.baseAddress)
                }
            }
            cBest = min(cBest, monotonicNow() - t1)
            checksum += swiftOut[count / 2].az + cOut[count / 2].az
        }
        // Both decoders must agree, or the comparison means nothing.
        precondition(
            abs(swiftOut[count - 1].az - cOut[count - 1].az) < 1e-12
                && swiftOut[count - 1].timestamp == cOut[count - 1].t)
        blackHole(checksum)
        let swiftRate = Double(count) / swiftBest / 1e6
        let cRate = Double(count) / cBest / 1e6
        return [
            Figure(
                key: "decode_mrecords_per_s", value: swiftRate, unit: "M records/s", goal: "",
                note: "AccelRecordDecoder, \(count) records into a preallocated buffer, as the C baseline"),
            Figure(
                key: "decode_c_mrecords_per_s", value: cRate, unit: "M records/s", goal: "",
                note: "hand-written C for this one layout, same run"),
            Figure(key: "decode_vs_c", value: swiftRate / cRate, unit: "×", goal: "≥ 1.0", note: "Swift / C"),
        ]
    }
}
