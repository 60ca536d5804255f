import Foundation
import LinuxIIO
import MotionCore
import MotionFixtures
import RepTools
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Real libudev against an emulated sysfs (umockdev), with repd's own binaries.
@Suite(
    "IIO under umockdev", .serialized,
    .enabled(if: umockdevPrerequisite == nil, Comment(rawValue: umockdevPrerequisite ?? "")))
struct UmockdevTests {
    let umockdevRun = tool("umockdev-run")
    let repctl = productsDirectory + "/repctl"

    private func requireUmockdev() throws -> String {
        try #require(umockdevRun, "umockdev-run is missing: scripts/install-deps test installs umockdev")
    }

    @Test("the right device is chosen among a gyro, a trigger and two accelerometers")
    func deviceChoice() throws {
        let run = try requireUmockdev()
        let device = umockdevDirectory + "/several.umockdev"
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors", "--json"])
        #expect(listing.status == 0, "\(listing.errors)")
        let devices = String(decoding: listing.output, as: UTF8.self).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
        #expect(devices.map { $0["sysname"] as? String } == ["iio:device1", "iio:device2"], "the gyro is not listed")
        #expect(devices.first?["capture"] as? String == "buffered")
        #expect(devices.first?["own_triggers"] as? [String] == ["bmi160_accel-dev1"])
        #expect(devices.last?["label"] as? String == "chest")

        let byLabel = try runProgram(
            run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--device", "chest", "--poll"])
        #expect(byLabel.status == 0)
        #expect(String(decoding: byLabel.output, as: UTF8.self).contains("iio:device2 lis3dh-accel"))
        let gyro = try runProgram(
            run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--device", "bmi160_gyro"])
        #expect(gyro.status == 1)
        #expect(gyro.errors.contains("'bmi160_gyro' is not an accelerometer"))
        let missing = try runProgram(run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--device", "nope"])
        #expect(
            missing.errors.contains(
                "no IIO accelerometer matches 'nope'; found: iio:device0 'bmi160_gyro' (not an accelerometer), iio:device1 'bmi160_accel' (accelerometer), iio:device2 'lis3dh-accel' (accelerometer)"
            ))
    }

    @Test(
        "records split at arbitrary byte boundaries decode to exactly the expected samples",
        arguments: [[16], [5, 13, 1, 27, 3], [1], [47, 2]])
    func splitRecords(chunks: [Int]) throws {
        let run = try requireUmockdev()
        let count = 40
        var bytes: [UInt8] = []
        var expected: [(t: Double, x: Int, y: Int, z: Int)] = []
        let t0: Int64 = 1_700_000_000_000_000_000
        for i in 0..<count {
            let (x, y, z) = (i * 37 % 2048 - 1024, -(i * 11 % 900), 1024 + i)
            let ns = t0 + Int64(i) * 10_000_000
            bytes += lis3dhRecord(x: x, y: y, z: z, ns: ns)
            expected.append((Double(ns) / 1e9, x, y, z))
        }
        let dir = Scratch.directory("iio")
        let script = dir + "/records.script"
        try readScript(bytes, chunkSizes: chunks).write(to: URL(fileURLWithPath: script))
        let result = try runProgram(
            run,
            [
                "-d", umockdevDirectory + "/wrist.umockdev", "-s", "/dev/iio:device0=" + script, "--",
                repctl, "sensors", "--read", String(count), "--json",
            ])
        #expect(result.status == 0, "\(result.errors)")
        let samples = parseSampleLines(result.output)
        #expect(samples.count == count)
        let g = 9.80665
        let scale = 0.009576806
        for (sample, truth) in zip(samples, expected) {
            // wrist.umockdev's udev ACCEL_MOUNT_MATRIX "0, -1, 0; 1, 0, 0; 0, 0, 1" wins over the sysfs identity.
            #expect(abs(sample["t"]! - truth.t) < 1e-6)
            #expect(abs(sample["ax"]! - Double(-truth.y) * scale / g) < 1e-12)
            #expect(abs(sample["ay"]! - Double(truth.x) * scale / g) < 1e-12)
            #expect(abs(sample["az"]! - Double(truth.z) * scale / g) < 1e-12)
        }
    }

    @Test(
        "records whose in_timestamp is always 0 (kxcjk1013 under a foreign trigger) are timed on the host and advance")
    func zeroTimestamps() throws {
        let run = try requireUmockdev()
        let count = 40
        let bytes = (0..<count).flatMap { i in lis3dhRecord(x: i, y: 0, z: 1024, ns: 0) }
        let dir = Scratch.directory("iio")
        let script = dir + "/records.script"
        try readScript(bytes, chunkSizes: [32, 48, 16]).write(to: URL(fileURLWithPath: script))
        let result = try runProgram(
            run,
            [
                "-d", umockdevDirectory + "/wrist.umockdev", "-s", "/dev/iio:device0=" + script, "--",
                repctl, "sensors", "--read", String(count),
            ])
        #expect(result.status == 0, "\(result.errors)")
        let text = String(decoding: result.output, as: UTF8.self)
        #expect(
            text.contains("# timestamps: host (iio:device0 in_timestamp does not advance (first values, ns: 0)"),
            "\(text)")
        let times = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap {
            Double($0.split(separator: " ").first ?? "")
        }
        #expect(times.count == count)
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect(times.allSatisfy { $0 > 0 } && gaps.allSatisfy { $0 > 0 }, "every sample's time advances: \(times)")
        // The script delivers a chunk every 5 ms; the 40 records take about 0.1 s to arrive.
        #expect((times.last ?? 0) - (times.first ?? 0) < 2, "host times span the delivery: \(times)")
    }

    @Test(
        "libiio's iio_readdev and repd agree on the same bytes, value for value and record size",
        .enabled(
            if: tool("iio_readdev") != nil, "iio_readdev is missing: scripts/install-deps test installs libiio-utils"))
    func differentialWithLibiio() throws {
        let run = try requireUmockdev()
        let readdev = try #require(
            tool("iio_readdev"), "iio_readdev is missing: scripts/install-deps test installs libiio-utils")
        let count = 24
        var bytes: [UInt8] = []
        for i in 0..<count {
            bytes += lis3dhRecord(
                x: 10 * i - 100, y: -20 - i, z: 1024 + 9 * i, ns: 1_700_000_000_000_000_000 + Int64(i) * 20_000_000)
        }
        let dir = Scratch.directory("iio")
        let script = dir + "/records.script"
        try readScript(bytes, chunkSizes: [48]).write(to: URL(fileURLWithPath: script))
        let device = umockdevDirectory + "/wrist.umockdev"
        let libiio = try runProgram(
            run,
            [
                "-d", device, "-s", "/dev/iio:device0=" + script, "--",
                readdev, "-t", "lis3dh-accel-dev0", "-s", String(count), "-b", "4", "iio:device0",
                "accel_x", "accel_y", "accel_z", "timestamp",
            ])
        #expect(libiio.status == 0, "\(libiio.errors)")
        let ours = try runProgram(
            run,
            [
                "-d", device, "-s", "/dev/iio:device0=" + script, "--", repctl, "sensors", "--read", String(count),
                "--json",
            ])
        let samples = parseSampleLines(ours.output)
        #expect(samples.count == count)

        // libiio sized its records from the same scan elements: it must agree with repd's kernel-rule layout.
        let layout = RecordLayout(channels: [
            ScanChannel(name: "accel_x", index: 0, type: try ScanType.parse("le:s12/16>>4")),
            ScanChannel(name: "accel_y", index: 1, type: try ScanType.parse("le:s12/16>>4")),
            ScanChannel(name: "accel_z", index: 2, type: try ScanType.parse("le:s12/16>>4")),
            ScanChannel(name: "timestamp", index: 3, type: try ScanType.parse("le:s64/64>>0")),
        ])
        #expect(libiio.output.count == count * layout.recordSize)
        // Decode libiio's bytes with plain bit arithmetic (independent of repd's decoder) and compare.
        let raw = [UInt8](libiio.output)
        let g = 9.80665
        let scale = 0.009576806
        for (index, sample) in samples.enumerated() where (index + 1) * 16 <= raw.count {
            let r = Array(raw[(index * 16)..<(index * 16 + 16)])
            func s12(_ lo: UInt8, _ hi: UInt8) -> Int { Int(Int16(bitPattern: UInt16(lo) | UInt16(hi) << 8)) >> 4 }
            let x = s12(r[0], r[1])
            let y = s12(r[2], r[3])
            let z = s12(r[4], r[5])
            var ns: Int64 = 0
            for k in 0..<8 { ns |= Int64(r[8 + k]) << (8 * Int64(k)) }
            #expect(abs(sample["t"]! - Double(ns) / 1e9) < 1e-6)
            #expect(abs(sample["ax"]! - Double(-y) * scale / g) < 1e-12)
            #expect(abs(sample["ay"]! - Double(x) * scale / g) < 1e-12)
            #expect(abs(sample["az"]! - Double(z) * scale / g) < 1e-12)
        }
    }

