import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Why the real-driver tests cannot run here, or nil when they can.
let realDriverPrerequisite: String? = {
    guard let harness = kernelHarness else {
        return "../shared/kernel-iio is not beside this checkout, so real drivers cannot run"
    }
    let folder = (harness as NSString).deletingLastPathComponent
    guard FileManager.default.fileExists(atPath: folder + "/bzImage-i2c-accel") else {
        return "\(folder)/bzImage-i2c-accel is missing (scripts/build-kernel.sh --i2c-accel builds it)"
    }
    guard tool("qemu-system-x86_64") != nil else {
        return "qemu-system-x86_64 is missing: apt-get install qemu-system-x86"
    }
    return nil
}()

/// One workout on a real in-tree driver under qemu: repd runs in the guest with `sensor.device = device`, a busybox
/// loop writes a 0.5 Hz sine of ±0.5 g on z (around 1 g) into the chip's registers with `accel-set`, and the test
/// reads what repd counted and what the device looked like before, during and after.
struct RealDriverWorkout {
    /// `--i2c-accel` specs; the first one gets the harness's trigger and enabled buffer.
    var chips: [String]
    /// The driver repd is configured to read (its `name` attribute).
    var device: String
    /// Counts per g of the moved chip (9.80665 / its default scale).
    var countsPerG: Int
    /// `accel-set` arguments before the axes (`-d NAME` for a chip other than the first).
    var setTarget = ""
    /// A command run in the guest once repd delivers samples (e.g. to move another chip).
    var alsoDuring = ""
    /// Full cycles written.
    var cycles = 10

    /// The result of one run.
    struct Outcome {
        var status: Int32
        var console: String
        /// Lines that start with `tag ` (the tag removed).
        func lines(_ tag: String) -> [String] {
            console.split(separator: "\n").map { $0.replacingOccurrences(of: "\r", with: "") }
                .filter { $0.hasPrefix(tag + " ") }.map { String($0.dropFirst(tag.count + 1)) }
        }
        func line(_ tag: String) -> String? { lines(tag).first }
        /// The `status` reply repd gave after the workout.
        var status_: [String: Any]? {
            line("STATUS").flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
        var reps: Int? { status_?["reps"] as? Int }
        var timestamps: String? { (status_?["iio"] as? [String: Any])?["timestamps"] as? String }
        /// Sample times (s) of the reps repd announced.
        var repTimes: [Double] {
            lines("EVENT").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { $0["type"] as? String == "rep" }.compactMap { $0["t"] as? Double }
        }
    }

    /// The sine as a table of `accel-set` z values, 50 per 2 s cycle (one per 4 centiseconds of /proc/uptime).
    private var table: String {
        (0..<50).map { i in
            String(countsPerG + Int((Double(countsPerG) / 2 * sin(2 * Double.pi * Double(i) / 50)).rounded()))
        }
        .joined(separator: " ")
    }

    /// Guest shell lines that write repd's configuration for `device`, start repd (pid in `$P`) and wait until it
    /// delivers samples.
    static func startRepd(device: String) -> String {
        let config =
            "[sensor]\\nprovider = \\\"iio\\\"\\ndevice = \\\"\(device)\\\"\\nrate_hz = 100.0\\nhrtimer_trigger = true\\n[socket]\\npath = \\\"/tmp/repd.sock\\\"\\n"
        return """
            printf "\(config)" > /tmp/repd.toml
            repd --config /tmp/repd.toml --quiet > /tmp/repd.out 2> /tmp/repd.err &
            P=$!
            n=0; until repctl status --json --socket /tmp/repd.sock 2>/dev/null | grep -Eq '"sensor_state":"(connected|polling)"'; do sleep 0.1; n=$((n+1)); [ $n -gt 150 ] && break; done
            """
    }

    /// Boots the harness with `chips` (the first one flat at 1 g), runs `script` in the guest with repd and repctl.
    static func boot(_ chips: [String], countsPerG: Int, script: String) throws -> Outcome {
        let harness = try #require(kernelHarness)
        var arguments = chips.flatMap { ["--i2c-accel", $0] }
        arguments += [
            "--accel-init", "0 0 \(countsPerG)", "--quiet", "-t", "100", "-b", productsDirectory + "/repd",
            "-b", productsDirectory + "/repctl", "-r", script,
        ]
        let result = try runProgram(harness, arguments, timeout: 130)
        return Outcome(status: result.status, console: String(decoding: result.output, as: UTF8.self) + result.errors)
    }

