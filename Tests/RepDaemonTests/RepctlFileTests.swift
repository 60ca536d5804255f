import Foundation
import Testing

/// `repctl generate` and `repctl plot` with values and paths a careless hand gives them: refused with the reason,
/// nothing overwritten, nothing left behind.
@Suite("repctl generate and plot refuse what would crash or destroy")
struct RepctlFileTests {
    let repctl = productsDirectory + "/repctl"

    @Test(
        "repctl generate refuses values it cannot make a recording from (exit 64, the option named) instead of crashing or writing nan",
        arguments: [
            (["sine", "--frequency=0"], "--frequency must be a positive number"),
            (["workout", "--rest=-100"], "--rest must be a number >= 0"),
            (["sine", "--count=-3"], "--count must be a whole number of cycles, 1 or more"),
            (["sine", "--noise=-1"], "--noise must be a number >= 0"),
            (["sine", "--amplitude=nan"], "--amplitude and --phase must be numbers"),
            (["sine", "--rate=1e9"], "--rate must be at most 100000"),
            (["sine", "--rate=1000", "--count=1000000", "--frequency=1"], "that would be about 1000000000 samples"),
            (["walk", "--seconds=1e9"], "samples; at most 10000000"),
            (["workout", "--reps", "9223372036854775807,1"], "--reps must be at most 100000 a set"),
            (["workout", "--reps", "100000,100000"], "that would be about 24201800 samples; at most 10000000"),
            (["sine", "--gravity", "nan,0,1"], "--gravity must be three finite numbers x,y,z (got 'nan,0,1')"),
            (["sine", "--direction", "1,inf,0"], "--direction must be three finite numbers x,y,z (got '1,inf,0')"),
            (["workout", "--gravity", "1,abc,0,1"], "--gravity must be three finite numbers x,y,z (got '1,abc,0,1')"),
            (["walk", "--gravity", "1,,0"], "--gravity must be three finite numbers x,y,z (got '1,,0')"),
            (["walk", "--gravity", "1e308,1e308,1e308"], "--gravity must be a direction: not all zero"),
            (["burpee", "--gravity", "1e-200,0,0"], "--gravity must be a direction: not all zero"),
            (["workout", "--depth", "1e300"], "beyond the ±1000 g a fixture holds: a smaller --depth"),
            (
                ["workout", "--period", "0.001"],
                "beyond the ±1000 g a fixture holds: a smaller --depth or --tilt, or a longer --period"
            ),
            (["walk", "--stride", "1000"], "beyond the ±1000 g a fixture holds: a lower --stride"),
            (["walk", "--swing", "1e300"], "would reach an acceleration that is not a finite number"),
            (["walk", "--seconds", "1e13", "--rate", "1e-9"], "would last beyond 1000000000000 s"),
            (["barbell", "--truth", ""], "--truth must name a file (it is empty)"),
        ])
    func generateRefusesBadValues(arguments: [String], message: String) throws {
        let dir = scratchDirectory()
        let generate = try DaemonProcess(
            executable: repctl, arguments: ["generate"] + arguments + ["--out", dir + "/x.csv"])
        #expect(generate.waitForExit() == 64, "\(arguments): \(generate.standardError)")
        #expect(generate.standardError.contains(message), "\(arguments): \(generate.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty, "\(arguments): nothing written")
    }

    @Test("repctl record into a folder's name is refused before recording (a recording cannot be made again)")
    func recordIntoAFolderIsRefused() throws {
        let dir = scratchDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/adir", withIntermediateDirectories: false)
        let record = try DaemonProcess(
            executable: repctl,
            arguments: ["record", "--out", dir + "/adir", "--duration", "1s", "--socket", dir + "/none.sock"])
        #expect(record.waitForExit() == 1)
        #expect(record.standardError.contains("--out \(dir)/adir is a folder"), "\(record.standardError)")
    }

