/// Tracks the fundamental period of the 3-D motion on the `MotionGrid`, point by point.
///
/// For every lag k from one grid point up to the longest period it keeps the normalized square difference function
/// of McLeod and Wyvill over the last W(k) = max(k, minimum window) points, built on the 3-D dot product so that the
/// sensor's orientation does not matter:
///
///     n(k) = 2 Σ a(t)·a(t−k) / Σ (|a(t)|² + |a(t−k)|²)
///
/// The sums slide: each new point adds one product per lag and drops the one that left the window (O(lags) per point,
/// recomputed exactly every 1024 points so that rounding cannot build up). The period is the shortest lag whose key
/// maximum (the highest value between two zero crossings) reaches `keyMaximumFraction` of the highest key maximum;
/// its value is the periodicity, −1…1.
struct PeriodTracker {
    let minimumLag: Int
    let maximumLag: Int
    private let keyMaximumFraction: Double
    private var window: [Int]
    private var cross: [Double]
    private var energyNow: [Double]
    private var energyLagged: [Double]
    /// n(k) after the last point, 0 where the window is not yet full.
    private(set) var nsdf: [Double]
    private var sinceRecompute = 0
    private static let recomputeInterval = 1024

    init(minimumLag: Int, maximumLag: Int, minimumWindow: Int, keyMaximumFraction: Double) {
        self.minimumLag = minimumLag
        self.maximumLag = maximumLag
        self.keyMaximumFraction = keyMaximumFraction
        window = (0...maximumLag).map { max($0, minimumWindow) }
        cross = Array(repeating: 0, count: maximumLag + 1)
        energyNow = cross
        energyLagged = cross
        nsdf = cross
    }

    /// The longest stretch of history the tracker reads behind the newest point.
    var span: Int { 2 * maximumLag + window[maximumLag] }

    /// Forgets the sums (after a gap, the grid starts a new run).
    mutating func reset() {
        for k in 0...maximumLag {
            cross[k] = 0
            energyNow[k] = 0
            energyLagged[k] = 0
            nsdf[k] = 0
        }
        sinceRecompute = 0
    }

    /// Takes in the grid's newest point.
    mutating func update(_ grid: MotionGrid) {
        let i = grid.next - 1
        let start = grid.origin
        sinceRecompute += 1
        if sinceRecompute >= Self.recomputeInterval {
            sinceRecompute = 0
            recompute(grid)
            return
        }
        let si = grid.slot(i)
        let xi = grid.x[si], yi = grid.y[si], zi = grid.z[si], ei = grid.energy[si]
        grid.x.withUnsafeBufferPointer { x in
            grid.y.withUnsafeBufferPointer { y in
                grid.z.withUnsafeBufferPointer { z in
                    grid.energy.withUnsafeBufferPointer { e in
                        for k in 1...maximumLag {
                            let lagged = i - k
                            guard lagged >= start else { break }
                            let s = grid.slot(lagged)
                            cross[k] += xi * x[s] + yi * y[s] + zi * z[s]
                            energyNow[k] += ei
                            energyLagged[k] += e[s]
                            let w = window[k]
                            let leaving = i - w
                            if leaving - k >= start {
                                let a = grid.slot(leaving), b = grid.slot(leaving - k)
                                cross[k] -= x[a] * x[b] + y[a] * y[b] + z[a] * z[b]
                                energyNow[k] -= e[a]
                                energyLagged[k] -= e[b]
                            }
                            if i - w + 1 >= start + k {
                                let total = energyNow[k] + energyLagged[k]
                                nsdf[k] = 2 * cross[k] / max(total, 1e-12)
                            } else {
                                nsdf[k] = 0
                            }
                        }
                    }
                }
            }
        }
    }

    /// Sums every lag's window again from the grid.
    private mutating func recompute(_ grid: MotionGrid) {
        let i = grid.next - 1
        let start = grid.origin
        for k in 1...maximumLag {
            var c = 0.0, now = 0.0, lagged = 0.0
            let w = window[k]
            var j = max(i - w + 1, start + k)
            while j <= i {
                let a = grid.slot(j), b = grid.slot(j - k)
                c += grid.x[a] * grid.x[b] + grid.y[a] * grid.y[b] + grid.z[a] * grid.z[b]
                now += grid.energy[a]
                lagged += grid.energy[b]
                j += 1
            }
            cross[k] = c
            energyNow[k] = now
            energyLagged[k] = lagged
            nsdf[k] = i - w + 1 >= start + k ? 2 * c / max(now + lagged, 1e-12) : 0
        }
    }

    /// The period in grid points (0: none) and its periodicity.
    func pick() -> (lag: Int, periodicity: Double) {
        var highest = -Double.infinity
        forEachKeyMaximum { _, value in
            highest = max(highest, value)
            return false
        }
        guard highest > 0 else { return (0, 0) }
        var found = (lag: 0, periodicity: 0.0)
        let limit = keyMaximumFraction * highest
        forEachKeyMaximum { lag, value in
            if value >= limit {
                found = (lag, value)
                return true
            }
            return false
        }
        return found
    }

    /// Visits the key maxima at lags ≥ `minimumLag` in order of lag until `body` returns true. The first positive
    /// stretch (lags near 0, where the signal still resembles itself) is skipped.
    private func forEachKeyMaximum(_ body: (Int, Double) -> Bool) {
        var k = 1
        while k <= maximumLag, nsdf[k] > 0 { k += 1 }
        while k <= maximumLag {
            while k <= maximumLag, nsdf[k] <= 0 { k += 1 }
            guard k <= maximumLag else { return }
            var best = k
            while k <= maximumLag, nsdf[k] > 0 {
                if nsdf[k] > nsdf[best] { best = k }
                k += 1
            }
            if best >= minimumLag, body(best, nsdf[best]) { return }
        }
    }
}
