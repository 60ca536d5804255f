import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the built executables are (next to the test bundle).
let productsDirectory: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (exe as NSString).deletingLastPathComponent
}()

/// This test target's umockdev device descriptions and scripts.
let umockdevDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("umockdev")
    .path

/// ../shared/kernel-iio beside the checkout, if present.
let kernelHarness: String? = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        let candidate = url.appendingPathComponent("shared/kernel-iio/run-harness.sh").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        let sibling = url.deletingLastPathComponent().appendingPathComponent("shared/kernel-iio/run-harness.sh").path
        if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
    }
    return nil
}()

func tool(_ name: String) -> String? {
    ["/usr/bin", "/bin", "/usr/local/bin"].map { $0 + "/" + name }.first { access($0, X_OK) == 0 }
}

/// Why the umockdev tests cannot run here, or nil when they can.
let umockdevPrerequisite: String? =
    tool("umockdev-run") == nil ? "umockdev-run is missing: scripts/install-deps test installs umockdev" : nil

/// Why the tests driving umockdev's Python API (the testbed scenarios) cannot run here, or nil when they can.
let umockdevTestbedPrerequisite: String? = {
    guard tool("umockdev-wrapper") != nil else {
        return "umockdev-wrapper is missing: scripts/install-deps test installs umockdev"
    }
    let load = "import gi; gi.require_version('UMockdev', '1.0'); from gi.repository import UMockdev"
    guard (try? runProgram("/usr/bin/python3", ["-c", load], timeout: 30))?.status == 0 else {
        return
            "umockdev's Python API does not load: scripts/install-deps test installs gir1.2-umockdev-1.0 and python3-gi"
    }
    return nil
}()

/// Why the tests on the real kernel's iio_simple_dummy (both of its kernels) cannot run here, or nil when they can.
let dummyKernelPrerequisite: String? = {
    guard let harness = kernelHarness else { return "../shared/kernel-iio is not beside this checkout" }
    let folder = (harness as NSString).deletingLastPathComponent
    for kernel in ["bzImage", "bzImage-accel-xyz"]
    where !FileManager.default.fileExists(atPath: folder + "/" + kernel) {
        return "\(folder)/\(kernel) is missing (scripts/build-kernel.sh --both builds them)"
    }
    guard tool("qemu-system-x86_64") != nil else {
        return "qemu-system-x86_64 is missing: apt-get install qemu-system-x86"
    }
    return nil
}()

/// Runs a program to completion and returns (status, stdout bytes, stderr text).
func runProgram(_ path: String, _ arguments: [String], timeout: Double = 60) throws -> (
    status: Int32, output: Data, errors: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    // Each pipe is read on another thread until its end of file (an empty read), so nothing written before the exit
    // is lost or reordered.
    let outData = Mutex((data: Data(), ended: false))
    let errData = Mutex((data: Data(), ended: false))
    out.fileHandleForReading.readabilityHandler = { handle in
        let chunk = handle.availableData
        if chunk.isEmpty { handle.readabilityHandler = nil }
        outData.withLock { if chunk.isEmpty { $0.ended = true } else { $0.data.append(chunk) } }
    }
    err.fileHandleForReading.readabilityHandler = { handle in
        let chunk = handle.availableData
        if chunk.isEmpty { handle.readabilityHandler = nil }
        errData.withLock { if chunk.isEmpty { $0.ended = true } else { $0.data.append(chunk) } }
    }
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning, Date() < deadline { usleep(10_000) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    let drained = Date().addingTimeInterval(5)
    while !(outData.withLock { $0.ended } && errData.withLock { $0.ended }), Date() < drained { usleep(10_000) }
    return (
        process.terminationStatus, outData.withLock { $0.data },
        String(decoding: errData.withLock { $0.data }, as: UTF8.self)
    )
}

/// A 16-byte record of the wrist/chest layout: x, y, z as le:s12/16>>4, 2 pad bytes, le:s64 timestamp (ns).
func lis3dhRecord(x: Int, y: Int, z: Int, ns: Int64) -> [UInt8] {
    func enc(_ v: Int) -> [UInt8] {
        let raw = UInt16((v & 0xFFF) << 4)
        return [UInt8(raw & 0xFF), UInt8(raw >> 8)]
    }
    return enc(x) + enc(y) + enc(z) + [0xA5, 0x5A] + withUnsafeBytes(of: ns.littleEndian) { Array($0) }
}

/// An umockdev read script (`r DELAY_MS BYTES` lines) delivering `bytes` in chunks of the given sizes (cycled).
/// Bytes below 0x20 are escaped as `^` + (b + 64) and `^` as "^`"; a space cannot be escaped and the script parser
/// trims it at the start and end of a line, so a chunk boundary next to a space moves by a byte or two.
func readScript(_ bytes: [UInt8], chunkSizes: [Int], delayMs: Int = 5) -> Data {
    var script = Data("# generated by LinuxIIOTests\n".utf8)
    var offset = 0
    var chunk = 0
    while offset < bytes.count {
        var size = min(chunkSizes[chunk % chunkSizes.count], bytes.count - offset)
        while offset + size < bytes.count, bytes[offset + size - 1] == 0x20 || bytes[offset + size] == 0x20 {
            size += 1
        }
        var line = Data("r \(delayMs) ".utf8)
        for byte in bytes[offset..<offset + size] {
            if byte == UInt8(ascii: "^") {
                line.append(contentsOf: [UInt8(ascii: "^"), UInt8(ascii: "`")])
            } else if byte < 0x20 {
                line.append(contentsOf: [UInt8(ascii: "^"), byte + 64])
            } else {
                line.append(byte)
            }
        }
        line.append(UInt8(ascii: "\n"))
        script.append(line)
        offset += size
        chunk += 1
    }
    return script
}

/// Parses `{"t":..,"ax":..,"ay":..,"az":..}` lines.
func parseSampleLines(_ data: Data) -> [[String: Double]] {
    String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Double]
    }
}
