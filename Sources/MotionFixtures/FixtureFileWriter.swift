import MotionCore
import PlainText
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes fixture CSV files (`t,ax,ay,az`, seconds and g) so that they read back to identical samples.
///
/// The file is written to `PATH.partial` and renamed to `PATH` by `finish()`, so a reader (or a crash, or Ctrl-C)
/// never sees a truncated fixture under the final name. Numbers use Swift's shortest round-trip form.
public final class FixtureFileWriter {
    /// The final path.
    public let path: String
    /// Samples written so far.
    public private(set) var sampleCount = 0

    private let temporaryPath: String
    private let fd: FileDescriptor
    private var buffer: [UInt8] = []
    private var isClosed = false

    /// Creates `PATH.partial` (replacing an old one) and writes the header.
    public init(path: String) throws(FixtureError) {
        self.path = path
        temporaryPath = path + ".partial"
        do {
            fd = try FileDescriptor.open(
                FilePath(temporaryPath), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw FixtureError(file: temporaryPath, line: 0, reason: .io("cannot create: \(error)"))
        }
        buffer.reserveCapacity(1 << 16)
        buffer.append(contentsOf: "t,ax,ay,az\n".utf8)
    }

    deinit {
        if !isClosed {
            try? fd.close()
            _ = unlink(temporaryPath)
        }
    }

    /// Appends samples (buffered).
    public func append(_ samples: some Sequence<MotionSample>) throws(FixtureError) {
        for sample in samples {
            buffer.append(contentsOf: "\(sample.timestamp),\(sample.ax),\(sample.ay),\(sample.az)\n".utf8)
            sampleCount += 1
            if buffer.count >= 1 << 16 { try flush() }
        }
    }

    /// Flushes, syncs (`fsync`) and closes `PATH.partial`, renames it to `PATH`, then syncs the folder, so after a
    /// power cut the file under its final name is complete, or absent.
    public func finish() throws(FixtureError) {
        guard !isClosed else { return }
        try flush()
        isClosed = true
        let synced = fsync(fd.rawValue) == 0 ? nil : Errno(rawValue: errno)
        do { try fd.close() } catch {
            throw FixtureError(file: temporaryPath, line: 0, reason: .io("close failed: \(error)"))
        }
        if let synced { throw FixtureError(file: temporaryPath, line: 0, reason: .io("fsync failed: \(synced)")) }
        guard rename(temporaryPath, path) == 0 else {
            throw FixtureError(
                file: path, line: 0, reason: .io("cannot rename \(temporaryPath): \(Errno(rawValue: errno))"))
        }
        try Self.syncFolder(of: path)
    }

    /// `fsync` on the folder holding `path`, which makes a rename in it durable. A file system that cannot sync
    /// folders (`EINVAL`) is left as it is.
    private static func syncFolder(of path: String) throws(FixtureError) {
        let folder = PathText.folder(of: path)
        let folderFD: FileDescriptor
        do {
            folderFD = try FileDescriptor.open(FilePath(folder), .readOnly, options: [.directory, .closeOnExec])
        } catch {
            throw FixtureError(
                file: path, line: 0, reason: .io("cannot open its folder \(folder) to sync it: \(error)"))
        }
        defer { try? folderFD.close() }
        guard fsync(folderFD.rawValue) == 0 || errno == EINVAL else {
            throw FixtureError(
                file: path, line: 0, reason: .io("fsync of its folder \(folder) failed: \(Errno(rawValue: errno))"))
        }
    }

    /// Writes `samples` to `path` in one go.
    public static func write(_ samples: some Sequence<MotionSample>, to path: String) throws(FixtureError) {
        let writer = try FixtureFileWriter(path: path)
        try writer.append(samples)
        try writer.finish()
    }

    private func flush() throws(FixtureError) {
        guard !buffer.isEmpty else { return }
        do {
            _ = try buffer.withUnsafeBytes { try fd.writeAll($0) }
        } catch {
            throw FixtureError(file: temporaryPath, line: 0, reason: .io("write failed: \(error)"))
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