    func run() throws -> Outcome {
        // The z value follows /proc/uptime (centiseconds), not the loop's speed: under TCG a loop step takes
        // 20-40 ms, and the period stays 2 s whatever it takes.
        let script = """
            for d in /sys/bus/iio/devices/iio:device*; do [ "$(cat $d/name)" = \(device) ] && D=$d; done
            state() { echo "$1 enable=$(cat $D/buffer/enable 2>/dev/null) clock=$(cat $D/current_timestamp_clock 2>/dev/null) trigger=[$(cat $D/trigger/current_trigger 2>/dev/null)] en=$(cat $D/scan_elements/*_en 2>/dev/null | tr -d '\\n') freq=$(cat $D/in_accel_sampling_frequency $D/sampling_frequency 2>/dev/null)"; }
            state BEFORE
            \(Self.startRepd(device: device))
            repctl subscribe --json --events rep,set,sensor --socket /tmp/repd.sock > /tmp/events 2>&1 &
            S=$!
            state DURING
            echo "UPTIME-START $(cut -d' ' -f1 /proc/uptime)"
            \(alsoDuring)
            set -- \(table)
            read up rest < /proc/uptime; start=$(( ${up%.*} * 100 + 1${up#*.} - 100 )); e=0
            while [ $e -lt \(cycles * 200) ]; do
              read up rest < /proc/uptime; e=$(( ${up%.*} * 100 + 1${up#*.} - 100 - start ))
              eval z=\\${$(( (e % 200) / 4 + 1 ))}
              accel-set \(setTarget) 0 0 $z; sleep 0.02
            done
            accel-set \(setTarget) 0 0 \(countsPerG)
            echo "UPTIME-END $(cut -d' ' -f1 /proc/uptime)"
            n=0; until repctl status --json --socket /tmp/repd.sock | grep -q '"reps":\(cycles)'; do sleep 0.2; n=$((n+1)); [ $n -gt 20 ] && break; done
            repctl status --json --socket /tmp/repd.sock | sed 's/^/STATUS /'
            kill -TERM $P; wait $P; echo "REPD-EXIT $?"
            kill $S 2>/dev/null
            state AFTER
            echo "HRTIMER-LEFT $(ls /sys/kernel/config/iio/triggers/hrtimer | grep -c '^repd-')"
            sed 's/^/EVENT /' /tmp/events; sed 's/^/REPD-LOG /' /tmp/repd.err
            """
        return try Self.boot(chips, countsPerG: countsPerG, script: script)
    }
}

/// Real, unmodified in-tree accelerometer drivers (Linux 6.1) bound to i2c-stub chips under qemu, read by repd in the
/// guest while a shell loop moves the chip: each counts the 10 reps written, and leaves the device as found.
@Suite(
    "IIO with real drivers on a real kernel (qemu)", .serialized,
    .enabled(if: realDriverPrerequisite == nil, Comment(rawValue: realDriverPrerequisite ?? "")))
struct RealDriverTests {
    /// The checks every workout shares: 10 ± 1 reps, sample times on CLOCK_MONOTONIC (seconds since boot, within
    /// the workout), repd exits 0 and the device is put back as found.
    private func expectCounted(_ outcome: RealDriverWorkout.Outcome, _ what: String) {
        let tail = String(outcome.console.suffix(4000))
        #expect(outcome.status == 0, "\(tail)")
        let reps = outcome.reps ?? -1
        print(
            "\(what): repd counted \(reps) of 10 reps; timestamps \(outcome.timestamps ?? "?"); \(outcome.line("DURING") ?? "")"
        )
        #expect((9...11).contains(reps), "\(what): counted \(reps) of 10 reps\n\(tail)")
        let start = Double(outcome.line("UPTIME-START") ?? "") ?? 0
        let end = Double(outcome.line("UPTIME-END") ?? "") ?? 0
        let times = outcome.repTimes
        #expect(
            !times.isEmpty && times.allSatisfy { $0 > start - 1 && $0 < end + 5 },
            "rep times are seconds on CLOCK_MONOTONIC, within the workout (\(start)...\(end) s since boot): \(times)")
        #expect(outcome.line("REPD-EXIT") == "0")
        #expect(outcome.line("BEFORE") != nil, "the device's settings were read before the run\n\(tail)")
        #expect(outcome.line("AFTER") == outcome.line("BEFORE"), "the device is put back as found")
        #expect(outcome.line("HRTIMER-LEFT") == "0", "no hrtimer trigger left behind")
    }