    @Test("a device without a buffer falls back to polling in_accel_*_raw")
    func pollingFallback() throws {
        let run = try requireUmockdev()
        let result = try runProgram(
            run,
            [
                "-d", umockdevDirectory + "/nobuffer.umockdev", "--", repctl, "sensors", "--read", "5", "--rate", "50",
            ])
        #expect(result.status == 0, "\(result.errors)")
        let text = String(decoding: result.output, as: UTF8.self)
        #expect(text.contains("via polling (the device has no usable buffer)"))
        // adxl345: x=5, y=-5, z=256 counts at 0.0383 m/s² per count.
        #expect(text.contains("0.0195  -0.0195  0.9998"))
        let lines = text.split(separator: "\n").dropFirst()
        let times = lines.compactMap { Double($0.split(separator: " ").first ?? "") }
        try #require(times.count == 5, "\(text)")
        let spacing = zip(times, times.dropFirst()).map { $1 - $0 }
        // Never faster than the rate (a bound a busy machine cannot break); and polling at the rate asked for, not at
        // some slow default such as 1 Hz: the median gap under 0.5 s, which only a stall of half a second in three of
        // the four gaps could break. Under a sanitizer (REPD_SANITIZER; scripts/test runs that beside another) only
        // the first.
        print("polling at 50 Hz: gaps \(spacing.map { Int(($0 * 1000).rounded()) }) ms")
        #expect(spacing.allSatisfy { $0 > 0.01 }, "never faster than 50 Hz: \(spacing)")
        if ProcessInfo.processInfo.environment["REPD_SANITIZER"] == nil {
            #expect(spacing.sorted()[spacing.count / 2] < 0.5, "at the rate asked for, not a slow default: \(spacing)")
        }
    }

