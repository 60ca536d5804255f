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
    private let minimumWindow: Int
    private var window: [Int]
    private var cross: [Double]
    private var energyNow: [Double]
    private var energyLagged: [Double]
    /// n(k) after the last `pick()`, 0 where the window is not yet full.
    private(set) var nsdf: [Double]
    /// Scratch for `pick()`: the lags of the key maxima (at most one in two lags).
    private var keyMaxima: [Int]
    private var latest = -1
    private var origin = 0
    private var sinceRecompute = 0
    private static let recomputeInterval = 1024

    init(minimumLag: Int, maximumLag: Int, minimumWindow: Int, keyMaximumFraction: Double) {
        self.minimumLag = minimumLag
        self.maximumLag = maximumLag
        self.keyMaximumFraction = keyMaximumFraction
        self.minimumWindow = minimumWindow
        window = (0...maximumLag).map { max($0, minimumWindow) }
        cross = Array(repeating: 0, count: maximumLag + 1)
        energyNow = cross
        energyLagged = cross
        nsdf = cross
        keyMaxima = Array(repeating: 0, count: maximumLag / 2 + 1)
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
        latest = -1
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
        let mask = grid.capacity - 1
        let si = i & mask
        let xi = grid.x[si], yi = grid.y[si], zi = grid.z[si], ei = grid.energy[si]
        let maximumLag = maximumLag
        // Once every lag's window is full (the usual case), no lag needs a bounds decision.
        let steady = i - span >= start
        grid.x.withUnsafeBufferPointer { x in
            grid.y.withUnsafeBufferPointer { y in
                grid.z.withUnsafeBufferPointer { z in
                    grid.energy.withUnsafeBufferPointer { e in
                        window.withUnsafeBufferPointer { window in
                            cross.withUnsafeMutableBufferPointer { cross in
                                energyNow.withUnsafeMutableBufferPointer { now in
                                    energyLagged.withUnsafeMutableBufferPointer { lagged in
                                        if steady {
                                            // Contiguous reads from the grid's mirrored copy.
                                            let base = grid.mirrored(i)
                                            // Lags up to the minimum window drop the point that window left …
                                            let short = min(minimumWindow, maximumLag)
                                            let a0 = base - minimumWindow
                                            let xa = x[a0], ya = y[a0], za = z[a0], ea = e[a0]
                                            for k in 1...short {
                                                let s = base - k, b = a0 - k
                                                cross[k] +=
                                                    xi * x[s] + yi * y[s] + zi * z[s]
                                                    - (xa * x[b] + ya * y[b] + za * z[b])
                                                now[k] += ei - ea
                                                lagged[k] += e[s] - e[b]
                                            }
                                            // … longer ones (window = lag) the point one lag back, against two lags back.
                                            guard short < maximumLag else { return }
                                            for k in (short + 1)...maximumLag {
                                                let s = base - k, b = base - 2 * k
                                                cross[k] +=
                                                    xi * x[s] + yi * y[s] + zi * z[s]
                                                    - (x[s] * x[b] + y[s] * y[b] + z[s] * z[b])
                                                now[k] += ei - e[s]
                                                lagged[k] += e[s] - e[b]
                                            }
                                            return
                                        }
                                        for k in 1...maximumLag {
                                            let lag = i - k
                                            guard lag >= start else { break }
                                            let s = lag & mask
                                            cross[k] += xi * x[s] + yi * y[s] + zi * z[s]
                                            now[k] += ei
                                            lagged[k] += e[s]
                                            let leaving = i - window[k]
                                            if leaving - k >= start {
                                                let a = leaving & mask, b = (leaving - k) & mask
                                                cross[k] -= x[a] * x[b] + y[a] * y[b] + z[a] * z[b]
                                                now[k] -= e[a]
                                                lagged[k] -= e[b]
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        latest = i
        origin = start
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
        }
        latest = i
        origin = start
    }

    /// The period in grid points (0: none) and its periodicity, after the last point.
    mutating func pick() -> (lag: Int, periodicity: Double) {
        let maximumLag = maximumLag, minimumLag = minimumLag
        let steady = latest - span >= origin
        let latest = latest, origin = origin
        return cross.withUnsafeBufferPointer { cross in
            energyNow.withUnsafeBufferPointer { now in
                energyLagged.withUnsafeBufferPointer { lagged in
                    window.withUnsafeBufferPointer { window in
                        keyMaxima.withUnsafeMutableBufferPointer { keys in
                            nsdf.withUnsafeMutableBufferPointer { n in
                                if steady {
                                    for k in 1..<(maximumLag + 1) {
                                        n[k] = 2 * cross[k] / max(now[k] + lagged[k], 1e-12)
                                    }
                                } else {
                                    for k in 1...maximumLag {
                                        let full = latest - window[k] + 1 >= origin + k
                                        n[k] = full ? 2 * cross[k] / max(now[k] + lagged[k], 1e-12) : 0
                                    }
                                }
                                // The key maxima at lags ≥ `minimumLag`, in order of lag, and the highest of them.
                                // The first positive stretch (lags near 0, where the signal still resembles itself)
                                // is skipped.
                                var count = 0
                                var highest = -Double.infinity
                                var k = 1
                                while k <= maximumLag, n[k] > 0 { k += 1 }
                                while k <= maximumLag {
                                    while k <= maximumLag, n[k] <= 0 { k += 1 }
                                    guard k <= maximumLag else { break }
                                    var best = k
                                    while k <= maximumLag, n[k] > 0 {
                                        if n[k] > n[best] { best = k }
                                        k += 1
                                    }
                                    if best >= minimumLag {
                                        keys[count] = best
                                        count += 1
                                        highest = max(highest, n[best])
                                    }
                                }
                                guard highest > 0 else { return (0, 0) }
                                // The shortest lag whose key maximum reaches the fraction of the highest.
                                let limit = keyMaximumFraction * highest
                                for j in 0..<count where n[keys[j]] >= limit { return (keys[j], n[keys[j]]) }
                                return (0, 0)
                            }
                        }
                    }
                }
            }
        }
    }
}
