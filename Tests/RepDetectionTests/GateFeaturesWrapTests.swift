import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@testable import RepDetection

@Suite("The gate's features where the grid wraps")
struct GateFeaturesWrapTests {
    /// Squat-like motion along gravity with an arm's sway across it, a period that drifts and deterministic noise.
    private static func point(_ n: Int) -> (Double, Double, Double) {
        let t = Double(n) * MotionGrid.spacing
        let noise = Double((n &* 2_654_435_761) % 1000) / 1000 - 0.5
        let phase = 2 * .pi * t / (2.2 + 0.6 * sin(t / 40))
        return (0.12 * sin(phase + 0.3) + 0.01 * noise, 0.05 * cos(2 * phase), 0.3 * sin(phase) - 0.01 * noise)
    }

    @Test(
        "the features of a window do not depend on where the grid holds it: inside its arrays or across their end, at periods up to the longest (12 s)"
    )
    func sameFeaturesWhereverTheWindowSits() throws {
        // Two grids hold the same motion: one of 8192 points, which never wraps in these 7000, and one of 2048 from
        // slot 1900 on, whose windows cross the end of its arrays again and again.
        var grids = (MotionGrid(), MotionGrid(capacityPowerOfTwo: 11))
        grids.1.restart(at: 1900)
        var steps = (StepRhythmTracker(), StepRhythmTracker())
        var compared = 0, crossing = 0
        for n in 0..<7000 {
            let p = Self.point(n)
            grids.0.append(motion: p, down: (0, 0, 1))
            grids.1.append(motion: p, down: (0, 0, 1))
            steps.0.update(grids.0)
            steps.1.update(grids.1)
            guard n % 3 == 0 else { continue }
            // Periods of 0.4 s to 12 s (a window and a period of up to 900 points).
            let lag = 10 + (n / 3) % 291
            let i = (grids.0.next - 1, grids.1.next - 1)
            let a = ExerciseGateFeatures.measure(grids.0, endingAt: i.0, lag: lag, periodicity: 0.9, steps: steps.0)
            let b = ExerciseGateFeatures.measure(grids.1, endingAt: i.1, lag: lag, periodicity: 0.9, steps: steps.1)
            #expect(a == b, "point \(n), lag \(lag)")
            guard a != nil else { continue }
            compared += 1
            let earliest = i.1 - max(2 * lag, 75) + 1 - lag
            if grids.1.slot(earliest) > grids.1.slot(i.1) { crossing += 1 }
        }
        // Most moments were measured, and some hundreds of the second grid's windows crossed the end of its arrays.
        #expect(compared > 2000)
        #expect(crossing > 100)
    }
}
