import MotionCore

/// Turns records of a buffered accelerometer into `MotionSample`s: x, y, z decoded by their scan types, offset
/// added, scaled from m/s² to g, rotated by the mount matrix, and the timestamp channel (ns) in seconds.
public struct AccelRecordDecoder: Sendable {
    /// The layout of one record.
    public let layout: RecordLayout
    private let axes: [(offset: Int, type: ScanType)]
    private let timestamp: (offset: Int, type: ScanType)?
    private let gain: (Double, Double, Double)  // scale / g, per axis
    private let bias: (Double, Double, Double)  // offset counts, per axis
    private let matrix: (Double, Double, Double, Double, Double, Double, Double, Double, Double)  // row-major
    /// Offsets for the specialized loop, when every axis is le:s16/16>>0 and the timestamp le:s64/64>>0 (or absent: −1).
    private let littleEndian16: (x: Int, y: Int, z: Int, t: Int)?
    /// Identity mount matrix and zero offsets: the specialized loop only scales.
    private let plain: Bool

    /// A decoder for `layout`, which must hold `accel_x`, `accel_y`, `accel_z`.
    public init(layout: RecordLayout, scale: [Double], offset: [Double], mountMatrix: [[Double]]?) throws(IIOError) {
        var axes: [(Int, ScanType)] = []
        for name in ["accel_x", "accel_y", "accel_z"] {
            guard let slot = layout.slot(named: name) else {
                throw IIOError(.unsupported, path: "", "the record has no \(name) channel")
            }
            axes.append((slot.offset, slot.channel.type))
        }
        self.layout = layout
        self.axes = axes
        timestamp = layout.slot(named: "timestamp").map { ($0.offset, $0.channel.type) }
        let g = MotionSample.standardGravity
        gain = (scale[0] / g, scale[1] / g, scale[2] / g)
        bias = (offset[0], offset[1], offset[2])
        let m: [Double] = mountMatrix.map { rows in rows.flatMap { $0 } } ?? [1, 0, 0, 0, 1, 0, 0, 0, 1]
        matrix = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
        let plain16 = ScanType(bigEndian: false, signed: true, bits: 16, storageBits: 16)
        let plain64 = ScanType(bigEndian: false, signed: true, bits: 64, storageBits: 64)
        if axes.allSatisfy({ $0.1 == plain16 }), timestamp.map({ $0.1 == plain64 }) ?? true {
            littleEndian16 = (axes[0].0, axes[1].0, axes[2].0, timestamp?.0 ?? -1)
        } else {
            littleEndian16 = nil
        }
        plain = m == [1, 0, 0, 0, 1, 0, 0, 0, 1] && offset.allSatisfy { $0 == 0 }
    }

    /// Whether records carry a timestamp channel.
    public var hasTimestamp: Bool { timestamp != nil }

    /// Decodes one record (at least `layout.recordSize` bytes). Without a timestamp channel `fallbackTime` is used.
    @inline(__always)
    public func decode(_ record: UnsafeRawBufferPointer, fallbackTime: Double = 0) -> MotionSample {
        let x = (Double(axes[0].type.decode(record, offset: axes[0].offset)) + bias.0) * gain.0
        let y = (Double(axes[1].type.decode(record, offset: axes[1].offset)) + bias.1) * gain.1
        let z = (Double(axes[2].type.decode(record, offset: axes[2].offset)) + bias.2) * gain.2
        let t = timestamp.map { Double($0.type.decode(record, offset: $0.offset)) / 1e9 } ?? fallbackTime
        let m = matrix
        return MotionSample(
            timestamp: t, ax: m.0 * x + m.1 * y + m.2 * z, ay: m.3 * x + m.4 * y + m.5 * z,
            az: m.6 * x + m.7 * y + m.8 * z)
    }

    /// Decodes every whole record in `bytes` into `output` (appending); returns the bytes consumed.
    public func decodeAll(_ bytes: UnsafeRawBufferPointer, into output: inout [MotionSample], fallbackTime: Double = 0)
        -> Int
    {
        let count = bytes.count / layout.recordSize
        guard count > 0 else { return 0 }
        let start = output.count
        output.append(contentsOf: repeatElement(MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: count))
        output.withUnsafeMutableBufferPointer { out in
            _ = decode(bytes, into: out.baseAddress! + start, fallbackTime: fallbackTime)
        }
        return count * layout.recordSize
    }