    @Test(
        "a buffer that delivers nothing within the deadline falls back to polling, and both captures restore",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func silentBufferFallback() throws {
        let observed = try testbed("silent", program: repctl)
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        let during = try #require(observed["during_buffered"] as? [String: String])
        #expect(during["buffer/enable"] == "1", "the buffered capture was tried first")
        let stdout = observed["stdout"] as? String ?? ""
        // repctl's delivery deadline is min(2, timeout / 2): 2 s with --timeout 4.
        #expect(stdout.contains("via polling (the buffer delivered nothing within 2.0 s)"), "\(stdout)")
        // The three samples asked for, polled (the header lines start with #).
        #expect(stdout.split(separator: "\n").filter { !$0.hasPrefix("#") }.count == 3)
        let before = try #require(observed["before"] as? [String: String])
        #expect(observed["after"] as? [String: String] == before, "everything is put back")
    }

    /// wrist.umockdev with `edit` applied, written to a temporary file.
    private func wristVariant(_ edit: (String) -> String) throws -> String {
        let text = try String(contentsOfFile: umockdevDirectory + "/wrist.umockdev", encoding: .utf8)
        let path = Scratch.file("wrist", suffix: ".umockdev")
        try edit(text).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a missing scale is an error named in the listing, and capture fails instead of reading 0 g")
    func missingScale() throws {
        let run = try requireUmockdev()
        let device = try wristVariant { $0.replacingOccurrences(of: "A: in_accel_scale=0.009576806\\n\n", with: "") }
        let why =
            "no in_accel_x_scale, in_accel_y_scale, in_accel_z_scale or in_accel_scale: counts cannot be converted to g"
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors"])
        #expect(listing.status == 0, "\(listing.errors)")
        #expect(
            String(decoding: listing.output, as: UTF8.self).contains(
                "  error     /sys/devices/platform/lis3dh-wrist/iio:device0: \(why)"))
        for extra in [[], ["--poll"]] {
            let read = try runProgram(
                run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--timeout", "4"] + extra)
            #expect(read.status == 1, "\(extra): no samples of 0 g")
            #expect(read.errors.contains(why), "\(extra): \(read.errors)")
        }
        let garbled = try wristVariant {
            $0.replacingOccurrences(of: "in_accel_scale=0.009576806", with: "in_accel_scale=0,0095")
        }
        let bad = try runProgram(
            run, ["-d", garbled, "--", repctl, "sensors", "--read", "2", "--poll", "--timeout", "4"])
        #expect(bad.status == 1)
        #expect(bad.errors.contains("iio:device0/in_accel_scale: '0,0095' is not a number"), "\(bad.errors)")
    }

    @Test(
        "a scale of 0 or below or above 100, or an offset that is not a number, is an error named in the listing, and capture fails",
        arguments: [
            (
                "in_accel_scale=0\\n",
                "in_accel_scale: '0' is not a usable scale: it must be a number above 0 and at most 100 (m/s² per count)"
            ),
            (
                "in_accel_scale=-0.009576806\\n",
                "in_accel_scale: '-0.009576806' is not a usable scale: it must be a number above 0 and at most 100 (m/s² per count)"
            ),
            (
                "in_accel_scale=1e308\\n",
                "in_accel_scale: '1e308' is not a usable scale: it must be a number above 0 and at most 100 (m/s² per count)"
            ),
            ("in_accel_scale=0.009576806\\n\nA: in_accel_offset=abc\\n", "in_accel_offset: 'abc' is not a number"),
        ])
    func unusableScaleOrOffset(attribute: String, why: String) throws {
        let run = try requireUmockdev()
        let device = try wristVariant { $0.replacingOccurrences(of: "in_accel_scale=0.009576806\\n", with: attribute) }
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors"])
        let text = String(decoding: listing.output, as: UTF8.self)
        #expect(text.contains("  error     /sys/devices/platform/lis3dh-wrist/iio:device0/\(why)"), "\(text)")
        let read = try runProgram(
            run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--poll", "--timeout", "4"])
        #expect(read.status == 1, "no samples of 0 g, mirrored or shifted")
        #expect(read.errors.contains("iio:device0/\(why)"), "\(read.errors)")
    }

    @Test(
        "an accel _type missing beside its _en and _index, or two accel channels at one index, is an error naming the file; capture fails instead of polling with no word why",
        arguments: [
            (
                "A: scan_elements/in_accel_z_type=le:s12/16>>4\\n\n", "",
                "scan_elements/in_accel_z_type: missing, though in_accel_z_en or in_accel_z_index exists"
            ),
            (
                "A: scan_elements/in_accel_y_index=1\\n", "A: scan_elements/in_accel_y_index=0\\n",
                "scan_elements/in_accel_y_index: 0 is also in_accel_x_index: two channels at one place"
            ),
        ])
    func ambiguousLayout(line: String, replacement: String, why: String) throws {
        let run = try requireUmockdev()
        let device = try wristVariant {
            #expect($0.contains(line), "the recipe still has the line to change")
            return $0.replacingOccurrences(of: line, with: replacement)
        }
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors"])
        let text = String(decoding: listing.output, as: UTF8.self)
        #expect(text.contains("  error     /sys/devices/platform/lis3dh-wrist/iio:device0/\(why)"), "\(text)")
        let read = try runProgram(run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--timeout", "4"])
        #expect(read.status == 1)
        #expect(read.errors.contains("iio:device0/\(why)"), "\(read.errors)")
    }

    @Test(
        "a device node udev names that does not exist (a container) is listed as missing and polled, saying why",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func missingNodeIsPolled() throws {
        let observed = try testbed("nonode", program: repctl)
        let listing = observed["listing"] as? String ?? ""
        #expect(listing.contains("  node      /dev/iio:device0 (does not exist: polled instead)"), "\(listing)")
        #expect(listing.contains("  capture   polling"), "\(listing)")
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        let output = observed["stdout"] as? String ?? ""
        #expect(
            output.contains(
                "via polling (/dev/iio:device0 does not exist (a container that does not pass the device in?))"),
            "\(output)")
        #expect(observed["after"] as? [String: String] == observed["before"] as? [String: String])
    }

    @Test("a sampling frequency list that does not parse is a warning naming the file; the sensor is still read")
    func malformedFrequencyList() throws {
        let run = try requireUmockdev()
        let device = try wristVariant {
            $0.replacingOccurrences(
                of: "sampling_frequency_available=1 10 25 50 100 200 400", with: "sampling_frequency_available=1 abc 25"
            )
        }
        let why =
            "/sys/devices/platform/lis3dh-wrist/iio:device0/sampling_frequency_available: '1 abc 25' is not a list of numbers"
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors"])
        let text = String(decoding: listing.output, as: UTF8.self)
        #expect(listing.status == 0 && text.contains("  warning   \(why)"), "\(text)")
        let read = try runProgram(
            run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--poll", "--timeout", "4"])
        #expect(read.status == 0, "\(read.errors)")
        #expect(read.errors.contains(why), "logged at capture: \(read.errors)")
    }

    @Test(
        "Ctrl-C, SIGTERM or SIGHUP during sensors --read stops it (exit 130, the samples so far printed) and puts the device back",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")),
        arguments: ["SIGINT", "SIGTERM", "SIGHUP"])
    func interruptedReadRestores(signal: String) throws {
        let observed = try testbed(signal, program: repctl)
        let before = try #require(observed["before"] as? [String: String])
        let during = try #require(observed["during"] as? [String: String])
        #expect(during["buffer/enable"] == "1", "the signal came while reading")
        #expect(observed["exit"] as? Int == 130, "\(observed["stderr"] ?? "")")
        #expect((observed["stderr"] as? String ?? "").contains("repctl: stopped (interrupted) after"))
        #expect((observed["samples"] as? Int ?? 0) > 0, "the samples read so far are printed")
        #expect(observed["after"] as? [String: String] == before, "everything is put back")
    }

    @Test("an unparseable accel _type fails capture with the file and why; another channel's is listed as ignored")
    func unparseableScanType() throws {
        let run = try requireUmockdev()
        let device = try wristVariant {
            $0.replacingOccurrences(of: "in_accel_x_type=le:s12/16>>4", with: "in_accel_x_type=le:s12/16>>x")
                .replacingOccurrences(of: "in_temp_type=le:s16/16>>0", with: "in_temp_type=q16")
        }
        let elements = "/sys/devices/platform/lis3dh-wrist/iio:device0/scan_elements/"
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors"])
        let text = String(decoding: listing.output, as: UTF8.self)
        #expect(
            text.contains(
                "  error     \(elements)in_accel_x_type: scan type 'le:s12/16>>x': expected the shift and nothing after it"
            ), "\(text)")
        #expect(
            text.contains("  ignored   \(elements)in_temp_type: scan type 'q16': expected 'be:' or 'le:'"), "\(text)")
        let read = try runProgram(run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--timeout", "4"])
        #expect(read.status == 1, "not a silent fallback to polling")
        #expect(read.errors.contains("\(elements)in_accel_x_type: scan type 'le:s12/16>>x'"), "\(read.errors)")
    }

    @Test("a malformed udev mount matrix is reported and the sysfs one is used; capture logs a warning")
    func badMountMatrix() throws {
        let run = try requireUmockdev()
        let device = try wristVariant {
            $0.replacingOccurrences(
                of: "ACCEL_MOUNT_MATRIX=0, -1, 0; 1, 0, 0; 0, 0, 1", with: "ACCEL_MOUNT_MATRIX=0, -1, 0; 1, 0")
        }
        let why = "udev ACCEL_MOUNT_MATRIX: mount matrix '0, -1, 0; 1, 0' does not have 3 rows separated by ';'"
        let listing = try runProgram(run, ["-d", device, "--", repctl, "sensors"])
        let text = String(decoding: listing.output, as: UTF8.self)
        #expect(
            text.contains("  mount     1.0, 0.0, 0.0; 0.0, 1.0, 0.0; 0.0, 0.0, 1.0 (in_accel_mount_matrix)"), "\(text)")
        #expect(text.contains("  warning   \(why)"), "\(text)")
        let read = try runProgram(run, ["-d", device, "--", repctl, "sensors", "--read", "2", "--poll"])
        #expect(read.status == 0, "\(read.errors)")
        #expect(read.errors.contains("warning") && read.errors.contains(why), "\(read.errors)")
    }

    @Test(
        "an attribute that cannot be put back at stop is logged with its file",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func failedRestore() throws {
        let observed = try testbed("restore", program: repctl)
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        let stderr = observed["stderr"] as? String ?? ""
        #expect(
            stderr.contains(
                "/sys/devices/platform/lis3dh-wrist/iio:device0/scan_elements/in_temp_en: cannot write '1' to it: it does not exist"
            ), "\(stderr)")
    }

    /// Runs a testbed scenario (umockdev's Python API) on `device` (wrist.umockdev, or a variant of it) and returns
    /// what it observed.
    private func testbed(
        _ scenario: String, program: String, device: String = umockdevDirectory + "/wrist.umockdev"
    ) throws -> [String: Any] {
        let wrapper = try #require(
            tool("umockdev-wrapper"), "umockdev-wrapper is missing: scripts/install-deps test installs umockdev")
        let out = Scratch.file("testbed", suffix: ".json")
        let result = try runProgram(
            wrapper, ["/usr/bin/python3", umockdevDirectory + "/testbed.py", scenario, device, program, out],
            timeout: 120)
        #expect(result.status == 0, "\(result.errors)")
        let data = try Data(contentsOf: URL(fileURLWithPath: out))
        return try #require(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(
        "setup leaves the expected values in sysfs and stop restores exactly what was there",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func setupAndRestore() throws {
        let observed = try testbed("setup", program: repctl)
        let before = try #require(observed["before"] as? [String: String])
        let during = try #require(observed["during"] as? [String: String])
        let after = try #require(observed["after"] as? [String: String])
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        #expect(during["buffer/enable"] == "1")
        #expect(during["sampling_frequency"] == "100", "90 Hz asked: the nearest available at or above is 100")
        #expect(during["trigger/current_trigger"] == "lis3dh-accel-dev0", "the device's own trigger")
        #expect(during["scan_elements/in_accel_x_en"] == "1")
        #expect(during["scan_elements/in_accel_y_en"] == "1")
        #expect(during["scan_elements/in_accel_z_en"] == "1")
        #expect(during["scan_elements/in_timestamp_en"] == "1")
        #expect(during["scan_elements/in_temp_en"] == "0", "channels repd does not read are switched off")
        #expect(during["buffer/watermark"] == "2", "20 ms of samples at 100 Hz")
        #expect(during["buffer/length"] == "200", "2 s of samples")
        #expect(after == before, "everything is put back")
        let lines = (observed["stdout"] as? String ?? "").split(separator: "\n")
        #expect(lines.count == 60)
    }

    @Test(
        "an attribute repd may not write is named with the fix, nothing is left changed, and what was never changed is not written back",
        .enabled(if: tool("setpriv") != nil, "needs setpriv (util-linux) to run repctl as another user"),
        .enabled(if: getuid() == 0, "needs root: setpriv changes to the user nobody only for root"),
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func permissionDenied() throws {
        let observed = try testbed("permission", program: repctl)
        #expect(observed["exit"] as? Int == 1)
        let stderr = observed["stderr"] as? String ?? ""
        #expect(
            stderr.contains(
                "/sys/devices/platform/lis3dh-wrist/iio:device0/buffer/enable: cannot write '1' to it: permission denied; run repd as a member of group 'repd' with systemd/60-repd.rules installed"
            ), "\(stderr)")
        #expect(
            !stderr.contains("not restored as found"),
            "what was never changed is not written back (and no error about it is logged): \(stderr)")
        let before = try #require(observed["before"] as? [String: String])
        let after = try #require(observed["after"] as? [String: String])
        #expect(after == before)
    }

    @Test(
        "a buffer that stops delivering after data flowed is reported once, the capture restarts, and samples resume",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func stalledBuffer() throws {
        let observed = try testbed("stall", program: productsDirectory + "/repd")
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        #expect((observed["samples_before_stall"] as? Int ?? 0) > 20)
        let sensor = (observed["sensor"] as? [[String: Any]] ?? []).filter { $0["state"] as? String != "connected" }
        let states = sensor.compactMap { $0["state"] as? String }
        // The restarted buffer delivers again (`back`); on a machine too busy to feed it within the delivery deadline
        // repd polls instead (`polling`): either way the capture was started again, and said so once.
        #expect(states == ["lost", "back"] || states == ["lost", "polling"], "\(sensor)")
        let reason = sensor.first?["message"] as? String ?? ""
        #expect(
            reason.hasPrefix("iio:device0: the buffer stopped delivering (nothing for 5.0 s after data flowed")
                && reason.hasSuffix("; restarting the capture"), "\(reason)")
        #expect((observed["samples_after_restart"] as? Int ?? 0) > 20, "samples flow again")
        let status = try #require(observed["status"] as? [String: Any], "no status reply")
        #expect((status["iio"] as? [String: Any])?["reconnects"] as? Int == 1, "\(status)")
        let stderr = observed["stderr"] as? String ?? ""
        #expect(stderr.components(separatedBy: "the buffer stopped delivering").count == 2, "logged once: \(stderr)")
        #expect(observed["after"] as? [String: String] == observed["before"] as? [String: String])
    }

    @Test(
        "a raw value that does not parse while polling is one invalidData error naming the value and the file, not a state per retry",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func unparseableRawValue() throws {
        let observed = try testbed("badvalue", program: productsDirectory + "/repd")
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        let sensor = observed["sensor"] as? [[String: Any]] ?? []
        // The error once, though repd tried again every 0.5 s for 3 s; `polling` once the value parses again.
        #expect(sensor.compactMap { $0["state"] as? String } == ["error", "polling"], "\(sensor)")
        #expect(sensor.first?["kind"] as? String == "invalidData", "\(sensor)")
        #expect(
            sensor.first?["message"] as? String
                == "/sys/devices/platform/lis3dh-wrist/iio:device0/in_accel_z_raw: 'oops' is not a number (raw counts expected)",
            "\(sensor)")
        let stderr = observed["stderr"] as? String ?? ""
        #expect(stderr.components(separatedBy: "'oops' is not a number").count == 2, "logged once: \(stderr)")
        #expect(stderr.components(separatedBy: "sensor: polling instead").count == 2, "logged once: \(stderr)")
    }

    @Test(
        "raw reads that fail while the device is there are lost only after several in a row, and reported once",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func unreadableRawValue() throws {
        let observed = try testbed("unreadable", program: productsDirectory + "/repd")
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        let sensor = observed["sensor"] as? [[String: Any]] ?? []
        #expect(sensor.compactMap { $0["state"] as? String } == ["lost"], "no polling without a sample: \(sensor)")
        #expect(
            sensor.first?["message"] as? String
                == "/sys/devices/platform/lis3dh-wrist/iio:device0/in_accel_x_raw: Is a directory (10 reads in a row failed)",
            "\(sensor)")
    }

    @Test(
        "a scan element the scanner ignores (its type does not parse) is switched off during capture and put back",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func ignoredChannelSwitchedOff() throws {
        let device = try wristVariant {
            #expect($0.contains("in_temp_type=le:s16/16>>0") && $0.contains("in_temp_en=1"))
            return $0.replacingOccurrences(of: "in_temp_type=le:s16/16>>0", with: "in_temp_type=q16")
        }
        let observed = try testbed("setup", program: repctl, device: device)
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        let during = try #require(observed["during"] as? [String: String])
        #expect(during["buffer/enable"] == "1")
        #expect(during["scan_elements/in_temp_en"] == "0", "its bytes would shift every record")
        #expect(observed["after"] as? [String: String] == observed["before"] as? [String: String])
    }

    @Test("records without a timestamp channel are timed on the host, and the capture says so with its first samples")
    func noTimestampChannel() throws {
        let run = try requireUmockdev()
        let device = try wristVariant {
            let lines = [
                "A: scan_elements/in_timestamp_en=0\\n\n", "A: scan_elements/in_timestamp_index=3\\n\n",
                "A: scan_elements/in_timestamp_type=le:s64/64>>0\\n\n",
            ]
            #expect(lines.allSatisfy($0.contains), "the recipe still has the timestamp channel")
            return lines.reduce($0) { $0.replacingOccurrences(of: $1, with: "") }
        }
        // x, y, z as le:s12/16>>4: 6-byte records.
        let count = 30
        let bytes = (0..<count).flatMap { i in Array(lis3dhRecord(x: i, y: -i, z: 1024, ns: 0).prefix(6)) }
        let script = Scratch.directory("iio") + "/records.script"
        try readScript(bytes, chunkSizes: [18, 30, 12]).write(to: URL(fileURLWithPath: script))
        let result = try runProgram(
            run,
            [
                "-d", device, "-s", "/dev/iio:device0=" + script, "--", repctl, "sensors", "--read", String(count),
                "--timeout", "20",
            ])
        #expect(result.status == 0, "\(result.errors)")
        let text = String(decoding: result.output, as: UTF8.self)
        #expect(
            text.contains("# timestamps: host (iio:device0 records carry no timestamp channel; CLOCK_MONOTONIC"),
            "the timing (and the state with it) is published: \(text)")
        let rows = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ") }
        #expect(rows.count == count)
        let times = rows.compactMap { Double($0.first ?? "") }
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 > $0 }, "\(times)")
        // wrist.umockdev's mount matrix: ax = -y, so sample i reads i counts of 0.009576806 m/s².
        let ax = rows.compactMap { $0.count > 1 ? Double($0[1]) : nil }
        #expect(ax.count == count && abs((ax.last ?? 0) - Double(count - 1) * 0.009576806 / 9.80665) < 1e-4, "\(ax)")
    }

