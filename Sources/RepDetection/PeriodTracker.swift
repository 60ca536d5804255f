/// Tracks the fundamental period of the 3-D motion on the `MotionGrid`, point by point.
///
/// For every lag k from one grid point up to the longest period it keeps the normalized square difference function
/// of McLeod and Wyvill over the last W(k) = max(k, minimum window) points, built on the 3-D dot product so that the
/// sensor's orientation does not matter:
///
///     n(k) = 2 Σ a(t)·a(t−k) / Σ (|a(t)|² + |a(t−k)|²)
///
/// The products' sums slide: each new point adds one product per lag and drops the one that left the window (O(lags)
/// per point, recomputed exactly every 1024 points so that rounding cannot build up). The energies in the denominator
/// are differences of one running sum of |a|², kept for the last points (1024 with the defaults: the power of two above
/// the span the tracker reads). The period is the shortest lag whose key
/// maximum (the highest value between two zero crossings) reaches `keyMaximumFraction` of the highest key maximum;
/// its value is the periodicity, −1…1.
struct PeriodTracker {
    let minimumLag: Int
    let maximumLag: Int
    private let keyMaximumFraction: Double
    private let minimumWindow: Int
    private var window: [Int]
    /// Per lag k: the sliding sum Σ a(t)·a(t−k) over the window.
    private var cross: [Double]
    /// The energy |a|² summed from the run's first point (less a base removed every `recomputeInterval` points) up to
    /// the newest: a window's energy is the difference of two of these.
    private var prefix = 0.0
    /// `prefix` just before the run's first point: 0, less the bases removed since.
    private var runBase = 0.0
    /// n(k) after the last `pick()`, 0 where the window is not yet full (index 0 unused; the last, −1, ends `pick()`'s
    /// scans).
    private(set) var nsdf: [Double]
    /// Scratch for `pick()`: the lags of the key maxima (at most one in two lags).
    private var keyMaxima: [Int]
    private var latest = -1
    private var origin = 0
    /// The last `historyCapacity` points' x, y, z and energy sum (`prefix`; one after the other, `2 × historyCapacity`
    /// each), newest first and stored twice (slot and slot + capacity): the point `n` before the newest sits `n` after
    /// it, so the loops over lags read forward, one lag and two lags ahead, and the compiler vectorizes them across
    /// lags.
    private var recent: [Double]
    private let historyCapacity: Int
    private var sinceRecompute = 0
    private static let recomputeInterval = 1024

    init(minimumLag: Int, maximumLag: Int, minimumWindow: Int, keyMaximumFraction: Double) {
        self.minimumLag = minimumLag
        self.maximumLag = maximumLag
        self.keyMaximumFraction = keyMaximumFraction
        self.minimumWindow = minimumWindow
        window = (0...maximumLag).map { max($0, minimumWindow) }
        cross = Array(repeating: 0, count: maximumLag + 1)
        nsdf = Array(repeating: 0, count: maximumLag + 2)  // and a sentinel for `pick()`
        keyMaxima = Array(repeating: 0, count: maximumLag / 2 + 1)
        var capacity = 1
        while capacity <= 2 * maximumLag + max(maximumLag, minimumWindow) { capacity <<= 1 }
        historyCapacity = capacity
        recent = Array(repeating: 0, count: 8 * capacity)
    }

    /// Where the point `index` sits in the recent copies; the point `n` before it sits at that slot + `n`.
    @inline(__always) private func recentSlot(_ index: Int) -> Int {
        historyCapacity &- 1 &- (index & (historyCapacity &- 1))
    }

    /// The longest stretch of history the tracker reads behind the newest point.
    var span: Int { 2 * maximumLag + window[maximumLag] }

    /// Forgets the sums (after a gap, the grid starts a new run).
    mutating func reset() {
        for k in 0..<cross.count { cross[k] = 0 }
        for k in 0...maximumLag { nsdf[k] = 0 }
        prefix = 0
        runBase = 0
        sinceRecompute = 0
        latest = -1
    }

