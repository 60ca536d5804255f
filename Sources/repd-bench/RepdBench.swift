import ArgumentParser
import LinuxIIO
import RepTools
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    @preconcurrency import Darwin
#endif

/// repd-bench: measures repd's speed and footprint and prints a table (or one JSON object).
@main
struct RepdBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repd-bench",
        abstract: "Measure repd's performance figures.",
        discussion: """
            Build in release: swift run -c release repd-bench [--json] [--quick] [--repeats N]. Every benchmark runs \
            N times (default 3); each figure is printed as its median, the min–max spread and the number of values, \
            with its goal. --quick uses smaller inputs (one repeat of it takes well under a minute).
            """)

    @Flag(help: "Print one JSON object with one key per figure.")
    var json = false

    @Flag(help: "Smaller inputs, for a fast run (figures are noisier).")
    var quick = false

    @Option(help: "Where the benchmarks' files go: a folder of their own in it, removed at the end.")
    var tmp = "/tmp"

    @Option(help: "The repd binary to measure (default: the one next to repd-bench).")
    var repd: String?

    @Option(
        help:
            "Run only these benchmarks (comma-separated: ring, detector, decode, pipeline, fixture, daemon, cpu, footprint)."
    )
    var only: String?

    @Option(help: "How many times to run every benchmark; each figure is the median, with the min–max spread.")
    var repeats = 3

    func validate() throws {
        guard repeats >= 1 else { throw ValidationError("--repeats must be at least 1.") }
    }

    func run() throws {
        let work = try ScratchFolder(in: tmp)
        defer { work.remove() }
        let chosen = only.map { Set($0.split(separator: ",").map(String.init)) }
        func wanted(_ name: String) -> Bool { chosen?.contains(name) ?? true }
        var runs: [[Figure]] = []
        for _ in 0..<repeats {
            var figures: [Figure] = []
            if wanted("ring") { figures += RingBenchmark.run(quick: quick) }
            if wanted("detector") { figures += DetectorBenchmark.run(quick: quick) }
            if wanted("decode") { figures += DecodeBenchmark.run(quick: quick) }
            if wanted("pipeline") { figures += PipelineBenchmark.run(quick: quick) }
            if wanted("fixture") { figures += FixtureBenchmark.run(quick: quick, directory: work.path) }
            if wanted("daemon") {
                figures += DaemonBenchmark.run(
                    quick: quick, repd: repd ?? executableDirectory() + "/repd", directory: work.path)
            }
            if wanted("cpu") {
                figures += CPUBenchmark.run(quick: quick, repd: repd ?? executableDirectory() + "/repd")
            }
            if wanted("footprint") {
                figures += FootprintBenchmark.run(quick: quick, repd: repd ?? executableDirectory() + "/repd")
            }
            runs.append(figures)
        }
        let figures = Figure.merged(runs)
        if json {
            // One key per figure (its median), and "spread": per figure [min, max, number of values].
            let spread = figures.map {
                ($0.key, JSONWriter.Value.array([.number($0.minimum), .number($0.maximum), .number(Double($0.runs))]))
            }
            print(
                JSONWriter.Value.object(figures.map { ($0.key, .number($0.value)) } + [("spread", .object(spread))])
                    .text)
        } else {
            for f in figures {
                let name = f.key.padding(34)
                let spread = "\(format(f.minimum, decimals: 3))–\(format(f.maximum, decimals: 3)) (\(f.runs))"
                print(
                    "\(name) \(format(f.value, decimals: 3).padding(10)) \(spread.padding(24)) \(f.unit.padding(14)) goal \(f.goal.padding(14)) \(f.note)"
                )
            }
        }
    }
}

/// The folder of this executable.
func executableDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return "." }
    let path = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}

/// A fresh folder (`repd-bench-XXXXXX`, made by mkdtemp) for the benchmarks' files (the fixture benchmark's alone is
/// 60 MB), removed with what they left in it: a run leaves nothing behind.
struct ScratchFolder {
    let path: String

    init(in parent: String) throws {
        var template = Array((parent + "/repd-bench-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            mkdtemp(buffer.baseAddress!).map { String(cString: $0) }
        }
        guard let made else {
            throw ValidationError("--tmp \(parent): cannot make a folder in it: \(String(cString: strerror(errno)))")
        }
        path = made
    }

    /// Removes the files in the folder (the benchmarks make no subfolders), then the folder.
    func remove() {
        for name in IIODeviceScanner.listDirectory(path) { unlink(path + "/" + name) }
        rmdir(path)
    }
}
