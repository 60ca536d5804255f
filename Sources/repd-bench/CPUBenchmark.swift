import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// repd's CPU while reading a 1.6 kHz stream from an umockdev-emulated accelerometer, with libiio's iio_readdev
/// on the same stream as the baseline (scripts/bench-iio-cpu.py does the feeding and measuring).
enum CPUBenchmark {
    static func run(quick: Bool, repd: String) -> [Figure] {
        let root = executableDirectory() + "/../../.."
        let script = root + "/scripts/bench-iio-cpu.py"
        let device = root + "/scripts/bench-accel.umockdev"
        guard fileExists("/usr/bin/umockdev-wrapper"), fileExists(script) else {
            return [
                Figure(
                    key: "cpu_pct_at_1600hz", value: .nan, unit: "% of a core", goal: "",
                    note: "umockdev-wrapper or \(script) missing")
            ]
        }
        let output = root + "/.build/repd-bench-cpu.json"
        guard let json = umockdevScriptJSON(script, [device, repd, quick ? "4" : "10"], output: output) else {
            return []
        }
        func number(_ value: JSONValue?) -> Double {
            if case .number(let d)? = value { return d }
            return .nan
        }
        let repdCPU = number(json["repd"]?["cpu_pct"])
        let baseline = number(json["iio_readdev"]?["cpu_pct"])
        return [
            Figure(
                key: "cpu_pct_at_1600hz", value: repdCPU, unit: "% of a core", goal: "",
                note:
                    "repd reading 1600 records/s in 16-record batches (umockdev PTY); peak RSS \(format(number(json["repd"]?["rss_peak_mb"]), decimals: 1)) MiB"
            ),
            Figure(
                key: "iio_readdev_cpu_pct_at_1600hz", value: baseline, unit: "% of a core", goal: "",
                note:
                    "libiio's iio_readdev on the same stream; peak RSS \(format(number(json["iio_readdev"]?["rss_peak_mb"]), decimals: 1)) MiB"
            ),
            Figure(
                key: "cpu_vs_iio_readdev", value: repdCPU / baseline, unit: "×", goal: "",
                note: "repd also runs the detector and serves the socket"),
        ]
    }
}
