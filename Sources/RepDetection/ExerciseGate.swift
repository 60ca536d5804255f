#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(ucrt)
    import ucrt
#endif

/// What the exercise gate measures of the periodic motion at one moment: the last `max(2 periods, 3 s)` of motion on
/// the detector's grid, at the tracked period. Every feature is rotation-invariant (it uses the 3-D motion, or its
/// parts along and across gravity) and does not depend on the sensor's rate (it is measured on the 25 Hz grid).
/// docs/DETECTOR.md ("The exercise gate") says what each one tells about gait and exercise.
public struct ExerciseGateFeatures: Sendable, Equatable {
    /// The names, in the order of `values` (the training script's CSV columns and the model's weights).
    public static let names = [
        "log_period", "log_period_sq", "log_rms", "periodicity", "vertical_share", "vertical_half", "across_half",
        "vertical_full", "across_full", "log_sharpness", "log_vertical_sharpness", "steadiness", "pause_share",
        "step_rhythm", "vertical_step_rhythm", "step_period",
    ]
    /// How many features there are.
    public static let count = 16

    /// A moment with the given features, every other one 0 (the detector measures them; tests name the ones that
    /// matter to them).
    public init(
        logPeriod: Double = 0,
        logRMS: Double = 0,
        periodicity: Double = 0,
        verticalShare: Double = 0,
        verticalHalf: Double = 0,
        acrossHalf: Double = 0,
        verticalFull: Double = 0,
        acrossFull: Double = 0,
        logSharpness: Double = 0,
        logVerticalSharpness: Double = 0,
        steadiness: Double = 0,
        pauseShare: Double = 0,
        stepRhythm: Double = 0,
        verticalStepRhythm: Double = 0,
        stepPeriod: Double = 0
    ) {
        self.logPeriod = logPeriod
        self.logRMS = logRMS
        self.periodicity = periodicity
        self.verticalShare = verticalShare
        self.verticalHalf = verticalHalf
        self.acrossHalf = acrossHalf
        self.verticalFull = verticalFull
        self.acrossFull = acrossFull
        self.logSharpness = logSharpness
        self.logVerticalSharpness = logVerticalSharpness
        self.steadiness = steadiness
        self.pauseShare = pauseShare
        self.stepRhythm = stepRhythm
        self.verticalStepRhythm = verticalStepRhythm
        self.stepPeriod = stepPeriod
    }

    /// ln of the tracked period, s.
    public var logPeriod = 0.0
    /// ln of the motion's RMS over the window, g.
    public var logRMS = 0.0
    /// The tracker's periodicity at the period (−1…1).
    public var periodicity = 0.0
    /// The share of the motion's energy along gravity (0…1).
    public var verticalShare = 0.0
    /// Correlation of the motion along gravity with itself half a period earlier (−1…1): a stride's steps repeat.
    public var verticalHalf = 0.0
    /// The same for the motion across gravity: the arm's swing reverses every half stride.
    public var acrossHalf = 0.0
    /// Correlation of the motion along gravity with itself one period earlier.
    public var verticalFull = 0.0
    /// The same across gravity.
    public var acrossFull = 0.0
    /// ln of how much faster the motion changes than a sine at the period would (RMS of the point-to-point change
    /// over RMS, times period / 2π): sharp impacts and harmonics raise it.
    public var logSharpness = 0.0
    /// The same for the motion along gravity alone (heel strikes).
    public var logVerticalSharpness = 0.0
    /// The smaller over the larger of the energies of the last two periods (0…1): reps keep their size, fidgeting
    /// waxes and wanes.
    public var steadiness = 0.0
    /// The share of the window where the motion's energy is below a tenth of its mean: reps pause at their ends,
    /// gait never stops.
    public var pauseShare = 0.0
    /// A step's rhythm, whatever period the tracker picked: over the last 3 s, the most prominent peak of the 3-D
    /// motion's autocorrelation at lags of a step (0.24–0.72 s, 83–250 steps a minute), above the lowest value at
    /// a shorter lag (0 when it has no local maximum there: a slow motion falls or still rises over those lags).
    public var stepRhythm = 0.0
    /// The same for the motion along gravity alone: the bounce of each step.
    public var verticalStepRhythm = 0.0
    /// The lag of `stepRhythm`'s peak, s (0 when there is none).
    public var stepPeriod = 0.0

    /// The features as numbers, in the order of `names`.
    public var values: [Double] {
        [
            logPeriod, logPeriod * logPeriod, logRMS, periodicity, verticalShare, verticalHalf, acrossHalf,
            verticalFull, acrossFull, logSharpness, logVerticalSharpness, steadiness, pauseShare,
            stepRhythm, verticalStepRhythm, stepPeriod,
        ]
    }

