import Foundation
import MotionSimulation
import RepDetection
import Testing

/// A generated squat set written into the real kernel's iio_simple_dummy (its writable in_accel_z_raw) by a busybox
/// loop while repd, configured with `placement = "bar"`, reads the device through the IIO buffer at 100 Hz. The
/// loop picks the table entry for the current centisecond of /proc/uptime, so the motion keeps its timing even when
/// a step of the loop takes longer than 10 ms (an entry is then skipped, not delayed); the test reports how many
/// entries were written.
@Suite(
    "per-rep quality through a real kernel (qemu)", .serialized,
    .enabled(if: dummyKernelPrerequisite == nil, Comment(rawValue: dummyKernelPrerequisite ?? "")))
struct BarbellKernelTests {
    @Test(
        "a squat set written at 100 Hz into the dummy accelerometer: repd's mean velocities, ranges of motion and velocity loss match the generator's"
    )
    func squatThroughTheKernel() throws {
        let harness = try #require(kernelHarness)
        var generator = BarbellGenerator()
        generator.lift = .squat
        generator.reps = 5
        generator.firstMeanVelocity = 0.7
        generator.velocityLoss = 0.3
        generator.rangeOfMotion = 0.55
        generator.tiltDegrees = 0
        generator.horizontalTravel = 0
        generator.randomOrientation = false
        generator.sampleRate = 100
        generator.seed = 19
        let set = generator.generate()
        // z in counts (16384 per g, in_accel_scale 0.000598550 m/s² per LSB); x and y hold their bias.
        let countsPerG = 9.80665 / 0.000598550
        let table = set.samples.map { String(Int(($0.az * countsPerG).rounded())) }.joined(separator: " ")
        let x = Int((set.samples[0].ax * countsPerG).rounded()), y = Int((set.samples[0].ay * countsPerG).rounded())
        let d = "/sys/bus/iio/devices/iio:device0"
        let config =
            "[sensor]\\nprovider = \\\"iio\\\"\\nrate_hz = 100.0\\n[socket]\\npath = \\\"/tmp/repd.sock\\\"\\n[journal]\\npath = \\\"\\\"\\n[detector]\\nplacement = \\\"bar\\\"\\n"
        let script = """
            echo \(x) > \(d)/in_accel_x_raw; echo \(y) > \(d)/in_accel_y_raw; echo 16384 > \(d)/in_accel_z_raw
            printf "\(config)" > /tmp/repd.toml
            repd --config /tmp/repd.toml --quiet > /tmp/repd.out 2> /tmp/repd.err &
            P=$!
            n=0; until repctl status --json --socket /tmp/repd.sock 2>/dev/null | grep -q '"sensor_state":"connected"'; do sleep 0.1; n=$((n+1)); [ $n -gt 150 ] && break; done
            repctl subscribe --json --events rep,set --socket /tmp/repd.sock > /tmp/events 2>&1 &
            S=$!
            sleep 0.5
            set -- \(table)
            N=$#
            read up rest < /proc/uptime; start=$(( ${up%.*} * 100 + 1${up#*.} - 100 ))
            echo "UPTIME-START $up"
            repctl status --json --socket /tmp/repd.sock | sed 's/^/STATUS-BEFORE /'
            w=0; e=0; last=-1; skipped=0
            while [ $e -lt $N ]; do
              if [ $e -ne $last ]; then
                eval z=\\${$((e + 1))}
                echo $z > \(d)/in_accel_z_raw; w=$((w + 1))
                [ $last -ge 0 ] && skipped=$((skipped + e - last - 1)); last=$e
              fi
              read up rest < /proc/uptime; e=$(( ${up%.*} * 100 + 1${up#*.} - 100 - start ))
            done
            echo "WRITES $w $skipped $e"
            repctl status --json --socket /tmp/repd.sock | sed 's/^/STATUS-AFTER /'
            sleep 1
            kill -TERM $P; wait $P; echo "REPD-EXIT $?"
            sleep 0.5; kill $S 2>/dev/null
            sed 's/^/EVENT /' /tmp/events; sed 's/^/REPD-LOG /' /tmp/repd.err
            """
        let result = try runProgram(
            harness,
            [
                "-k", "bzImage-accel-xyz", "--channels", "in_accel_x in_accel_y in_accel_z in_timestamp", "--no-enable",
                "--quiet", "-t", "120", "-b", productsDirectory + "/repd", "-b", productsDirectory + "/repctl", "-r",
                script,
            ], timeout: 150)
        let console = String(decoding: result.output, as: UTF8.self) + result.errors
        let lines = console.split(separator: "\n").map { $0.replacingOccurrences(of: "\r", with: "") }
        func tagged(_ tag: String) -> [String] {
            lines.filter { $0.hasPrefix(tag + " ") }.map { String($0.dropFirst(tag.count + 1)) }
        }
        #expect(result.status == 0, "\(console.suffix(3000))")
        let start = try #require(tagged("UPTIME-START").first.flatMap(Double.init), "\(console.suffix(3000))")
        // What the loop managed: entries written (one per centisecond asked), entries skipped because a step took
        // longer; and the samples repd received meanwhile (the trigger's rate).
        let counts = (tagged("WRITES").first ?? "").split(separator: " ").compactMap { Int($0) }
        func samples(_ tag: String) -> Int? {
            tagged(tag).first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }?[
                "samples"] as? Int
        }
        let writes: String
        if counts.count == 3, let before = samples("STATUS-BEFORE"), let after = samples("STATUS-AFTER") {
            let seconds = Double(counts[2]) / 100
            writes =
                "\(counts[0]) entries written, \(counts[1]) skipped, in \(seconds) s (\(Int((Double(counts[0]) / seconds).rounded())) writes/s); repd got \(Int((Double(after - before) / seconds).rounded())) samples/s"
        } else {
            writes = "writes and rates not reported"
        }
        let events = tagged("EVENT").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let end = try #require(
            events.first { $0["type"] as? String == "set_end" }, "a set_end: \(console.suffix(3000))")
        let measured = try #require(end["quality"] as? [[String: Any]])
        // Match each true rep to the measured window holding its middle (sample times are the guest's monotonic
        // clock, which /proc/uptime reads too).
        var velocityErrors: [Double] = [], romErrors: [Double] = []
        for truth in set.reps {
            let middle = start + (truth.movementStart + truth.movementEnd) / 2
            let rep = measured.first {
                ($0["start_t"] as? Double ?? .infinity) <= middle && middle <= ($0["end_t"] as? Double ?? 0)
            }
            let t = try #require(truth.quality.velocity)
            guard let rep, let v = rep["mean_velocity_m_s"] as? Double, let r = rep["rom_m"] as? Double else {
                Issue.record("rep at \(middle) s not measured: \(measured)")
                continue
            }
            velocityErrors.append(v - t.meanConcentric)
            romErrors.append(r - t.rangeOfMotion)
        }
        func rms(_ e: [Double]) -> Double { (e.reduce(0) { $0 + $1 * $1 } / Double(max(e.count, 1))).squareRoot() }
        let loss = end["velocity_loss_pct"] as? Double ?? .nan
        print(
            "barbell through the kernel: \(writes); mean velocity RMS error \(rms(velocityErrors)) m/s, ROM RMS error \(rms(romErrors)) m, velocity loss \(loss) % (true \(set.velocityLoss) %)"
        )
        #expect(velocityErrors.count == set.reps.count)
        // The truth is the generator's motion; it is what repd saw only when the guest's loop wrote (nearly) every
        // entry. On a machine so busy that the loop skipped more than 5 % of them, the errors are reported above and
        // not judged: that run says nothing about repd.
        try #require(counts.count == 3, "the guest's loop reported what it wrote: \(console.suffix(3000))")
        let skippedShare = Double(counts[1]) / Double(max(counts[0] + counts[1], 1))
        withKnownIssue(
            "the guest's write loop skipped \(counts[1]) of \(set.samples.count) entries (over 5 %): the motion written is not the generator's",
            isIntermittent: true
        ) {
            #expect(rms(velocityErrors) <= 0.03, "mean concentric velocity errors \(velocityErrors) (\(writes))")
            #expect(rms(romErrors) <= 0.02, "range of motion errors \(romErrors)")
            #expect(abs(loss - set.velocityLoss) <= 3, "velocity loss \(loss) % against \(set.velocityLoss) %")
        } when: {
            skippedShare > 0.05
        }
    }
}
