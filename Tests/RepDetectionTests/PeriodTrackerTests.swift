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

    /// The period rule of `PeriodTracker` over lags 1…n.count − 1 of `n`, written plainly: skip the first positive
    /// stretch; each later positive stretch's highest point at a lag ≥ `minimumLag` is a key maximum; the shortest lag
    /// whose key maximum reaches `fraction` of the highest.
    private static func referencePick(_ n: [Double], minimumLag: Int, fraction: Double) -> (lag: Int, value: Double) {
        var stretches: [[Int]] = []
        var current: [Int] = []
        for k in 1..<n.count {
            if n[k] > 0 {
                current.append(k)
            } else if !current.isEmpty {
                stretches.append(current)
                current = []
            }
        }
        if !current.isEmpty { stretches.append(current) }
        if n.count > 1, n[1] > 0, !stretches.isEmpty { stretches.removeFirst() }
        // The first of the stretch's highest values, as the tracker keeps it.
        let keys = stretches.map { lags in lags.max { n[$0] < n[$1] || (n[$0] == n[$1] && $0 > $1) }! }
            .filter { $0 >= minimumLag }
        guard let highest = keys.map({ n[$0] }).max(), highest > 0 else { return (0, 0) }
        for k in keys where n[k] >= fraction * highest { return (k, n[k]) }
        return (0, 0)
    }

    @Test(
        "sliding sums give the NSDF of summing every window anew, and the pick follows its rule, over runs longer than the history it keeps, across a gap and a thousandfold drop",
        arguments: [
            (minimumLag: 10, maximumLag: 200, every: 7),  // the defaults: 0.4–8 s
            (minimumLag: 3, maximumLag: 20, every: 5),  // every lag shorter than the minimum window
            (minimumLag: 6, maximumLag: 520, every: 29),  // a span longer than the 1024 points between exact sums
        ])
    func slidingMatchesRecomputing(configuration: (minimumLag: Int, maximumLag: Int, every: Int)) {
        let minimumWindow = 25, maximumLag = configuration.maximumLag
        var grid = MotionGrid()
        var tracker = PeriodTracker(
            minimumLag: configuration.minimumLag, maximumLag: maximumLag, minimumWindow: minimumWindow,
            keyMaximumFraction: 0.8)
        var compared = 0
        var withPeriod = 0
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
            guard n % configuration.every == 0 else { continue }
            // Within 1e-6: after the drop, the sums carry the rounding of the loud minute (1e-9 of the quiet values)
            // until their next exact recompute. A sum that reads the wrong point is off by far more.
            for k in 1...maximumLag {
                let exact = Self.nsdf(grid, lag: k, minimumWindow: minimumWindow)
                #expect(abs(tracker.nsdf[k] - exact) < 1e-6, "point \(n), lag \(k)")
            }
            let reference = Self.referencePick(
                Array(tracker.nsdf[0...maximumLag]), minimumLag: configuration.minimumLag, fraction: 0.8)
            #expect(picked.lag == reference.lag && picked.periodicity == reference.value, "point \(n)")
            compared += 1
            if picked.lag > 0 { withPeriod += 1 }
        }
        // The comparison saw both runs, and where the 2.3 s period (57.5 points) is a lag the tracker holds, periods
        // were found at a share of them (the defaults: 286 of the about 340 compared points whose longest window was
        // full, when written).
        #expect(compared == (3600 + configuration.every - 1) / configuration.every)
        if maximumLag >= 60 { #expect(withPeriod > compared / 4) }
    }
}