    /// Feature `n` in the order of `names` (no allocation).
    public subscript(_ n: Int) -> Double {
        switch n {
        case 0: logPeriod
        case 1: logPeriod * logPeriod
        case 2: logRMS
        case 3: periodicity
        case 4: verticalShare
        case 5: verticalHalf
        case 6: acrossHalf
        case 7: verticalFull
        case 8: acrossFull
        case 9: logSharpness
        case 10: logVerticalSharpness
        case 11: steadiness
        case 12: pauseShare
        case 13: stepRhythm
        case 14: verticalStepRhythm
        default: stepPeriod
        }
    }

    /// Measures the features of the motion ending at grid index `i`, at a period of `lag` points, with the step
    /// rhythms that `steps` holds for that moment; nil when the grid does not hold enough of the motion (the window
    /// plus one period before it).
    static func measure(
        _ grid: MotionGrid, endingAt i: Int, lag: Int, periodicity: Double, steps: StepRhythmTracker
    ) -> ExerciseGateFeatures? {
        guard lag >= 2 else { return nil }
        let window = max(2 * lag, 75)
        let first = i - window + 1
        guard first - lag >= grid.oldest, i < grid.next else { return nil }
        let half = max(1, lag / 2)
        // Two lanes (even and odd points), added at the end, so that the arithmetic vectorizes.
        var vvL = GateLanes(), hhL = GateLanes()
        var vHalfL = GateLanes(), vHalfOldL = GateLanes(), hHalfL = GateLanes(), hHalfOldL = GateLanes()
        var vFullL = GateLanes(), vFullOldL = GateLanes(), hFullL = GateLanes(), hFullOldL = GateLanes()
        var changeL = GateLanes(), verticalChangeL = GateLanes()
        var recentL = GateLanes(), beforeL = GateLanes()
        // The window's first point, in the grid's arrays along and across gravity: every point the loop reads (from
        // one period before the window to its end) is contiguous from the slot of the earliest.
        guard window + lag <= MotionGrid.tail else { return nil }
        let firstSlot = grid.slot(first - lag) + lag
        let recentFrom = Int64(i - lag - first), beforeFrom = Int64(i - 2 * lag - first)
        // Every closure's type is written out: Swift 6.0 (Debian trixie's, which builds the arm64 package) could not
        // type-check these sums of SIMD operators inside closures whose types it had to infer ("unable to type-check
        // this expression in reasonable time").
        grid.vertical.withUnsafeBufferPointer { (gv: UnsafeBufferPointer<Double>) -> Void in
            grid.hx.withUnsafeBufferPointer { (gx: UnsafeBufferPointer<Double>) -> Void in
                grid.hy.withUnsafeBufferPointer { (gy: UnsafeBufferPointer<Double>) -> Void in
                    grid.hz.withUnsafeBufferPointer { (gz: UnsafeBufferPointer<Double>) -> Void in
                        let points = GatePoints(
                            v: gv.baseAddress! + firstSlot, x: gx.baseAddress! + firstSlot,
                            y: gy.baseAddress! + firstSlot, z: gz.baseAddress! + firstSlot, count: window)
                        // Three passes over the window (half a period back, a period back, one point back), each
                        // few enough sums to stay in registers.
                        points.pass(back: half) { (n: Int, a: GatePoint, b: GatePoint) -> Void in
                            let h2: GateLanes = a.dot(a)
                            let vv: GateLanes = a.v * a.v
                            vvL += vv
                            hhL += h2
                            vHalfL += a.v * b.v
                            vHalfOldL += b.v * b.v
                            hHalfL += a.dot(b)
                            hHalfOldL += b.dot(b)
                            let e: GateLanes = vv + h2
                            let index = SIMD2<Int64>(Int64(n), Int64(n &+ 1))
                            let notRecent: SIMDMask<SIMD2<Int64>.MaskStorage> = index .<= recentFrom
                            let outsideBefore: SIMDMask<SIMD2<Int64>.MaskStorage> =
                                (index .> recentFrom) .| (index .<= beforeFrom)
                            recentL += e.replacing(with: 0, where: notRecent)
                            beforeL += e.replacing(with: 0, where: outsideBefore)
                        }
                        points.pass(back: lag) { (_: Int, a: GatePoint, c: GatePoint) -> Void in
                            vFullL += a.v * c.v
                            vFullOldL += c.v * c.v
                            hFullL += a.dot(c)
                            hFullOldL += c.dot(c)
                        }
                        points.pass(back: 1) { (_: Int, a: GatePoint, p: GatePoint) -> Void in
                            let d: GatePoint = a.minus(p)
                            let dv2: GateLanes = d.v * d.v
                            verticalChangeL += dv2
                            changeL += dv2 + d.dot(d)
                        }
                    }
                }
            }
        }
        let vv = vvL.sum(), hh = hhL.sum()
        let vHalf = vHalfL.sum(), vHalfOld = vHalfOldL.sum(), hHalf = hHalfL.sum(), hHalfOld = hHalfOldL.sum()
        let vFull = vFullL.sum(), vFullOld = vFullOldL.sum(), hFull = hFullL.sum(), hFullOld = hFullOldL.sum()
        let change = changeL.sum(), verticalChange = verticalChangeL.sum()
        let recent = recentL.sum(), before = beforeL.sum()
        let total = vv + hh
        guard total > 1e-12 else { return nil }
        let mean = total / Double(window)
        // Contiguous in the grid's mirrored copy of the energy.
        let paused = grid.energy.withUnsafeBufferPointer { energy in
            let last = grid.mirrored(i), limit = 0.1 * mean
            var count = 0
            for n in (last - window + 1)...last { count &+= energy[n] < limit ? 1 : 0 }
            return count
        }
        func correlation(_ product: Double, _ a: Double, _ b: Double) -> Double {
            product / max((a * b).squareRoot(), 1e-12)
        }
        let sine = Double(lag) / (2 * Double.pi)
        var f = ExerciseGateFeatures()
        f.logPeriod = log(Double(lag) * MotionGrid.spacing)
        f.logRMS = 0.5 * log(mean)
        f.periodicity = periodicity
        f.verticalShare = vv / total
        f.verticalHalf = correlation(vHalf, vv, vHalfOld)
        f.acrossHalf = correlation(hHalf, hh, hHalfOld)
        f.verticalFull = correlation(vFull, vv, vFullOld)
        f.acrossFull = correlation(hFull, hh, hFullOld)
        f.logSharpness = log(max((change / total).squareRoot() * sine, 1e-3))
        f.logVerticalSharpness = log(max((verticalChange / max(vv, 1e-12)).squareRoot() * sine, 1e-3))
        f.steadiness = max(recent, before) > 0 ? min(recent, before) / max(recent, before) : 0
        f.pauseShare = Double(paused) / Double(window)
        (f.stepRhythm, f.stepPeriod, f.verticalStepRhythm) = steps.rhythms(endingAt: i)
        return f
    }
}