    @Test(
        "repctl record refuses (exit 64) a rate, duration or --out it cannot record with, and --rate or --device without --direct, before recording",
        arguments: [
            (["--direct", "--rate", "1e300"], "--rate must be a number of Hz from 0.1 to 100000"),
            (["--direct", "--rate", "nan"], "--rate must be a number of Hz from 0.1 to 100000"),
            (["--direct", "--rate", "0"], "--rate must be a number of Hz from 0.1 to 100000"),
            (["--direct", "--rate", "-5"], "--rate must be a number of Hz from 0.1 to 100000"),
            (["--direct", "--rate", "1e-320"], "--rate must be a number of Hz from 0.1 to 100000"),
            (["--duration", "1e309"], "--duration: '1e309' is not a duration"),
            (["--duration", "1e308h"], "--duration: '1e308h' is not a duration"),
            (["--duration", "1e-9"], "--duration: '1e-9' is shorter than 0.1 s"),
            (["--duration", "50ms"], "--duration: '50ms' is shorter than 0.1 s"),
            (["--rate", "50"], "--rate needs --direct"),
            (["--device", "lis3dh-accel"], "--device needs --direct"),
            (["--out", ""], "--out must name a file (it is empty)"),
        ])
    func recordRefusesBadOptions(arguments: [String], message: String) throws {
        let dir = scratchDirectory()
        let record = try DaemonProcess(
            executable: repctl,
            arguments: ["record", "--out", dir + "/r.csv", "--socket", dir + "/none.sock", "--quiet"] + arguments)
        #expect(record.waitForExit() == 64, "\(arguments): \(record.standardError)")
        #expect(record.standardError.contains(message), "\(arguments): \(record.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test("repctl sensors --read refuses a --rate beyond what repd takes (1e300 trapped in the polled reader)")
    func sensorsRefusesAnAbsurdRate() throws {
        let sensors = try DaemonProcess(executable: repctl, arguments: ["sensors", "--read", "5", "--rate", "1e300"])
        #expect(sensors.waitForExit() == 64, "\(sensors.standardError)")
        #expect(
            sensors.standardError.contains("--rate must be a number of Hz from 0.1 to 100000"),
            "\(sensors.standardError)")
    }

    @Test(
        "repctl record that got no sample fails (exit 1) and leaves no file: a file without samples is one repd refuses"
    )
    func recordWithoutSamplesWritesNothing() throws {
        let dir = scratchDirectory()
        // A socket that says repd's hello and nothing more: a repd sending no samples.
        let peer = try FakePeer(
            path: dir + "/silent.sock",
            greeting:
                #"{"type":"hello","protocol":1,"version":"0.1.0","sensor":{"kind":"demo","name":"demo workout","rate_hz":50},"rate_hz":50,"subscribed":["rep","set","sensor"]}"#
                + "\n")
        let record = try DaemonProcess(
            executable: repctl,
            arguments: [
                "record", "--out", dir + "/r.csv", "--socket", dir + "/silent.sock", "--duration", "0.3s", "--quiet",
            ])
        #expect(record.waitForExit() == 1, "\(record.standardError)")
        #expect(
            record.standardError.contains("before any sample arrived; nothing written to \(dir)/r.csv"),
            "\(record.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["silent.sock"])
        peer.stop()
    }

