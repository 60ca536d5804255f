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
            concentric velocity 0.3, 0.8, 1.5 m/s slowing by 30 % over 6 reps; noise 0.01 g, scale error 1 %; \
            0.8 s still at the start position between reps and 0.1 s at the turnaround. The same conditions at \
            100 Hz and above run again in other styles: touch-and-go (no rest between reps), paused 1 and 2 s at \
            the turnaround, and the bar moving up to 1 cm while it rests between reps. \
            Each set goes through the rep detector with placement = "bar"; the quality of each rep of the final \
            count is compared with the generator's truth (the same phase rules on the exact motion). The tables \
            give RMS errors (velocities, range of motion, velocity loss, phase durations and pauses) per rate, tilt, \
            bias, lift, velocity and style, for the reps at 100 Hz and above unless the \
            row says otherwise. These are figures against generated motion, not against a lifter.

            Examples:
              repctl validate-quality --out docs/QUALITY-tables.md
              repctl validate-quality --quick
            """)

    @Flag(help: "A small grid (100 Hz, 10° tilt, 0.02 g bias, 0.3 and 1.5 m/s).")
    var quick = false

    @Option(help: "Also write the tables to this file (its folder must exist and be writable: checked first).")
    var out: String?

    @Flag(
        help:
            "First print each rep's truth and measure, for the sets where a rep went unmeasured, a velocity (live or final) is off by more than 0.05 m/s or the velocity loss by more than 3 points."
    )
    var verbose = false

    func validate() throws {
        // Checked before the tables are computed (minutes), not after.
        if let out, let reason = unwritableFileReason(out, option: "--out") { throw ValidationError(reason + ".") }
    }

    func run() throws {
        let standard = QualityValidation.grid(quick: quick)
        let styled = quick ? [] : QualityValidation.styledGrid()
        if verbose {
            for condition in standard + styled {
                let outcome = QualityValidation.run(condition, anyRate: true)
                let c = condition
                let bad =
                    outcome.matched < outcome.trueReps || abs(outcome.lossError ?? 99) > 3
                    || (outcome.velocityErrors + outcome.liveVelocityErrors).contains { abs($0) > 0.05 }
                guard bad else { continue }
                print(
                    "\(c.style) \(c.lift.rawValue) \(Int(c.rate)) Hz tilt \(Int(c.tiltDegrees)) bias \(c.bias) v \(c.velocity) rom \(c.rangeOfMotion) seed \(c.seed): loss error \(outcome.lossError.map { format($0, decimals: 1) } ?? "-")"
                )
                for line in outcome.details { print("  " + line) }
            }
        }
        let magnitude = standard.map { QualityValidation.run($0, anyRate: true) }
        let projection = standard.filter { $0.rate == 100 }.map { QualityValidation.run($0, method: .projection) }
        let fast = magnitude.filter { $0.condition.rate >= 100 }
        var text =
            "### By sample rate (all lifts, tilts, biases, velocities; below 40 Hz repd claims no velocity, measured here anyway)\n\n"
        text += QualityValidation.table(magnitude, by: "rate") {
            "\(format($0.rate, decimals: $0.rate == $0.rate.rounded() ? 0 : 1)) Hz"
        }
        text +=
            "\n### By bar tilt, ≥ 100 Hz: length of the acceleration (repd) and, at 100 Hz, its projection on gravity\n\n"
        // One table: the projection's rows follow the magnitude's under the same header, each row saying which.
        text += QualityValidation.table(fast, by: "tilt, vertical acceleration") {
            "\(Int($0.tiltDegrees))°, magnitude"
        }
        text += QualityValidation.table(projection, by: "") { "\(Int($0.tiltDegrees))°, projection (100 Hz)" }
            .split(separator: "\n").dropFirst(2).map { $0 + "\n" }.joined()
        text += "\n### By bias, ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "bias") { "\(format($0.bias, decimals: 2)) g" }
        text += "\n### By lift, ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "lift") { $0.lift.rawValue }
        text += "\n### By first-rep velocity (30 % slower by the last rep), ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "first rep") { "\(format($0.velocity, decimals: 1)) m/s" }
        text += "\n### All sets at ≥ 100 Hz\n\n"
        text += QualityValidation.table(fast, by: "conditions") { _ in "≥ 100 Hz" }
        if !styled.isEmpty {
            let styles = fast + styled.map { QualityValidation.run($0) }
            text += "\n### By rep style, ≥ 100 Hz (each style on the same 216 conditions and seeds)\n\n"
            text += QualityValidation.table(styles, by: "style") { $0.style.description }
            text += "\n### By rep style and lift, ≥ 100 Hz\n\n"
            text += QualityValidation.table(styles, by: "style, lift") { "\($0.style), \($0.lift.rawValue)" }
            text += "\n### By rep style and first-rep velocity, ≥ 100 Hz\n\n"
            text += QualityValidation.table(styles, by: "style, first rep") {
                "\($0.style), \(format($0.velocity, decimals: 1)) m/s"
            }
        }
        print(text)
        if let out {
            do { try TextFile.write(text, to: out) } catch {
                printError("repctl: cannot write \(out): \(error)")
                throw ExitCode(1)
            }
        }
    }
}