extension ExerciseGateFeatures {
    /// Step lags: 6–18 grid points (0.24–0.72 s).
    static let stepLags = 6...18
    /// The window of the step rhythm: 3 s.
    static let stepWindow = 75

    /// Finds the most prominent local maximum at a step's lag in an autocorrelation fed lag by lag from lag 1.
    struct PeakSearch {
        var lowest = 1.0, best = 0.0, bestLag = 0
        var before = 1.0, previous = 1.0

        /// Adds the autocorrelation `r` at `lag` (lags 1, 2, … in order).
        mutating func add(_ r: Double, lag: Int) {
            // `previous` (at lag − 1) is a peak when it rose from `before` and `r` does not rise above it.
            if lag - 1 >= stepLags.lowerBound, previous > before, previous >= r, previous - lowest > best {
                best = previous - lowest
                bestLag = lag - 1
            }
            if lag - 1 >= 1 { lowest = min(lowest, previous) }
            before = previous
            previous = r
        }
    }
}

/// One or more shallow decision trees over `ExerciseGateFeatures` whose leaves add log-odds: the probability that
/// periodic motion is exercise (the built-in model is one tree; `scripts/train-gate --trees N` fits boosted ones). The
/// trees share the node arrays; tree t starts at node `roots[t]`. Node n asks whether
/// feature `feature[n]` is at most `threshold[n]` and goes on to `left[n]` if so, else to `right[n]`; a leaf
/// (`feature[n]` < 0) adds `score[n]` to the log-odds. The probability is the logistic of `offset` plus the scores of
/// the leaves reached, one per tree. `trained` is the model that `scripts/train-gate` fitted (its numbers and output
/// are in docs/gate-training.txt).
public struct ExerciseGateModel: Sendable, Equatable {
    /// The feature each node asks about (index into `ExerciseGateFeatures.names`), −1 at a leaf.
    public var feature: [Int]
    /// The node's threshold.
    public var threshold: [Double]
    /// The node to go to when the feature is at most the threshold.
    public var left: [Int]
    /// The node to go to otherwise.
    public var right: [Int]
    /// A leaf's contribution to the log-odds of exercise.
    public var score: [Double]
    /// Each tree's first node.
    public var roots: [Int]
    /// The log-odds before any tree (the prior).
    public var offset: Double

    /// A model; see `isValid`.
    public init(
        feature: [Int], threshold: [Double], left: [Int], right: [Int], score: [Double], roots: [Int] = [0],
        offset: Double = 0
    ) {
        self.feature = feature
        self.threshold = threshold
        self.left = left
        self.right = right
        self.score = score
        self.roots = roots
        self.offset = offset
    }