    /// Takes in the grid's newest point. When the grid restarts (a new run), `reset()` first: the sums start anew.
    mutating func update(_ grid: MotionGrid) {
        let i = grid.next - 1
        let start = grid.origin
        let mask = grid.capacity - 1
        let si = i & mask
        let xi = grid.x[si], yi = grid.y[si], zi = grid.z[si]
        // The newest point into the newest-first copies, with the energy summed up to it (from 0 at the run's first
        // point: `reset()`).
        prefix += grid.energy[si]
        let q = recentSlot(i)
        let capacity = historyCapacity
        let prefix = prefix
        recent.withUnsafeMutableBufferPointer { r in
            r[q] = xi
            r[q + capacity] = xi
            r[q + 2 * capacity] = yi
            r[q + 3 * capacity] = yi
            r[q + 4 * capacity] = zi
            r[q + 5 * capacity] = zi
            r[q + 6 * capacity] = prefix
            r[q + 7 * capacity] = prefix
        }
        sinceRecompute += 1
        if sinceRecompute >= Self.recomputeInterval {
            sinceRecompute = 0
            recompute(grid)
            rebasePrefix()
            return
        }
        let maximumLag = maximumLag
        // Once every lag's window is full (the usual case), no lag needs a bounds decision.
        let steady = i - span >= start
        if steady {
            let short = min(minimumWindow, maximumLag)
            let minimumWindow = minimumWindow
            let c = 2 * capacity
            recent.withUnsafeBufferPointer { rb in
                cross.withUnsafeMutableBufferPointer { cb in
                    let x = rb.baseAddress! + q, y = x + c, z = y + c
                    let cross = cb.baseAddress!
                    // Lags up to the minimum window drop the point that window left …
                    let a0 = minimumWindow
                    let xa = x[a0], ya = y[a0], za = z[a0]
                    var k = 1
                    while k <= short {
                        let b = a0 &+ k
                        cross[k] += xi * x[k] + yi * y[k] + zi * z[k] - (xa * x[b] + ya * y[b] + za * z[b])
                        k &+= 1
                    }
                    // … longer ones (window = lag) the point one lag back, against two lags back:
                    // a(i)·a(i−k) − a(i−k)·a(i−2k).
                    while k <= maximumLag {
                        let b = k &<< 1
                        cross[k] += x[k] * (xi - x[b]) + y[k] * (yi - y[b]) + z[k] * (zi - z[b])
                        k &+= 1
                    }
                }
            }
            latest = i
            origin = start
            return
        }
        grid.x.withUnsafeBufferPointer { x in
            grid.y.withUnsafeBufferPointer { y in
                grid.z.withUnsafeBufferPointer { z in
                    window.withUnsafeBufferPointer { window in
                        cross.withUnsafeMutableBufferPointer { cross in
                            for k in 1...maximumLag {
                                let lag = i - k
                                guard lag >= start else { break }
                                let s = lag & mask
                                cross[k] += xi * x[s] + yi * y[s] + zi * z[s]
                                let leaving = i - window[k]
                                if leaving - k >= start {
                                    let a = leaving & mask, b = (leaving - k) & mask
                                    cross[k] -= x[a] * x[b] + y[a] * y[b] + z[a] * z[b]
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
        if i - span >= start {
            // Every window is in the newest-first copy: contiguous sums, in two lanes (even and odd points).
            let q = recentSlot(i), c = 2 * historyCapacity
            recent.withUnsafeBufferPointer { rb in
                window.withUnsafeBufferPointer { window in
                    cross.withUnsafeMutableBufferPointer { cross in
                        let x = rb.baseAddress! + q, y = x + c, z = y + c
                        for k in 1...maximumLag {
                            let w = window[k]
                            var sum = SIMD2<Double>()
                            var n = 0
                            while n &+ 1 < w {
                                let m = n &+ k
                                sum +=
                                    SIMD2(x[n], x[n &+ 1]) * SIMD2(x[m], x[m &+ 1])
                                    + SIMD2(y[n], y[n &+ 1]) * SIMD2(y[m], y[m &+ 1])
                                    + SIMD2(z[n], z[n &+ 1]) * SIMD2(z[m], z[m &+ 1])
                                n &+= 2
                            }
                            var total = sum.sum()
                            if n < w { total += x[n] * x[n &+ k] + y[n] * y[n &+ k] + z[n] * z[n &+ k] }
                            cross[k] = total
                        }
                    }
                }
            }
            latest = i
            origin = start
            return
        }
        for k in 1...maximumLag {
            var c = 0.0
            let w = window[k]
            var j = max(i - w + 1, start + k)
            while j <= i {
                let a = grid.slot(j), b = grid.slot(j - k)
                c += grid.x[a] * grid.x[b] + grid.y[a] * grid.y[b] + grid.z[a] * grid.z[b]
                j += 1
            }
            cross[k] = c
        }
        latest = i
        origin = start
    }

    /// Subtracts the newest point's energy sum from every held sum (the differences, which are the window sums, stay
    /// the same): the sums stay as small as a few minutes of motion, and so does their rounding.
    private mutating func rebasePrefix() {
        let base = prefix
        let first = 6 * historyCapacity
        for n in first..<recent.count { recent[n] -= base }
        prefix = 0
        runBase -= base
    }

    /// The period in grid points (0: none) and its periodicity, after the last point.
    mutating func pick() -> (lag: Int, periodicity: Double) {
        let maximumLag = maximumLag, minimumLag = minimumLag, minimumWindow = minimumWindow
        let steady = latest - span >= origin
        let latest = latest, origin = origin
        let sums = 6 * historyCapacity + recentSlot(latest)
        return recent.withUnsafeBufferPointer { rb in
            window.withUnsafeBufferPointer { window -> (lag: Int, periodicity: Double) in
                // The energy summed up to the point `n` before the newest (0 before the run).
                let p = rb.baseAddress! + sums
                return cross.withUnsafeBufferPointer { cross in
                    keyMaxima.withUnsafeMutableBufferPointer { keys in
                        nsdf.withUnsafeMutableBufferPointer { n -> (lag: Int, periodicity: Double) in
                            // Σ (|a(t)|² + |a(t−k)|²) over the window: the window's energy now and a lag earlier.
                            let short = min(minimumWindow, maximumLag)
                            if steady {
                                let now = p[0] - p[minimumWindow]
                                for k in 1...short {
                                    n[k] = 2 * cross[k] / max(now + (p[k] - p[k &+ minimumWindow]), 1e-12)
                                }
                                var k = short &+ 1
                                while k <= maximumLag {
                                    n[k] = 2 * cross[k] / max(p[0] - p[k &<< 1], 1e-12)
                                    k &+= 1
                                }
                            } else {
                                let runBase = runBase
                                func sum(_ back: Int) -> Double { latest - back >= origin ? p[back] : runBase }
                                for k in 1...maximumLag {
                                    let w = window[k]
                                    let full = latest - w + 1 >= origin + k
                                    let energy = sum(0) - sum(w) + sum(k) - sum(k + w)
                                    n[k] = full ? 2 * cross[k] / max(energy, 1e-12) : 0
                                }
                            }
                            // The key maxima at lags ≥ `minimumLag`, in order of lag, and the highest of them.
                            // The first positive stretch (lags near 0, where the signal still resembles itself)
                            // is skipped.
                            // n[maximumLag + 1] is −1: every positive stretch ends by then.
                            let n = n.baseAddress!, keys = keys.baseAddress!
                            n[maximumLag &+ 1] = -1
                            var count = 0
                            var highest = -Double.infinity
                            var k = 1
                            while n[k] > 0 { k &+= 1 }
                            while k <= maximumLag {
                                while k <= maximumLag, n[k] <= 0 { k &+= 1 }
                                guard k <= maximumLag else { break }
                                var best = k, bestValue = n[k]
                                k &+= 1
                                while n[k] > 0 {
                                    if n[k] > bestValue {
                                        best = k
                                        bestValue = n[k]
                                    }
                                    k &+= 1
                                }
                                if best >= minimumLag {
                                    keys[count] = best
                                    count &+= 1
                                    highest = max(highest, bestValue)
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