    @Test(
        "a device removed and re-added mid-stream is reported lost, then back, and samples resume",
        .enabled(if: umockdevTestbedPrerequisite == nil, Comment(rawValue: umockdevTestbedPrerequisite ?? "")))
    func hotplug() throws {
        let observed = try testbed("hotplug", program: productsDirectory + "/repd")
        #expect(observed["exit"] as? Int == 0, "\(observed["stderr"] ?? "")")
        #expect((observed["samples_before_removal"] as? Int ?? 0) > 20)
        #expect(observed["samples_while_removed"] as? Int == 0)
        #expect((observed["samples_after_return"] as? Int ?? 0) > 20)
        // "connected" may or may not come before the client's subscription takes effect.
        let states = (observed["sensor_states"] as? [String] ?? []).filter { $0 != "connected" }
        #expect(states == ["lost", "back"])
        let stderr = observed["stderr"] as? String ?? ""
        #expect(stderr.contains("sensor lost: iio:device0 was removed (udev)"))
        let after = try #require(observed["after_readded"] as? [String: String])
        #expect(after["buffer/enable"] == "0", "the device that came back is restored at shutdown too")
        #expect(after["scan_elements/in_temp_en"] == "1")
        // status counts what the reader did: records from both devices, one reconnection.
        let status = try #require(observed["status"] as? [String: Any], "no status reply")
        let iio = try #require(status["iio"] as? [String: Any], "\(status)")
        #expect(iio["reconnects"] as? Int == 1)
        let records = iio["records"] as? Int ?? 0
        #expect(
            records >= (observed["samples_before_removal"] as? Int ?? 0)
                + (observed["samples_after_return"] as? Int ?? 0))
        #expect(iio["bytes_discarded"] is Int)
    }
}

