/// The exercise gate's step-rhythm features, kept up to date point by point: the autocorrelation of the last
/// `ExerciseGateFeatures.stepWindow` grid points (3 s) at every lag up to just past a step's longest lag, of the 3-D
/// motion and of the motion along gravity.
///
/// The sums slide like the period tracker's: each new grid point adds one product per lag and drops the one that left
/// the window (19 lags, a few multiplications each), so that judging a moment costs no pass over the window. They are
/// summed again exactly every `recomputeInterval` points, whenever the window was not followed point by point (the
/// start of a run, a gap), and when the window's energy (3-D or along gravity) fell below a thousandth of the largest
/// it had since the last exact sum (the rounding left by large motion would then weigh on small motion's
/// correlations).
struct StepRhythmTracker {
    /// Lags 1…19: the step lags (6–18 points) and one more, to tell whether the longest is a local maximum.
    static let longest = ExerciseGateFeatures.stepLags.upperBound + 1
    static let window = ExerciseGateFeatures.stepWindow

    private let recomputeInterval: Int
    /// Σ a(t)·a(t−k) over the window, 3-D motion, by lag k (index 0 unused).
    private var product: [Double]
    /// Σ |a(t−k)|² over the window.
    private var then: [Double]
    /// Σ v(t)·v(t−k) over the window, motion along gravity.
    private var verticalProduct: [Double]
    /// Σ v(t−k)² over the window.
    private var verticalThen: [Double]
    /// Σ |a(t)|² and Σ v(t)² over the window (the same for every lag).
    private var now = 0.0, verticalNow = 0.0
    /// The newest index summed; `Int.min` when the sums do not hold a whole window.
    private var latest = Int.min
    private var sinceRecompute = 0
    /// The largest Σ |a(t)|² and Σ v(t)² since the last exact sum.
    private var peakEnergy = 0.0, peakVerticalEnergy = 0.0

    /// A tracker whose sums are summed again from the grid every `recomputeInterval` points (1: at every point).
    init(recomputeInterval: Int = 512) {
        self.recomputeInterval = max(1, recomputeInterval)
        product = Array(repeating: 0, count: Self.longest + 1)
        then = product
        verticalProduct = product
        verticalThen = product
    }

    /// Takes in the grid's newest point. Call it after every `MotionGrid.append` for as long as its rhythms are
    /// wanted (the detector: while the gate is on); a point it missed, or a restart of the grid, shows as a window not
    /// followed point by point, and the sums are summed anew.
    mutating func update(_ grid: MotionGrid) {
        let i = grid.next - 1
        let first = i - Self.window + 1
        guard first - Self.longest >= grid.oldest else {
            latest = Int.min
            return
        }
        sinceRecompute += 1
        guard latest == i - 1, sinceRecompute < recomputeInterval, now >= 1e-3 * peakEnergy,
            verticalNow >= 1e-3 * peakVerticalEnergy
        else {
            recompute(grid, endingAt: i)
            return
        }
        // The point that joins the window (i) and the one that leaves it (first − 1), each against its lagged points.
        let a = grid.slot(i), b = grid.slot(first - 1)
        let xi = grid.x[a], yi = grid.y[a], zi = grid.z[a], vi = grid.vertical[a]
        let xb = grid.x[b], yb = grid.y[b], zb = grid.z[b], vb = grid.vertical[b]
        now += grid.energy[a] - grid.energy[b]
        verticalNow += vi * vi - vb * vb
        peakEnergy = max(peakEnergy, now)
        peakVerticalEnergy = max(peakVerticalEnergy, verticalNow)
        // x, y, z and energy from the grid's mirrored copies (contiguous, no wrapping); the vertical by slot.
        let mask = grid.capacity - 1, newest = grid.mirrored(i), leaving = grid.mirrored(first - 1)
        grid.x.withUnsafeBufferPointer { x in
            grid.y.withUnsafeBufferPointer { y in
                grid.z.withUnsafeBufferPointer { z in
                    grid.energy.withUnsafeBufferPointer { energy in
                        grid.vertical.withUnsafeBufferPointer { vertical in
                            product.withUnsafeMutableBufferPointer { product in
                                then.withUnsafeMutableBufferPointer { then in
                                    verticalProduct.withUnsafeMutableBufferPointer { verticalProduct in
                                        verticalThen.withUnsafeMutableBufferPointer { verticalThen in
                                            for k in 1...Self.longest {
                                                let s = newest &- k, t = leaving &- k
                                                product[k] +=
                                                    xi * x[s] + yi * y[s] + zi * z[s]
                                                    - (xb * x[t] + yb * y[t] + zb * z[t])
                                                then[k] += energy[s] - energy[t]
                                                let vs = vertical[(i &- k) & mask]
                                                let vt = vertical[(first &- 1 &- k) & mask]
                                                verticalProduct[k] += vi * vs - vb * vt
                                                verticalThen[k] += vs * vs - vt * vt
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
    }

    /// Sums the window ending at `i` again from the grid.
    private mutating func recompute(_ grid: MotionGrid, endingAt i: Int) {
        sinceRecompute = 0
        let first = i - Self.window + 1
        now = 0
        verticalNow = 0
        for j in first...i {
            let a = grid.slot(j)
            now += grid.energy[a]
            verticalNow += grid.vertical[a] * grid.vertical[a]
        }
        peakEnergy = now
        peakVerticalEnergy = verticalNow
        for k in 1...Self.longest {
            var p = 0.0, e = 0.0, vp = 0.0, ve = 0.0
            for j in first...i {
                let a = grid.slot(j), b = grid.slot(j - k)
                p += grid.x[a] * grid.x[b] + grid.y[a] * grid.y[b] + grid.z[a] * grid.z[b]
                e += grid.energy[b]
                let w = grid.vertical[b]
                vp += grid.vertical[a] * w
                ve += w * w
            }
            product[k] = p
            then[k] = e
            verticalProduct[k] = vp
            verticalThen[k] = ve
        }
        latest = i
    }

    /// The most prominent autocorrelation peak at a step's lag in the window ending at grid index `i`, of the 3-D
    /// motion (with its lag in s) and of the motion along gravity (see `ExerciseGateFeatures.stepRhythm`); zeros when
    /// the sums do not hold that window (too little history in the current run).
    func rhythms(endingAt i: Int) -> (prominence: Double, period: Double, vertical: Double) {
        guard latest == i else { return (0, 0, 0) }
        var peaks = (ExerciseGateFeatures.PeakSearch(), ExerciseGateFeatures.PeakSearch())
        let energy = max(now, 0), verticalEnergy = max(verticalNow, 0)
        for k in 1...Self.longest {
            peaks.0.add(product[k] / max((energy * max(then[k], 0)).squareRoot(), 1e-12), lag: k)
            peaks.1.add(
                verticalProduct[k] / max((verticalEnergy * max(verticalThen[k], 0)).squareRoot(), 1e-12), lag: k)
        }
        return (peaks.0.best, Double(peaks.0.bestLag) * MotionGrid.spacing, peaks.1.best)
    }
}