    /// Checks the model's shape: equal lengths, roots inside the arrays, children after their parent (no loops),
    /// known features, finite numbers.
    public var isValid: Bool {
        let n = feature.count
        guard n > 0, n <= 1024, threshold.count == n, left.count == n, right.count == n, score.count == n,
            !roots.isEmpty, roots.count <= 64, roots.allSatisfy({ $0 >= 0 && $0 < n }), offset.isFinite
        else {
            return false
        }
        for node in 0..<n where feature[node] >= 0 {
            guard feature[node] < ExerciseGateFeatures.count, threshold[node].isFinite,
                left[node] > node, left[node] < n, right[node] > node, right[node] < n
            else { return false }
        }
        return score.allSatisfy { $0.isFinite && abs($0) <= 100 }
    }

    /// A model of one leaf that lets everything through (probability 1). `judgement(of:)` still applies the hand rules
    /// to it (steady repetition and a jump rope's rhythm pass; motion too small for its pace, gait's signature, the arm
    /// swings and a slow stride's bounce are refused): a gate of those rules alone.
    public static let open = ExerciseGateModel(
        feature: [-1], threshold: [0], left: [0], right: [0], score: [0], roots: [0], offset: 50)

    /// How the detector judges a moment, in this order: steady repetition (`isSteadyRepetition`) passes (1); motion
    /// too small for its pace to be a rep (`isTooSmallForItsPace`), gait's signature (`isGait`), a smooth arm swing at
    /// a stride's period (`isArmSwing`), a jolted pendulum swing at one (`isStrideSwing`) and a slow stride whose steps
    /// bounce the wrist alike (`isStrideBounce`) are refused with confidence (0); a jump rope's rhythm
    /// (`isJumpRhythm`) passes (1); anything else gets `probability(of:)`. A slow, strong moment that also holds
    /// gait's signature passes.
    public func judgement(of features: ExerciseGateFeatures) -> Double {
        if features.isSteadyRepetition { return 1 }
        if features.isTooSmallForItsPace || features.isGait || features.isArmSwing || features.isStrideSwing
            || features.isStrideBounce
        {
            return 0
        }
        if features.isJumpRhythm { return 1 }
        return probability(of: features)
    }

    /// The probability of exercise for `features`.
    public func probability(of features: ExerciseGateFeatures) -> Double {
        var logOdds = offset
        for root in roots {
            var node = root
            while feature[node] >= 0 {
                node = features[feature[node]] <= threshold[node] ? left[node] : right[node]
            }
            logOdds += score[node]
        }
        return 1 / (1 + exp(-logOdds))
    }
}

/// Two lanes of the gate's sums (even and odd points of the window).
typealias GateLanes = SIMD2<Double>

/// Points n and n + 1 of the gate's window along gravity (`v`) and across it (`x`, `y`, `z`).
struct GatePoint {
    var v: GateLanes, x: GateLanes, y: GateLanes, z: GateLanes

    /// The dot product of the parts across gravity, lane by lane.
    @inline(__always) func dot(_ other: GatePoint) -> GateLanes {
        var sum: GateLanes = x * other.x
        sum += y * other.y
        sum += z * other.z
        return sum
    }

    /// The difference, lane by lane.
    @inline(__always) func minus(_ other: GatePoint) -> GatePoint {
        GatePoint(v: v - other.v, x: x - other.x, y: y - other.y, z: z - other.z)
    }
}

/// The gate's window in the grid's contiguous arrays: `count` points from each pointer on, read in pairs.
struct GatePoints {
    let v: UnsafePointer<Double>, x: UnsafePointer<Double>, y: UnsafePointer<Double>, z: UnsafePointer<Double>
    let count: Int

    /// Points n and n + 1; with `pair` false, point n alone with a second lane of 0 (the point after the newest is
    /// not read).
    @inline(__always) func load(_ n: Int, _ pair: Bool) -> GatePoint {
        @inline(__always) func lanes(_ base: UnsafePointer<Double>) -> GateLanes {
            pair ? GateLanes(base[n], base[n &+ 1]) : GateLanes(base[n], 0)
        }
        return GatePoint(v: lanes(v), x: lanes(x), y: lanes(y), z: lanes(z))
    }

    /// Calls `add` with each pair of the window (the last point alone when the window is odd) and the pair `back`
    /// points before it.
    @inline(__always) func pass(back: Int, _ add: (Int, GatePoint, GatePoint) -> Void) {
        var n = 0
        while n &+ 1 < count {
            add(n, load(n, true), load(n &- back, true))
            n &+= 2
        }
        if n < count { add(n, load(n, false), load(n &- back, false)) }
    }
}