    @Test(
        "repctl generate barbell refuses a --truth that is --out, by any spelling, existing or not (the fixture overwrote the truth, exit 0), and an empty --out"
    )
    func generateRefusesTruthThatIsOut() throws {
        let dir = scratchDirectory()
        for (out, truth) in [(dir + "/same.csv", dir + "/same.csv"), (dir + "/same.csv", dir + "/./same.csv")] {
            let generate = try DaemonProcess(
                executable: repctl, arguments: ["generate", "barbell", "--out", out, "--truth", truth])
            #expect(generate.waitForExit() == 64, "\(truth): \(generate.standardError)")
            #expect(
                generate.standardError.contains("--truth and --out are the same file (\(out))"),
                "\(truth): \(generate.standardError)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        }
        try "kept\n".write(toFile: dir + "/same.csv", atomically: true, encoding: .utf8)
        let again = try DaemonProcess(
            executable: repctl,
            arguments: [
                "generate", "barbell", "--out", dir + "/same.csv", "--truth",
                dir + "/../" + (dir.split(separator: "/").last.map(String.init) ?? "") + "/same.csv",
            ])
        #expect(again.waitForExit() == 64, "\(again.standardError)")
        #expect(try String(contentsOfFile: dir + "/same.csv", encoding: .utf8) == "kept\n")
        let made = try DaemonProcess(
            executable: repctl,
            arguments: ["generate", "barbell", "--out", dir + "/set.csv", "--truth", dir + "/truth.csv"])
        #expect(made.waitForExit() == 0, "\(made.standardError)")
        #expect(try String(contentsOfFile: dir + "/truth.csv", encoding: .utf8).hasPrefix("rep,start,end"))
        let empty = try DaemonProcess(executable: repctl, arguments: ["generate", "sine", "--out", ""])
        #expect(empty.waitForExit() == 64, "\(empty.standardError)")
        #expect(empty.standardError.contains("--out must name a file (it is empty)"), "\(empty.standardError)")
    }

    @Test("repctl generate into a folder's name fails naming it, and leaves no .partial file behind")
    func generateIntoAFolderLeavesNothing() throws {
        let dir = scratchDirectory()
        try FileManager.default.createDirectory(atPath: dir + "/adir", withIntermediateDirectories: false)
        let generate = try DaemonProcess(executable: repctl, arguments: ["generate", "sine", "--out", dir + "/adir"])
        #expect(generate.waitForExit() == 1)
        #expect(generate.standardError.contains("\(dir)/adir"), "\(generate.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["adir"])
    }

    @Test(
        "repctl plot refuses an --out or --trace that is the recording itself, by any spelling of its path, and leaves it as it was"
    )
    func plotNeverOverwritesItsInput() throws {
        let dir = scratchDirectory()
        let recording = dir + "/set.csv"
        let made = try DaemonProcess(executable: repctl, arguments: ["generate", "sine", "--out", recording])
        #expect(made.waitForExit() == 0)
        let before = try String(contentsOfFile: recording, encoding: .utf8)
        for (option, path) in [("--out", recording), ("--out", dir + "/./set.csv"), ("--trace", recording)] {
            let arguments =
                option == "--out"
                ? ["plot", recording, "--out", path] : ["plot", recording, "--out", dir + "/p.svg", "--trace", path]
            let plot = try DaemonProcess(executable: repctl, arguments: arguments)
            #expect(plot.waitForExit() == 64, "\(arguments)")
            #expect(plot.standardError.contains("is the recording itself"), "\(arguments): \(plot.standardError)")
        }
        #expect(try String(contentsOfFile: recording, encoding: .utf8) == before)
        let same = try DaemonProcess(
            executable: repctl, arguments: ["plot", recording, "--out", dir + "/q.svg", "--trace", dir + "/q.svg"])
        #expect(same.waitForExit() == 64)
        #expect(same.standardError.contains("--trace and --out are the same file"), "\(same.standardError)")
        let plot = try DaemonProcess(executable: repctl, arguments: ["plot", recording, "--out", dir + "/p.svg"])
        #expect(plot.waitForExit() == 0, "the plot of another name is written: \(plot.standardError)")
    }

    @Test(
        "repctl eval refuses a --features file that is the manifest or one of its recordings, by any spelling of its path, and leaves both as they were"
    )
    func evalNeverOverwritesItsInputs() throws {
        let dir = scratchDirectory()
        let made = try DaemonProcess(executable: repctl, arguments: ["generate", "sine", "--out", dir + "/set.csv"])
        #expect(made.waitForExit() == 0)
        let manifest = dir + "/manifest.csv"
        try "file,exercise,participant,true_reps\nset.csv,curl,p1,10\n".write(
            toFile: manifest, atomically: true, encoding: .utf8)
        let recording = try String(contentsOfFile: dir + "/set.csv", encoding: .utf8)
        let folder = dir.split(separator: "/").last.map(String.init) ?? ""
        for (features, message) in [
            (manifest, "--features \(manifest) is the manifest \(manifest) itself"),
            (dir + "/./manifest.csv", "is the manifest \(manifest) itself"),
            (
                dir + "/set.csv",
                "--features \(dir)/set.csv is the recording \(dir)/set.csv that \(manifest) lists on line 2"
            ),
            (dir + "/../\(folder)/set.csv", "is the recording \(dir)/set.csv that \(manifest) lists on line 2"),
            ("", "--features must name a file (it is empty)"),
        ] {
            let eval = try DaemonProcess(executable: repctl, arguments: ["eval", manifest, "--features", features])
            #expect(eval.waitForExit() == 64, "\(features): \(eval.standardError)")
            #expect(eval.standardError.contains(message), "\(features): \(eval.standardError)")
            #expect(eval.standardOutput.isEmpty, "nothing is evaluated: \(eval.standardOutput)")
        }
        #expect(
            try String(contentsOfFile: manifest, encoding: .utf8)
                == "file,exercise,participant,true_reps\nset.csv,curl,p1,10\n")
        #expect(try String(contentsOfFile: dir + "/set.csv", encoding: .utf8) == recording)
        let eval = try DaemonProcess(executable: repctl, arguments: ["eval", manifest, "--features", dir + "/f.csv"])
        #expect(eval.waitForExit() == 0, "features of another name are written: \(eval.standardError)")
        #expect(FileManager.default.fileExists(atPath: dir + "/f.csv"))
    }

