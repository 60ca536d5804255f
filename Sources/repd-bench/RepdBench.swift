import ArgumentParser
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
            Build in release: swift run -c release repd-bench [--json] [--quick]. Each figure is printed with its
            goal. --quick uses smaller inputs and finishes in well under a minute.
            """)

    @Flag(help: "Print one JSON object with one key per figure.")
    var json = false

    @Flag(help: "Smaller inputs, for a fast run (figures are noisier).")
    var quick = false

    @Option(help: "Folder for temporary files.")
    var tmp = "/tmp"

    func run() throws {
        var figures: [Figure] = []
        figures += DetectorBenchmark.run(quick: quick)
        figures += FixtureBenchmark.run(quick: quick, directory: tmp)
        if json {
            print(JSONWriter.Value.object(figures.map { ($0.key, .number($0.value)) }).text)
        } else {
            for f in figures {
                let name = f.key.padding(34)
                print("\(name) \(format(f.value, decimals: 3).padding(10)) \(f.unit.padding(14)) goal \(f.goal.padding(14)) \(f.note)")
            }
        }
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