    @Test("a big-endian buffered driver (mma8452, be:s12/16>>4) counts 10 reps, on CLOCK_MONOTONIC, and is restored")
    func bigEndian() throws {
        let outcome = try RealDriverWorkout(chips: ["mma8452"], device: "mma8452", countsPerG: 1024).run()
        expectCounted(outcome, "mma8452")
        #expect(
            outcome.line("DURING")?.contains("enable=1 clock=monotonic trigger=[trig0]") == true,
            "capture runs with current_timestamp_clock = monotonic: \(outcome.line("DURING") ?? "")")
        #expect(outcome.line("BEFORE")?.contains("clock=realtime") == true)
        #expect(outcome.timestamps == "device")
    }

    @Test("kxcjk1013, whose in_timestamp is always 0, counts 10 reps with samples timed on the host")
    func timestampZero() throws {
        let outcome = try RealDriverWorkout(chips: ["kxcjk1013"], device: "kxcjk1013", countsPerG: 512).run()
        expectCounted(outcome, "kxcjk1013")
        #expect(outcome.timestamps == "host", "status says the samples are timed on the host")
        #expect(
            outcome.lines("REPD-LOG").contains { $0.contains("in_timestamp") && $0.contains("does not advance") },
            "the log says why: \(outcome.lines("REPD-LOG"))")
    }

    @Test("da280, which has no buffer and no device node, is found with libudev and polled: 10 reps")
    func pollingOnly() throws {
        let outcome = try RealDriverWorkout(chips: ["da280"], device: "da280", countsPerG: 4096).run()
        expectCounted(outcome, "da280")
        #expect(outcome.timestamps == "host")
    }

    @Test(
        "with two accelerometers the configured one is read: mxc4005 (second, no trigger) counts 10 reps, lis3dh does not interfere"
    )
    func twoAtOnce() throws {
        // lis3dh (the first device, trig0 and its buffer enabled by the harness) swings at another tempo meanwhile.
        let other =
            "(i=0; while [ $i -lt 600 ]; do accel-set -d lis3dh 0 $(( (i % 60) * 16 )) 1000; i=$((i+1)); done) &"
        let outcome = try RealDriverWorkout(
            chips: ["lis3dh", "mxc4005"], device: "mxc4005", countsPerG: 1024, setTarget: "-d mxc4005",
            alsoDuring: other
        ).run()
        expectCounted(outcome, "mxc4005 beside lis3dh")
        #expect(
            outcome.line("DURING")?.contains("trigger=[repd-iio-device1]") == true,
            "repd made its own hrtimer trigger for the second device: \(outcome.line("DURING") ?? "")")
    }

    @Test("mma8452 deleted from the I2C bus mid-stream is reported lost, comes back when re-added, samples resume")
    func removedAndBack() throws {
        let samples = "repctl status --json --socket /tmp/repd.sock | sed -n 's/.*\"samples\":\\([0-9]*\\).*/\\1/p'"
        let script = """
            \(RealDriverWorkout.startRepd(device: "mma8452"))
            repctl subscribe --json --events sensor --socket /tmp/repd.sock > /tmp/events 2>&1 &
            sleep 1; echo "SAMPLES-BEFORE $(\(samples))"
            echo 0x1c > /sys/bus/i2c/devices/i2c-0/delete_device
            sleep 1; a=$(\(samples)); sleep 1; echo "SAMPLES-GONE $(( $(\(samples)) - a ))"
            i2c-accel -b 0 bind mma8452 0x1c > /dev/null
            n=0; until grep -q '"state":"back"' /tmp/events; do sleep 0.1; n=$((n+1)); [ $n -gt 100 ] && break; done
            a=$(\(samples)); sleep 1; echo "SAMPLES-BACK $(( $(\(samples)) - a ))"
            kill -TERM $P; wait $P; echo "REPD-EXIT $?"
            echo "HRTIMER-LEFT $(ls /sys/kernel/config/iio/triggers/hrtimer | grep -c '^repd-')"
            sed 's/^/EVENT /' /tmp/events; sed 's/^/REPD-LOG /' /tmp/repd.err
            """
        let outcome = try RealDriverWorkout.boot(["mma8452"], countsPerG: 1024, script: script)
        let tail = String(outcome.console.suffix(4000))
        #expect(outcome.status == 0, "\(tail)")
        let count = { (tag: String) in Int(outcome.line(tag) ?? "") ?? -1 }
        print(
            "mma8452 removed and re-added: samples before \(count("SAMPLES-BEFORE")), in 1 s while gone \(count("SAMPLES-GONE")), in 1 s after \(count("SAMPLES-BACK"))"
        )
        // At 100 Hz, loosely: a guest under TCG on a busy host may run late, and a second of its time holds fewer
        // samples; a device left at a slow default rate (1 Hz) would still break it.
        #expect(count("SAMPLES-BEFORE") > 10, "about 100 Hz before: \(tail)")
        #expect(count("SAMPLES-GONE") == 0)
        #expect(count("SAMPLES-BACK") > 10, "samples resume at about 100 Hz")
        let states = outcome.lines("EVENT").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        .compactMap { $0["state"] as? String }
        #expect(states == ["lost", "back", "stopped"], "\(outcome.lines("EVENT"))")
        #expect(outcome.line("REPD-EXIT") == "0", "nothing hangs")
        #expect(outcome.line("HRTIMER-LEFT") == "0", "the trigger repd made for the device that came back is removed")
    }

    /// The udev rule the package installs (`systemd/60-repd.rules`): the group and mode it gives the device node, and
    /// the shell command it runs on the device's sysfs folder (`/sys%p` is the folder).
    static func udevRule() throws -> (group: String, mode: String, command: String) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("systemd/60-repd.rules"), encoding: .utf8)
            .replacingOccurrences(of: "\\\n", with: " ")
        func value(_ key: String) -> String? {
            guard let start = text.range(of: key + "=\""), let end = text[start.upperBound...].firstIndex(of: "\"")
            else { return nil }
            return String(text[start.upperBound..<end])
        }
        let run = try #require(value("RUN+"), "the rule has a RUN+=")
        let command = try #require(
            run.range(of: "/bin/sh -c '").map { String(run[$0.upperBound...].dropLast()) }, "RUN+= is /bin/sh -c '…'")
        return (try #require(value("GROUP")), try #require(value("MODE")), command)
    }

    @Test(
        "with only what systemd/60-repd.rules gives group repd, a member of the group sets up a real driver, reads it and puts it back as found; with the node alone it is refused, the file named, nothing changed",
        arguments: [("lis3dh", 1024), ("mma8452", 1024)])
    func udevRulePermissions(chip: String, countsPerG: Int) throws {
        let rule = try Self.udevRule()
        #expect(rule.command.contains("cd /sys%p"), "the rule works in the device's sysfs folder: \(rule.command)")
        let harness = try #require(kernelHarness)
        let read = "repctl sensors --read 20 --device iio:device0"
        let script = """
            echo 'repd:x:990:990::/tmp:/bin/sh' >> /etc/passwd; echo '\(rule.group):x:990:repd' >> /etc/group
            D=$(readlink -f /sys/bus/iio/devices/iio:device0); N=/dev/iio:device0
            state() { echo "$1 enable=$(cat $D/buffer/enable) clock=$(cat $D/current_timestamp_clock) trigger=[$(cat $D/trigger/current_trigger)] en=$(cat $D/scan_elements/*_en | tr -d '\\n') freq=$(cat $D/in_accel_sampling_frequency $D/sampling_frequency 2>/dev/null)"; }
            state BEFORE
            chgrp \(rule.group) $N; chmod \(rule.mode) $N
            su repd -s /bin/sh -c '\(read)' > /tmp/node 2>&1; echo "NODE-EXIT $?"; sed 's/^/NODE /' /tmp/node
            state REFUSED
            (\(rule.command.replacingOccurrences(of: "/sys%p", with: "$D")))
            su repd -s /bin/sh -c '\(read)' > /tmp/rule 2>&1; echo "RULE-EXIT $?"; sed 's/^/RULE /' /tmp/rule
            state AFTER
            """
        let result = try runProgram(
            harness,
            [
                "--i2c-accel", chip, "--accel-init", "0 0 \(countsPerG)", "--no-enable", "--quiet", "-t", "100", "-b",
                productsDirectory + "/repctl", "-r", script,
            ], timeout: 130)
        let outcome = RealDriverWorkout.Outcome(
            status: result.status, console: String(decoding: result.output, as: UTF8.self) + result.errors)
        let tail = String(outcome.console.suffix(4000))
        #expect(outcome.status == 0, "\(tail)")
        // The node alone: refused, naming the attribute and the rule, and nothing is left changed or logged as such.
        #expect(outcome.line("NODE-EXIT") == "1", "\(tail)")
        let refusal = outcome.lines("NODE").joined(separator: "\n")
        #expect(refusal.contains("permission denied") && refusal.contains("60-repd.rules"), "\(refusal)")
        #expect(!refusal.contains("not restored"), "\(refusal)")
        #expect(outcome.line("BEFORE") != nil, "the device's settings were read before the runs\n\(tail)")
        #expect(outcome.line("REFUSED") == outcome.line("BEFORE"))
        // With the rule's attributes: set up (the clock too), 20 samples of the chip at rest (1 g on z), put back.
        #expect(outcome.line("RULE-EXIT") == "0", "\(tail)")
        let rows = outcome.lines("RULE").filter { !$0.hasPrefix("#") }
            .map { $0.split(separator: " ").compactMap { Double($0) } }
        #expect(
            rows.count == 20 && rows.allSatisfy { $0.count == 4 && abs($0[3] - 1) < 0.05 },
            "\(outcome.lines("RULE"))")
        #expect(
            outcome.lines("RULE").contains { $0.contains("current_timestamp_clock monotonic") },
            "the samples are timed on CLOCK_MONOTONIC: \(outcome.lines("RULE"))")
        #expect(outcome.line("AFTER") == outcome.line("BEFORE"), "put back as found")
        #expect(outcome.line("BEFORE")?.contains("clock=realtime") == true, "the kernel's default clock to begin with")
    }
}
