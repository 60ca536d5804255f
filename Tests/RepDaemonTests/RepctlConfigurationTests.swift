import Foundation
import MotionCore
import MotionFixtures
import MotionSimulation
import Testing

@Suite("repctl eval and plot with --config")
struct RepctlConfigurationTests {
    let repctl = productsDirectory + "/repctl"

    /// A folder with one generated set of 10 reps and its manifest.
    private func evaluationFolder() throws -> String {
        let dir = scratchDirectory()
        try FixtureFileWriter.write(SignalGenerator.makeSamples(repCount: 10), to: dir + "/ten.csv")
        try "file,exercise,participant,true_reps\nten.csv,sine,gen,10\n".write(
            toFile: dir + "/manifest.csv", atomically: true, encoding: .utf8)
        return dir
    }

    private func counted(_ json: String) -> Int? {
        guard let range = json.range(of: #""counted":\s*(\d+)"#, options: .regularExpression) else { return nil }
        return Int(json[range].split(separator: ":").last!.trimmingCharacters(in: .whitespaces))
    }

    @Test(
        "generate walk writes a wrist on a walk, which eval counts no reps in, and the walking check and the gate are what do it"
    )
    func generatedWalkCountsNothing() throws {
        let dir = scratchDirectory()
        let generate = try DaemonProcess(
            executable: repctl,
            arguments: ["generate", "walk", "--out", dir + "/walk.csv", "--gravity", "1,1,1", "--stride", "1"])
        #expect(generate.waitForExit() == 0, "\(generate.standardError)")
        #expect(generate.standardOutput.contains("walk.csv: 1801 samples"), "\(generate.standardOutput)")
        try "file,exercise,participant,true_reps\nwalk.csv,walking,gen,0\n".write(
            toFile: dir + "/manifest.csv", atomically: true, encoding: .utf8)
        let eval = try DaemonProcess(executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--json"])
        #expect(eval.waitForExit() == 0, "\(eval.standardError)")
        #expect(counted(eval.standardOutput) == 0, "\(eval.standardOutput)")

        try "[detector]\nmaximum_walking_likeness = 2\nminimum_exercise_likelihood = 0\n".write(
            toFile: dir + "/off.toml", atomically: true, encoding: .utf8)
        let off = try DaemonProcess(
            executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--json", "--config", dir + "/off.toml"])
        #expect(off.waitForExit() == 0, "\(off.standardError)")
        #expect((counted(off.standardOutput) ?? 0) > 20, "\(off.standardOutput)")

        let bad = try DaemonProcess(
            executable: repctl, arguments: ["generate", "walk", "--out", dir + "/x.csv", "--stride", "0"])
        #expect(bad.waitForExit() == 64)
        #expect(bad.standardError.contains("--stride must be a positive number"), "\(bad.standardError)")
    }

    @Test("sensors refuses a --timeout that is not a number of seconds above 0 before it looks for a device")
    func sensorsTimeout() throws {
        for timeout in ["0", "-1", "nan", "1e9"] {
            let bad = try DaemonProcess(
                executable: repctl, arguments: ["sensors", "--read", "1", "--timeout", timeout])
            #expect(bad.waitForExit() == 64, "\(timeout)")
            #expect(bad.standardError.contains("--timeout must be a number of seconds above 0"), "\(bad.standardError)")
        }
    }

    @Test("an error naming a file's bytes prints its control characters written out, a NUL included")
    func errorWithNul() throws {
        let dir = scratchDirectory()
        try "t,ax,ay,az\n0.0,0,0,1\0\n".write(toFile: dir + "/nul.csv", atomically: true, encoding: .utf8)
        let plot = try DaemonProcess(
            executable: repctl, arguments: ["plot", dir + "/nul.csv", "--out", dir + "/p.svg"])
        #expect(plot.waitForExit() != 0)
        #expect(plot.standardError.contains("nul.csv:2: az: '1\\x00' is not a number\n"), "\(plot.standardError)")
    }

    @Test("generate refuses an acceleration a fixture cannot hold (beyond ±1000 g) before writing anything")
    func generateRefusesAbsurdAccelerations() throws {
        let dir = scratchDirectory()
        for (kind, option) in [("sine", "--amplitude"), ("sine", "--noise"), ("walk", "--heel-strike")] {
            let bad = try DaemonProcess(
                executable: repctl, arguments: ["generate", kind, "--out", dir + "/x.csv", option, "1e308"])
            #expect(bad.waitForExit() == 64)
            #expect(bad.standardError.contains("\(option) must be within ±100 g"), "\(bad.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir + "/x.csv"))
    }

    @Test(
        "generate burpee writes an upper arm's view of a burpee set, which eval counts exactly; bad options are refused"
    )
    func generatedBurpees() throws {
        let dir = scratchDirectory()
        let generate = try DaemonProcess(
            executable: repctl,
            arguments: [
                "generate", "burpee", "--out", dir + "/b.csv", "--reps", "8", "--period", "3.5", "--rate", "25",
            ])
        #expect(generate.waitForExit() == 0, "\(generate.standardError)")
        // 5 s, 8 reps of about 3.5 s (each varies by 5 %), 5 s, at 25 Hz.
        let samples = try FixtureFileReader.read(path: dir + "/b.csv")
        #expect((800...1000).contains(samples.count), "\(samples.count) samples")
        try "file,exercise,participant,true_reps\nb.csv,burpee,gen,8\n".write(
            toFile: dir + "/manifest.csv", atomically: true, encoding: .utf8)
        let eval = try DaemonProcess(executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--json"])
        #expect(eval.waitForExit() == 0, "\(eval.standardError)")
        #expect(counted(eval.standardOutput) == 8, "\(eval.standardOutput)")
        for option in [["--period", "0"], ["--reps", "0"], ["--gravity", "0,0,0"]] {
            let bad = try DaemonProcess(
                executable: repctl, arguments: ["generate", "burpee", "--out", dir + "/x.csv"] + option)
            #expect(bad.waitForExit() == 64, "\(option)")
            #expect(bad.standardError.contains(option[0]), "\(option): \(bad.standardError)")
        }
    }

    @Test("generate workout takes the tempo, depth and tilt of its reps, and eval counts a slow workout exactly")
    func generatedSlowWorkout() throws {
        let dir = scratchDirectory()
        var samples: [String: Int] = [:]
        var lines = "file,exercise,participant,true_reps\n"
        for (name, period) in [("brisk", "2.5"), ("slow", "5")] {
            let generate = try DaemonProcess(
                executable: repctl,
                arguments: [
                    "generate", "workout", "--out", dir + "/\(name).csv", "--reps", "6,6", "--period", period,
                    "--depth", "0.3", "--tilt", "6", "--gravity", "0,1,0",
                ])
            #expect(generate.waitForExit() == 0, "\(generate.standardError)")
            samples[name] = Int(generate.standardOutput.split(separator: " ").dropFirst().first ?? "")
            lines += "\(name).csv,squat,gen,12\n"
        }
        // 12 reps twice as slow last about 12 × 2.5 s longer, at 50 samples a second.
        let extra = (samples["slow"] ?? 0) - (samples["brisk"] ?? 0)
        #expect(abs(extra - 12 * 125) < 200, "\(samples)")
        try lines.write(toFile: dir + "/manifest.csv", atomically: true, encoding: .utf8)
        let eval = try DaemonProcess(executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--json"])
        #expect(eval.waitForExit() == 0, "\(eval.standardError)")
        #expect(eval.standardOutput.contains(#""exact_pct":100"#), "\(eval.standardOutput)")

        for (option, message) in [
            ("--period=0", "--period must be a positive number"), ("--depth=-1", "--depth must be a number >= 0"),
            ("--tilt=nan", "--tilt must be a number >= 0"),
        ] {
            let bad = try DaemonProcess(
                executable: repctl, arguments: ["generate", "workout", "--out", dir + "/x.csv", option])
            #expect(bad.waitForExit() == 64, "\(option)")
            #expect(bad.standardError.contains(message), "\(option): \(bad.standardError)")
        }
    }

    @Test("eval uses the [detector] settings of the configuration file it is given")
    func evalUsesConfiguration() throws {
        let dir = try evaluationFolder()
        let defaults = try DaemonProcess(executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--json"])
        #expect(defaults.waitForExit() == 0, "\(defaults.standardError)")
        #expect(counted(defaults.standardOutput) == 10)

        // A noise floor above the 0.5 g swings: nothing may count, which only the file can have said.
        try "[detector]\nminimum_amplitude_g = 2.0\n".write(
            toFile: dir + "/deaf.toml", atomically: true, encoding: .utf8)
        let deaf = try DaemonProcess(
            executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--json", "--config", dir + "/deaf.toml"])
        #expect(deaf.waitForExit() == 0, "\(deaf.standardError)")
        #expect(counted(deaf.standardOutput) == 0, "\(deaf.standardOutput)")
    }

    @Test("a bad configuration file is refused with its line, exit 78, as repd does", arguments: ["eval", "plot"])
    func badConfiguration(command: String) throws {
        let dir = try evaluationFolder()
        try "[detector]\nminimum_match = 0.6\nperiod_tolerance = 0.5\n".write(
            toFile: dir + "/bad.toml", atomically: true, encoding: .utf8)
        let arguments =
            command == "eval"
            ? ["eval", dir + "/manifest.csv", "--config", dir + "/bad.toml"]
            : ["plot", dir + "/ten.csv", "--out", dir + "/ten.svg", "--config", dir + "/bad.toml"]
        let tool = try DaemonProcess(executable: repctl, arguments: arguments)
        #expect(tool.waitForExit() == 78)
        #expect(tool.standardError.contains("bad.toml:3: detector.period_tolerance"), "\(tool.standardError)")
        #expect(tool.standardOutput.isEmpty)

        let missing = try DaemonProcess(
            executable: repctl, arguments: ["eval", dir + "/manifest.csv", "--config", dir + "/absent.toml"])
        #expect(missing.waitForExit() == 78)
        #expect(missing.standardError.contains("absent.toml: cannot read"), "\(missing.standardError)")
    }

    @Test("plot draws what the configured detector counts")
    func plotUsesConfiguration() throws {
        let dir = try evaluationFolder()
        try "[detector]\nminimum_amplitude_g = 2.0\n".write(
            toFile: dir + "/deaf.toml", atomically: true, encoding: .utf8)
        let plain = try DaemonProcess(
            executable: repctl, arguments: ["plot", dir + "/ten.csv", "--out", dir + "/a.svg"])
        #expect(plain.waitForExit() == 0)
        #expect(plain.standardOutput.contains(": 10 reps in"), "\(plain.standardOutput)")
        let deaf = try DaemonProcess(
            executable: repctl,
            arguments: ["plot", dir + "/ten.csv", "--out", dir + "/b.svg", "--config", dir + "/deaf.toml"])
        #expect(deaf.waitForExit() == 0)
        #expect(deaf.standardOutput.contains(": 0 reps in"), "\(deaf.standardOutput)")
    }
}
