import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@testable import RepDetection

@Suite("The period tracker's sliding sums")
struct PeriodTrackerTests {
    /// A 2.3 s rep with a harmonic, a slower sway and deterministic noise on three axes.
    private static func point(_ n: Int) -> (Double, Double, Double) {
        let t = Double(n) * MotionGrid.spacing
        let noise = Double((n &* 2_654_435_761) % 1000) / 1000 - 0.5
        return (
            0.3 * sin(2 * .pi * t / 2.3) + 0.02 * noise, 0.1 * sin(2 * .pi * t / 7.1) + 0.05 * sin(4 * .pi * t / 2.3),
            0.2 * cos(2 * .pi * t / 2.3 + 0.4) - 0.01 * noise
        )
    }

    /// n(k) summed anew from the grid: 2 Σ a(t)·a(t−k) / Σ (|a(t)|² + |a(t−k)|²) over the last max(k, minimum
    /// window) points, 0 where that window and its lag do not fit in the run.
    private static func nsdf(_ grid: MotionGrid, lag k: Int, minimumWindow: Int) -> Double {
        let i = grid.next - 1
        let window = max(k, minimumWindow)
        guard i - window + 1 - k >= grid.origin else { return 0 }
        var cross = 0.0, energy = 0.0
        for t in (i - window + 1)...i {
            let a = grid.slot(t), b = grid.slot(t - k)
            cross += grid.x[a] * grid.x[b] + grid.y[a] * grid.y[b] + grid.z[a] * grid.z[b]
            energy += grid.energy[a] + grid.energy[b]
        }
        return 2 * cross / max(energy, 1e-12)
    }

    @Test(
        "sliding sums give the NSDF of summing every window anew, over runs longer than the history it keeps, across a gap and a thousandfold drop"
    )
    func slidingMatchesRecomputing() {
        let minimumWindow = 25, maximumLag = 200
        var grid = MotionGrid()
        var tracker = PeriodTracker(
            minimumLag: 10, maximumLag: maximumLag, minimumWindow: minimumWindow, keyMaximumFraction: 0.9)
        var compared = 0
        var periodic = 0
        for n in 0..<3600 {
            // A gap at 1500 starts a new run (the detector resets the tracker then); from 2800 the motion is a
            // thousandth as large.
            if n == 1500 {
                grid.restart(at: grid.next + 40)
                tracker.reset()
            }
            let scale = n >= 2800 ? 0.001 : 1
            let p = Self.point(n)
            grid.append(motion: (scale * p.0, scale * p.1, scale * p.2), down: (0, 0, 1))
            tracker.update(grid)
            let picked = tracker.pick()
            guard n % 7 == 0 else { continue }
            // Within 1e-6: after the drop, the sums carry the rounding of the loud minute (1e-9 of the quiet values)
            // until their next exact recompute. A sum that reads the wrong point is off by far more.
            for k in 1...maximumLag {
                let exact = Self.nsdf(grid, lag: k, minimumWindow: minimumWindow)
                #expect(abs(tracker.nsdf[k] - exact) < 1e-6, "point \(n), lag \(k)")
            }
            compared += 1
            if abs(picked.lag - 58) <= 2 { periodic += 1 }
        }
        // The comparison saw both runs, and the tracker picked the 2.3 s period (57.5 points) at most of the about 340
        // compared points whose longest window was full (286 when written).
        #expect(compared == 515)
        #expect(periodic > 250)
    }
}
