import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@testable import RepDetection

@Suite("The step rhythm's sliding sums")
struct StepRhythmTrackerTests {
    /// A stride of 1.1 s with steps at half of it, a slower sway and deterministic noise, across and along gravity.
    private static func point(_ n: Int) -> (Double, Double, Double) {
        let t = Double(n) * MotionGrid.spacing
        let noise = Double((n &* 2_654_435_761) % 1000) / 1000 - 0.5
        return (
            0.3 * sin(2 * .pi * t / 1.1) + 0.02 * noise, 0.1 * sin(2 * .pi * t / 3.7),
            0.25 * sin(4 * .pi * t / 1.1 + 0.4) + 0.05 * pow(sin(4 * .pi * t / 1.1), 8) - 0.01 * noise
        )
    }

    @Test(
        "sliding sums give the rhythms of summing the window anew at every point, across a gap, a thousandfold drop and quiet → loud → quiet"
    )
    func slidingMatchesRecomputing() {
        var grid = MotionGrid()
        var sliding = StepRhythmTracker()
        var exact = StepRhythmTracker(recomputeInterval: 1)
        var withPeak = 0
        for n in 0..<4000 {
            // A gap at 1200 starts a new run; from 2000 the motion is a thousandth as large, but for 15 s (2600–2975,
            // fewer points than between two periodic exact sums) it is full size again.
            if n == 1200 { grid.restart(at: grid.next + 40) }
            let scale = n >= 2000 && !(2600..<2975).contains(n) ? 0.001 : 1
            let p = Self.point(n)
            grid.append(motion: (scale * p.0, scale * p.1, scale * p.2), down: (0, 0, 1))
            sliding.update(grid)
            exact.update(grid)
            let i = grid.next - 1
            let a = sliding.rhythms(endingAt: i), b = exact.rhythms(endingAt: i)
            #expect(abs(a.prominence - b.prominence) < 1e-9, "point \(n)")
            #expect(abs(a.vertical - b.vertical) < 1e-9, "point \(n)")
            #expect(a.period == b.period, "point \(n)")
            if b.period > 0 { withPeak += 1 }
        }
        // The motion has a step rhythm (0.55 s) once each run holds a whole window: the comparison saw real peaks.
        #expect(withPeak > 3500)
    }

    @Test("no rhythm until the run holds the window and the longest lag before it")
    func needsAWholeWindow() {
        var grid = MotionGrid()
        var tracker = StepRhythmTracker()
        let needed = StepRhythmTracker.window + StepRhythmTracker.longest
        for n in 0..<(needed + 5) {
            grid.append(motion: Self.point(n), down: (0, 0, 1))
            tracker.update(grid)
            let rhythms = tracker.rhythms(endingAt: grid.next - 1)
            if n < needed - 1 { #expect(rhythms.period == 0, "point \(n)") }
        }
        #expect(tracker.rhythms(endingAt: grid.next - 1).period > 0)
    }
}