    /// Decodes every whole record in `bytes` to `out` (room for `bytes.count / recordSize` samples); returns how
    /// many. Layouts whose axes are plain little-endian 16-bit values (no shift, all bits — the common case) with a
    /// little-endian 64-bit timestamp take specialized loops (without the mount matrix and offset when those are
    /// identity and zero); everything else the general one.
    public func decode(
        _ bytes: UnsafeRawBufferPointer, into out: UnsafeMutablePointer<MotionSample>, fallbackTime: Double = 0
    ) -> Int {
        let size = layout.recordSize
        let count = bytes.count / size
        guard count > 0 else { return 0 }
        let base = bytes.baseAddress!
        if let fast = littleEndian16, fast.t >= 0 {
            if plain, size == 16, fast == (0, 2, 4, 8) {
                // The most common layout (x, y, z as le:s16, 2 bytes of padding, le:s64 timestamp): with constant
                // offsets and stride the compiler vectorizes the conversions, as it does for the C baseline.
                let (gx, gy, gz) = gain
                for i in 0..<count {
                    let r = base + i &* 16
                    let x = Int16(littleEndian: r.loadUnaligned(fromByteOffset: 0, as: Int16.self))
                    let y = Int16(littleEndian: r.loadUnaligned(fromByteOffset: 2, as: Int16.self))
                    let z = Int16(littleEndian: r.loadUnaligned(fromByteOffset: 4, as: Int16.self))
                    let t = Int64(littleEndian: r.loadUnaligned(fromByteOffset: 8, as: Int64.self))
                    (out + i).initialize(
                        to: MotionSample(
                            timestamp: Double(t) / 1e9, ax: Double(x) * gx, ay: Double(y) * gy, az: Double(z) * gz))
                }
            } else if plain {
                let (gx, gy, gz) = gain
                let (ox, oy, oz, ot) = fast
                for i in 0..<count {
                    let r = base + i * size
                    let x = r.loadUnaligned(fromByteOffset: ox, as: Int16.self)
                    let y = r.loadUnaligned(fromByteOffset: oy, as: Int16.self)
                    let z = r.loadUnaligned(fromByteOffset: oz, as: Int16.self)
                    let t = r.loadUnaligned(fromByteOffset: ot, as: Int64.self)
                    (out + i).initialize(
                        to: MotionSample(
                            timestamp: Double(Int64(littleEndian: t)) / 1e9,
                            ax: Double(Int16(littleEndian: x)) * gx, ay: Double(Int16(littleEndian: y)) * gy,
                            az: Double(Int16(littleEndian: z)) * gz))
                }
            } else {
                let m = matrix
                for i in 0..<count {
                    let r = base + i * size
                    let x =
                        (Double(Int16(littleEndian: r.loadUnaligned(fromByteOffset: fast.x, as: Int16.self))) + bias.0)
                        * gain.0
                    let y =
                        (Double(Int16(littleEndian: r.loadUnaligned(fromByteOffset: fast.y, as: Int16.self))) + bias.1)
                        * gain.1
                    let z =
                        (Double(Int16(littleEndian: r.loadUnaligned(fromByteOffset: fast.z, as: Int16.self))) + bias.2)
                        * gain.2
                    out[i] = MotionSample(
                        timestamp: Double(Int64(littleEndian: r.loadUnaligned(fromByteOffset: fast.t, as: Int64.self)))
                            / 1e9,
                        ax: m.0 * x + m.1 * y + m.2 * z, ay: m.3 * x + m.4 * y + m.5 * z,
                        az: m.6 * x + m.7 * y + m.8 * z)
                }
            }
            return count
        }
        for i in 0..<count {
            out[i] = decode(UnsafeRawBufferPointer(start: base + i * size, count: size), fallbackTime: fallbackTime)
        }
        return count
    }

    /// Offset, scale and mount matrix alone, for raw counts read by polling.
    public struct Conversion: Sendable {
        let gain: (Double, Double, Double)
        let bias: (Double, Double, Double)
        let matrix: [Double]

        /// The conversion for a device's per-axis scale (m/s² per count), offset (counts) and mount matrix.
        public init(scale: [Double], offset: [Double], mountMatrix: [[Double]]?) {
            let g = MotionSample.standardGravity
            gain = (scale[0] / g, scale[1] / g, scale[2] / g)
            bias = (offset[0], offset[1], offset[2])
            matrix = mountMatrix.map { $0.flatMap { $0 } } ?? [1, 0, 0, 0, 1, 0, 0, 0, 1]
        }

        /// Raw counts of the three axes as a sample at `time`.
        public func sample(rawX: Double, rawY: Double, rawZ: Double, time: Double) -> MotionSample {
            let x = (rawX + bias.0) * gain.0
            let y = (rawY + bias.1) * gain.1
            let z = (rawZ + bias.2) * gain.2
            return MotionSample(
                timestamp: time,
                ax: matrix[0] * x + matrix[1] * y + matrix[2] * z,
                ay: matrix[3] * x + matrix[4] * y + matrix[5] * z,
                az: matrix[6] * x + matrix[7] * y + matrix[8] * z)
        }
    }
}
