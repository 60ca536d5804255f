import ArgumentParser
import PlainText
import RepDetection
import RepProtocol
import RepTools

extension VerticalAcceleration: ExpressibleByArgument {}

struct ValidateQuality: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate-quality",
        abstract: "Measure how well repd's per-rep quality matches generated barbell sets, as Markdown tables.",
        discussion: """
            Generates barbell sets (repctl generate barbell) over a grid of conditions: squat, bench, deadlift; \
            12.5, 25, 50, 100, 200, 400, 1600 Hz; bar tilt 0, 5, 10°; bias 0 and 0.02 g per axis; first-rep mean \
            concentric velocity 0.3, 0.8, 1.5 m/s slowing by 30 % over 6 reps; noise 0.01 g, scale error 1 %. \
            Each set goes through the rep detector with placement = "bar"; the quality of each rep of the final \
            count is compared with the generator's truth (the same phase rules on the exact motion). The tables \
            give RMS errors per rate, tilt, bias, lift and velocity, for the reps at 100 Hz and above unless the \
            row says otherwise. These are figures against generated motion, not against a lifter.

            Examples:
              repctl validate-quality --out docs/QUALITY-tables.md
              repctl validate-quality --quick
            """)

    @Flag(help: "A small grid (100 Hz, 10° tilt, 0.02 g bias, 0.3 and 1.5 m/s).")
    var quick = false

    @Option(help: "Also write the tables to this file.")
    var out: String?

    @Flag(help: "First print each rep's truth and measure, for the sets where a rep went unmeasured, a velocity (live or final) is off by more than 0.05 m/s or the velocity loss by more than 3 points.")
    var verbose = false

    func run() throws {
        let grid = QualityValidation.grid(quick: quick)
        if verbose {
            for condition in grid {
                let outcome = QualityValidation.run(condition, anyRate: true)
                let c = condition
                let bad = outcome.matched < outcome.trueReps || abs(outcome.lossError ?? 99) > 3
                    || (outcome.velocityErrors + outcome.liveVelocityErrors).contains { abs($0) > 0.05 }
                guard bad else { continue }
                print("\(c.lift.rawValue) \(Int(c.rate)) Hz tilt \(Int(c.tiltDegrees)) bias \(c.bias) v \(c.velocity) rom \(c.rangeOfMotion) seed \(c.seed): loss error \(outcome.lossError.map { format($0, decimals: 1) } ?? "-")")
                for line in outcome.details { print("  " + line) }
            }
        }
        let magnitude = grid.map { QualityValidation.run($0, anyRate: true) }
        let projection = grid.filter { $0.rate == 100 }.map { QualityValidation.run($0, method: .projection) }
        let fast = magnitude.filter { $0.condition.rate >= 100 }
        var text = "### By sample rate (all lifts, tilts, biases, velocities; below 40 Hz repd claims no velocity, measured here anyway)\n\n"
        text += QualityValidation.table(magnitude, by: "rate") {
            "\(format($0.rate, decimals: $0.rate == $0.rate.rounded() ? 0 : 1)) Hz"
        }
        text += "\n### By bar tilt, ≥ 100 Hz: length of the acceleration (repd) and, at 100 Hz, its projection on gravity\n\n"
        text += QualityValidation.table(fast, by: "tilt (magnitude)") { "\(Int($0.tiltDegrees))°" }
        text += QualityValidation.table(projection, by: "tilt (projection, 100 Hz)") { "\(Int($0.tiltDegrees))°" }
            .split(separator: "\n").dropFirst(2).map { $0 + "\n" }.joined()
        text += "\n### By bias, ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "bias") { "\(format($0.bias, decimals: 2)) g" }
        text += "\n### By lift, ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "lift") { $0.lift.rawValue }
        text += "\n### By first-rep velocity (30 % slower by the last rep), ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "first rep") { "\(format($0.velocity, decimals: 1)) m/s" }
        text += "\n### All sets at ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "conditions") { _ in "≥ 100 Hz" }
        print(text)
        if let out {
            do { try TextFile.write(text, to: out) } catch {
                printError("repctl: \(error)")
                throw ExitCode(1)
            }
        }
    }
}