/// A real Linux 6.1 kernel with the buffered iio_simple_dummy device, under qemu (../shared/kernel-iio). Shown as
/// skipped, with the reason, when that folder is not beside the checkout.
@Suite(
    "IIO on a real kernel (qemu)", .serialized,
    .enabled(if: dummyKernelPrerequisite == nil, Comment(rawValue: dummyKernelPrerequisite ?? "")))
struct KernelHarnessTests {
    @Test(
        "repctl finds the device with libudev (no udevd), configures it itself and decodes values written to in_accel_*_raw"
    )
    func realKernel() throws {
        let harness = try #require(kernelHarness)
        let dev = "/sys/bus/iio/devices/iio:device0"
        let result = try runProgram(
            harness,
            [
                "-k", "bzImage-accel-xyz", "--channels", "in_accel_x in_accel_y in_accel_z in_timestamp", "--no-enable",
                "--quiet", "-t", "150", "-b", productsDirectory + "/repctl",
                "-p",
                "echo 8192 > \(dev)/in_accel_z_raw; echo -1000 > \(dev)/in_accel_x_raw; echo 4000 > \(dev)/in_accel_y_raw",
                "-r",
                "repctl sensors --json && repctl sensors --read 20 --json && echo ENABLE=$(cat \(dev)/buffer0/enable) TRIGGER=$(cat \(dev)/trigger/current_trigger)",
            ], timeout: 200)
        let console = String(decoding: result.output, as: UTF8.self) + result.errors
        #expect(result.status == 0, "\(console.suffix(3000))")
        let lines = console.split(separator: "\n")
        let listing = lines.first { $0.hasPrefix("{\"sysname\"") }
        #expect(listing?.contains("\"udev_initialized\":false") == true, "no udevd in the guest")
        #expect(listing?.contains("\"accel_z\",\"index\":5,\"type\":\"le:s16/16>>0\"") == true)
        let samples = lines.filter { $0.hasPrefix("{\"t\"") }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Double]
        }
        try #require(samples.count == 20, "\(console.suffix(4000))")
        let scale = 0.000598550 / 9.80665
        for sample in samples {
            #expect(abs(sample["ax"]! - -1000 * scale) < 1e-9)
            #expect(abs(sample["ay"]! - 4000 * scale) < 1e-9)
            #expect(abs(sample["az"]! - 8192 * scale) < 1e-9)
        }
        let times = samples.map { $0["t"]! }
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        // The trigger's rate, loosely: a guest under TCG on a busy host may fire it late, so the median gap is held
        // only under 0.5 s (a trigger left at some slow default would break it).
        #expect(
            gaps.allSatisfy { $0 > 0 } && gaps.sorted()[gaps.count / 2] < 0.5,
            "kernel timestamps advance, at the 100 Hz trigger's pace, not a slow default: \(gaps)")
        #expect(console.contains("ENABLE=0 TRIGGER=trig0"), "the buffer is left disabled and the trigger as found")
    }

    @Test("record from the real device while a shell loop writes a motion into in_accel_z_raw, then replay it")
    func realKernelRoundTrip() throws {
        let harness = try #require(kernelHarness)
        let dev = "/sys/bus/iio/devices/iio:device0"
        // z = 1 g + 0.5 g · sin(2π t / 2.5 s), t read from the guest's /proc/uptime (centiseconds) at every step, so
        // the period is the clock's however slowly the guest runs the loop (a loop of integer rotation steps made a
        // cycle of 2 s unloaded and over 3 s with other emulators beside it: 0 reps in 12 s once). busybox's awk has
        // no sin(): Bhaskara's approximation over each half cycle of 125 cs, within 0.2 % of a sine. 14 s of motion;
        // the 12 s recording holds 4.8 cycles.
        let motion =
            "(s=; while :; do read u r < /proc/uptime; c=${u%.*}${u#*.}; [ -z \"$s\" ] && s=$c; t=$((c - s)); "
            + "[ $t -gt 1400 ] && break; p=$((t % 250)); q=$((p % 125)); "
            + "v=$((8192 * 16 * q * (125 - q) / (78125 - 4 * q * (125 - q)))); [ $p -ge 125 ] && v=$((-v)); "
            + "echo $((16384 + v)) > \(dev)/in_accel_z_raw; sleep 0.01; done) &"
        let result = try runProgram(
            harness,
            [
                "-k", "bzImage-accel-xyz", "--channels", "in_accel_x in_accel_y in_accel_z in_timestamp", "--no-enable",
                "--quiet", "-t", "150", "-b", productsDirectory + "/repctl", "-p", motion,
                "-r",
                "repctl record --direct --out /tmp/k.csv --duration 12s --quiet && echo CSV-BEGIN && cat /tmp/k.csv && echo CSV-END",
            ], timeout: 200)
        let console = String(decoding: result.output, as: UTF8.self)
        #expect(result.status == 0, "\(console.suffix(2000)) \(result.errors.suffix(1000))")
        var inside = false
        var csv: [String] = []
        for line in console.split(separator: "\n").map({ $0.replacingOccurrences(of: "\r", with: "") }) {
            if line == "CSV-END" { inside = false }
            if inside { csv.append(line) }
            if line == "CSV-BEGIN" { inside = true }
        }
        let samples = try FixtureFileReader.parse(csv.joined(separator: "\n"), name: "recorded in the guest")
        #expect(samples.count > 600, "about 100 Hz for 12 s")
        let z = samples.map(\.az)
        #expect(
            (z.min() ?? 1) < 0.6 && (z.max() ?? 1) > 1.4,
            "the written motion shows up scaled: z from \(z.min() ?? 0) to \(z.max() ?? 0) g")
        let reps = Evaluator.countReps(in: samples, batchSize: 10)
        print("real kernel round trip: \(samples.count) samples recorded, replay counts \(reps) reps")
        // 4.8 cycles of 2.5 s in the recording: 3 to 6 reps (the first may be missed while the filters settle).
        #expect((3...6).contains(reps), "each swing of the motion is a rep: counted \(reps)")
    }

    @Test("with no trigger at all, repd creates an hrtimer trigger through configfs, reads, and removes it again")
    func hrtimerTrigger() throws {
        let harness = try #require(kernelHarness)
        let dev = "/sys/bus/iio/devices/iio:device0"
        let result = try runProgram(
            harness,
            [
                "-k", "bzImage-accel-xyz", "--no-trigger", "--quiet", "-t", "150", "-b", productsDirectory + "/repctl",
                "-r",
                "repctl sensors --read 20 --json --hrtimer --rate 100 && echo LEFT=$(ls /sys/kernel/config/iio/triggers/hrtimer | wc -l) TRIGGER=[$(cat \(dev)/trigger/current_trigger)]",
            ], timeout: 200)
        let console = String(decoding: result.output, as: UTF8.self)
        #expect(result.status == 0, "\(console.suffix(2000))")
        let samples = console.split(separator: "\n").filter { $0.hasPrefix("{\"t\"") }
        #expect(samples.count == 20)
        #expect(console.contains("LEFT=0 TRIGGER=[]"), "the trigger is removed and the device's trigger is empty again")
    }
}
