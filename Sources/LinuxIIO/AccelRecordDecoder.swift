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
    private let matrix: [Double]  // 9 values, row-major; identity when absent

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
        matrix = mountMatrix.map { $0.flatMap { $0 } } ?? [1, 0, 0, 0, 1, 0, 0, 0, 1]
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
        return MotionSample(
            timestamp: t,
            ax: matrix[0] * x + matrix[1] * y + matrix[2] * z,
            ay: matrix[3] * x + matrix[4] * y + matrix[5] * z,
            az: matrix[6] * x + matrix[7] * y + matrix[8] * z)
    }

    /// Decodes every whole record in `bytes` into `output` (appending); returns the bytes consumed.
    public func decodeAll(_ bytes: UnsafeRawBufferPointer, into output: inout [MotionSample], fallbackTime: Double = 0) -> Int {
        let size = layout.recordSize
        var offset = 0
        while offset + size <= bytes.count {
            output.append(decode(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size]), fallbackTime: fallbackTime))
            offset += size
        }
        return offset
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
