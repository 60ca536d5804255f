import LinuxIIO
import MotionCore
import MotionFixtures
import PlainText
import RepConfiguration
import RepProtocol

/// Every parser that takes outside input, as a function of raw bytes, for libFuzzer (`repd-fuzz`) and for the
/// regression tests that replay the committed corpora. A target must never crash, hang or leak on any input;
/// errors are fine and expected.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `ScanType.parse`: the `_type` attribute of a scan element.
    case scanType = "scan-type"
    /// sysfs numbers, mount matrices and available-value lists.
    case sysfs
    /// The fixture CSV reader.
    case fixtureCSV = "fixture-csv"
    /// The TOML configuration.
    case config
    /// A client's command line on the socket.
    case protocolLine = "protocol-line"
    /// Record decoding with a layout built from the first bytes.
    case records

    /// Runs the target on one input.
    public func run(_ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        switch self {
        case .scanType:
            if let type = try? ScanType.parse(text) {
                // A parsed type must decode any record of its size without reading out of bounds.
                var record = [UInt8](repeating: 0xA5, count: type.totalBytes)
                for i in 0..<min(record.count, bytes.count) { record[i] = bytes[i] }
                record.withUnsafeBytes { raw in
                    for element in 0..<type.repeatCount { _ = type.decode(raw, offset: 0, element: element) }
                }
            }
        case .sysfs:
            _ = try? SysfsValue.number(text, path: "fuzz")
            _ = try? SysfsValue.integer(text, path: "fuzz")
            _ = try? SysfsValue.mountMatrix(text, path: "fuzz")
            if let values = try? SysfsValue.availableValues(text, path: "fuzz") {
                _ = SysfsValue.nearestAtOrAbove(100, in: values)
            }
            _ = parseDecimal(text)
        case .fixtureCSV:
            _ = try? FixtureFileReader.parse(text, name: "fuzz")
        case .config:
            _ = try? DaemonConfiguration.parse(bytes: Array(bytes), file: "fuzz")
        case .protocolLine:
            _ = try? ClientCommand.parse(line: bytes)
            _ = try? JSONParser.parse(bytes)
        case .records:
            guard bytes.count >= 4 else { return }
            // Byte 0..3 choose four channel types; the rest is the record stream.
            let kinds = [
                "le:s16/16>>0", "be:s12/16>>4", "le:u24/32>>0", "le:s64/64>>0", "be:u8/8>>0", "le:s16/16X2>>0",
                "le:s29/32>>3", "be:s64/64>>0",
            ]
            let names = ["accel_x", "accel_y", "accel_z", "timestamp"]
            var channels: [ScanChannel] = []
            for k in 0..<4 {
                let type = try! ScanType.parse(kinds[Int(bytes[k]) % kinds.count])
                channels.append(ScanChannel(name: names[k], index: Int(bytes[k] >> 3), type: type))
            }
            let layout = RecordLayout(channels: channels)
            guard
                let decoder = try? AccelRecordDecoder(
                    layout: layout, scale: [0.01, 0.01, 0.01], offset: [0, 0, 0], mountMatrix: nil)
            else { return }
            var out: [MotionSample] = []
            _ = decoder.decodeAll(UnsafeRawBufferPointer(rebasing: bytes[4...]), into: &out)
        }
    }
}