    @Test(
        "repctl plot refuses an empty --out or --trace, and a --trace that is --out by another spelling before either exists"
    )
    func plotRefusesEmptyAndRespelledOutputs() throws {
        let dir = scratchDirectory()
        let made = try DaemonProcess(executable: repctl, arguments: ["generate", "sine", "--out", dir + "/set.csv"])
        #expect(made.waitForExit() == 0)
        for (arguments, message) in [
            (["--out", ""], "--out must name a file (it is empty)"),
            (["--out", dir + "/p.svg", "--trace", ""], "--trace must name a file (it is empty)"),
            (["--out", dir + "/p.svg", "--trace", dir + "/./p.svg"], "--trace and --out are the same file"),
        ] {
            let plot = try DaemonProcess(executable: repctl, arguments: ["plot", dir + "/set.csv"] + arguments)
            #expect(plot.waitForExit() == 64, "\(arguments): \(plot.standardError)")
            #expect(plot.standardError.contains(message), "\(arguments): \(plot.standardError)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["set.csv"])
    }

    @Test("repctl plot into a folder that does not exist names the file it cannot write")
    func plotNamesTheFileItCannotWrite() throws {
        let dir = scratchDirectory()
        let made = try DaemonProcess(executable: repctl, arguments: ["generate", "sine", "--out", dir + "/set.csv"])
        #expect(made.waitForExit() == 0)
        let plot = try DaemonProcess(
            executable: repctl, arguments: ["plot", dir + "/set.csv", "--out", dir + "/none/p.svg"])
        #expect(plot.waitForExit() == 1)
        #expect(
            plot.standardError.contains("cannot write \(dir)/none/p.svg: No such file or directory"),
            "\(plot.standardError)")
    }

