import MotionCore
import PlainText
import SystemPackage

/// Reads fixture CSV files (`t,ax,ay,az`, seconds and g) in chunks: the file is streamed, never loaded whole, and a
/// line is held only up to `FixtureCSVParser.maximumLineLength` bytes (a longer one is an error). Only a regular file
/// is read: a FIFO, a device or a folder is refused with what it is (`TextFile.openRegularFile`).
///
/// All or nothing: `read(path:)` returns every sample or throws at the first bad line, so nothing is replayed from
/// a file that failed to parse.
public enum FixtureFileReader {
    /// Bytes read per system call.
    public static let chunkSize = 1 << 18

    /// Reads every sample of the fixture at `path`.
    public static func read(path: String) throws(FixtureError) -> [MotionSample] {
        var samples: [MotionSample] = []
        try forEachSample(path: path) { samples.append($0) }
        return samples
    }

    /// Parses fixture CSV text held in memory; errors name `name`.
    public static func parse(_ text: String, name: String = "<memory>") throws(FixtureError) -> [MotionSample] {
        var samples: [MotionSample] = []
        var parser = FixtureCSVParser(file: name)
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }  // the text ends with a newline: no further line
        for line in lines {
            if let sample = try parser.consume(line: String(decoding: line, as: UTF8.self)) { samples.append(sample) }
        }
        try parser.finish()
        return samples
    }

    /// Calls `body` with each sample of the fixture at `path`, in order, while reading it in chunks.
    public static func forEachSample(
        path: String,
        _ body: (MotionSample) -> Void
    ) throws(FixtureError) {
        let fd: FileDescriptor
        do { fd = try TextFile.openRegularFile(path) } catch {
            switch error {
            case .notRegularFile:
                throw FixtureError(file: path, line: 0, reason: .io("\(error) (a recording is a CSV file: t,ax,ay,az)"))
            default: throw FixtureError(file: path, line: 0, reason: .io("cannot open: \(error)"))
            }
        }
        defer { try? fd.close() }

        var parser = FixtureCSVParser(file: path)
        // Room for the longest line and a read after it: the buffer never grows.
        var buffer = [UInt8](repeating: 0, count: max(chunkSize, 2 * FixtureCSVParser.maximumLineLength))
        var carried = 0  // bytes of an unfinished line kept at the start of `buffer`
        while true {
            let got: Int
            do {
                got = try buffer.withUnsafeMutableBytes { raw in
                    try fd.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[carried...]))
                }
            } catch {
                throw FixtureError(file: path, line: parser.lineNumber, reason: .io("read failed: \(error)"))
            }
            let filled = carried + got
            let consumed = try buffer.withUnsafeBytes { raw in
                Result { () throws(FixtureError) -> Int in
                    var lineStart = 0
                    var index = 0
                    while index < filled {
                        if raw[index] == UInt8(ascii: "\n") {
                            let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<index])
                            if let sample = try parser.consume(line: line) { body(sample) }
                            lineStart = index + 1
                        }
                        index += 1
                    }
                    if got == 0, lineStart < filled {  // the last line has no newline
                        let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<filled])
                        if let sample = try parser.consume(line: line) { body(sample) }
                        lineStart = filled
                    }
                    return lineStart
                }
            }.get()
            if got == 0 { break }
            carried = filled - consumed
            if carried > FixtureCSVParser.maximumLineLength { throw parser.lineTooLong() }
            if consumed > 0, carried > 0 {
                buffer.withUnsafeMutableBytes { raw in
                    raw.baseAddress!.copyMemory(from: raw.baseAddress! + consumed, byteCount: carried)
                }
            }
        }
        try parser.finish()
    }
}
