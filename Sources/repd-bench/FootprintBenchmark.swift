import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// repd's memory with a sensor and 10 clients: scripts/measure-footprint.py feeds an umockdev-emulated lis3dh at
/// 100 Hz, starts the repd under test on it, connects 10 subscribed clients, waits 5 s and reads
/// `/proc/PID/smaps_rollup`. One measurement per repeat (a fresh testbed and daemon each time); `--repd` picks the
/// binary, e.g. the packaged, stripped `/usr/bin/repd`.
enum FootprintBenchmark {
    static func run(quick: Bool, repd: String) -> [Figure] {
        let root = executableDirectory() + "/../../.."
        let script = root + "/scripts/measure-footprint.py"
        guard fileExists("/usr/bin/umockdev-wrapper"), fileExists(script) else {
            return [
                Figure(
                    key: "footprint_rss_mb", value: .nan, unit: "MiB", goal: "≤ 12",
                    note: "umockdev-wrapper or \(script) missing")
            ]
        }
        let output = root + "/.build/repd-bench-footprint.json"
        let arguments = [repd, "--runs", "1", "--clients", "10", "--seconds", quick ? "2" : "5"]
        guard let json = umockdevScriptJSON(script, arguments, output: output) else {
            return failed("\(script) printed no result for \(repd)")
        }
        guard json["all_ran"]?.bool == true else { return failed("\(repd) did not run") }
        func median(_ key: String) -> Double {
            if case .number(let d)? = json[key]?["median"] { return d }
            return .nan
        }
        let binary: Double = if case .number(let d)? = json["binary_bytes"] { d / 1_000_000 } else { .nan }
        let context = "\(repd) (\(format(binary, decimals: 1)) MB), a sensor at 100 Hz and 10 clients"
        return [
            Figure(key: "footprint_rss_mb", value: median("rss_mib"), unit: "MiB", goal: "≤ 12", note: context),
            Figure(
                key: "footprint_private_dirty_mb", value: median("private_dirty_mib"), unit: "MiB", goal: "≤ 3",
                note: "the same run: memory only this process holds and wrote"),
            Figure(
                key: "footprint_pss_mb", value: median("pss_mib"), unit: "MiB", goal: "",
                note: "the same run: shared pages divided among the processes that map them"),
        ]
    }

    /// The figures of a run that measured nothing: not a number, with the reason.
    private static func failed(_ reason: String) -> [Figure] {
        ["footprint_rss_mb", "footprint_private_dirty_mb", "footprint_pss_mb"].map {
            Figure(key: $0, value: .nan, unit: "MiB", goal: "", note: "not measured: \(reason)")
        }
    }
}