    @Test(
        "repctl validate-quality refuses an --out it could not write (exit 64, at once), before computing any table: a missing folder, a file as its folder, a folder, an empty name"
    )
    func validateQualityChecksOutFirst() throws {
        let dir = scratchDirectory()
        try "a file\n".write(toFile: dir + "/file", atomically: true, encoding: .utf8)
        let cases = [
            (dir + "/none/q.md", "--out \(dir)/none/q.md cannot be written: its folder \(dir)/none does not exist"),
            (dir + "/file/q.md", "--out \(dir)/file/q.md cannot be written: \(dir)/file is not a folder"),
            (dir, "--out \(dir) is a folder; give a file's name"),
            (dir + "/sub/", "--out \(dir)/sub/ ends in '/': give a file's name"),
            ("", "--out must name a file (it is empty)"),
        ]
        for (out, message) in cases {
            // Without --quick the tables take minutes: an answer within seconds is one given before them.
            let run = try DaemonProcess(executable: repctl, arguments: ["validate-quality", "--out", out])
            #expect(run.waitForExit(timeout: 10) == 64, "\(out): \(run.standardError)")
            #expect(run.standardError.contains(message), "\(out): \(run.standardError)")
            #expect(run.standardOutput.isEmpty, "\(out): no table printed")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["file"])
    }

    @Test(
        "repctl eval on a manifest with only its header exits 2 saying there is nothing to evaluate (it printed zeros, exit 0)"
    )
    func evalRefusesAnEmptyManifest() throws {
        let dir = scratchDirectory()
        try "file,exercise,participant,true_reps,sample_rate_hz,duration_s,source\n".write(
            toFile: dir + "/manifest.csv", atomically: true, encoding: .utf8)
        let eval = try DaemonProcess(executable: repctl, arguments: ["eval", dir + "/manifest.csv"])
        #expect(eval.waitForExit() == 2)
        #expect(eval.standardError.contains("lists no recording"), "\(eval.standardError)")
        #expect(eval.standardOutput.isEmpty, "\(eval.standardOutput)")
    }

    @Test("repctl eval refuses a manifest that is not UTF-8 (exit 2), naming its file and line, before evaluating")
    func evalRefusesAManifestThatIsNotUTF8() throws {
        let dir = scratchDirectory()
        let bytes = Array("file,exercise,participant,true_reps\ns10.csv,sin".utf8) + [0xE9] + Array(",p1,5\n".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/manifest.csv"))
        let eval = try DaemonProcess(executable: repctl, arguments: ["eval", dir + "/manifest.csv"])
        #expect(eval.waitForExit() == 2)
        #expect(
            eval.standardError.contains("\(dir)/manifest.csv:2: not valid UTF-8 text (manifests are UTF-8)"),
            "\(eval.standardError)")
        #expect(eval.standardOutput.isEmpty, "\(eval.standardOutput)")
    }

    @Test("repctl history --from after --to is refused (exit 64): no event can be in between, which printed nothing")
    func historyRefusesAnInvertedRange() throws {
        let history = try DaemonProcess(executable: repctl, arguments: ["history", "--from", "5m", "--to", "10m"])
        #expect(history.waitForExit() == 64)
        #expect(history.standardError.contains("--from 5m is after --to 10m"), "\(history.standardError)")
    }

    @Test(
        "repctl history refuses (exit 64) a time before the Unix epoch or not finite, and an id range with no id in it",
        arguments: [
            (["--from", "99999999999d"], "--from '99999999999d' is before the Unix epoch"),
            (["--to", "1e308d"], "--to '1e308d' is before the Unix epoch"),
            (["--since", "10", "--before", "5"], "no event id is above 10 and below 5"),
            (["--since", "10", "--before", "11"], "no event id is above 10 and below 11"),
        ])
    func historyRefusesRangesWithoutEvents(arguments: [String], message: String) throws {
        let dir = scratchDirectory()
        let history = try DaemonProcess(
            executable: repctl, arguments: ["history", "--socket", dir + "/none.sock"] + arguments)
        #expect(history.waitForExit() == 64, "\(arguments): \(history.standardError)")
        #expect(history.standardError.contains(message), "\(arguments): \(history.standardError)")
    }

    @Test(
        "a negative number after an option reaches the program's own check (it was ArgumentParser's 'Missing value')",
        arguments: [
            ("repd", ["--demo", "--speed", "-5"], "--speed must be a positive number"),
            ("repctl", ["history", "--since", "-1"], "--since must be an event id (0 or more)"),
        ])
    func negativeNumbersReachValidation(program: String, arguments: [String], message: String) throws {
        try expectNegativeNumberReachesValidation(program: program, arguments: arguments, message: message)
    }

    @Test(
        "a negative number after repd-web's option reaches its own check",
        .enabled(if: repdWebPrerequisite == nil, Comment(rawValue: repdWebPrerequisite ?? "")))
    func negativeNumberReachesRepdWebValidation() throws {
        try expectNegativeNumberReachesValidation(
            program: "repd-web", arguments: ["--client-timeout", "-1"],
            message: "--client-timeout must be from 0.1 to 3600 s")
    }

    private func expectNegativeNumberReachesValidation(program: String, arguments: [String], message: String) throws {
        let process = try DaemonProcess(executable: productsDirectory + "/" + program, arguments: arguments)
        #expect(process.waitForExit() == 64)
        #expect(process.standardError.contains(message), "\(process.standardError)")
        #expect(!process.standardError.contains("Missing value"))
    }
}
