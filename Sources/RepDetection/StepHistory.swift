/// The last few seconds of motion, split along gravity and across it, so that a rhythm can be checked for walking.
///
/// Walking swings the arm once per stride and bounces the body once per step, twice per swing. When a rhythm's
/// period is the stride, the vertical motion repeats every half period. When it is the step (the bounce outweighs
/// a small swing), the vertical motion repeats every period while the arm's motion across it reverses, forward on
/// one step and back on the next. A rep moves up and down once per period, its vertical motion half a period later
/// the opposite (or unrelated), and repeats its motion in every direction from one period to the next.
struct StepHistory: Sendable {
    /// One point of the ring.
    struct Point: TimedPoint {
        var time = 0.0
        var principal = 0.0  // the motion along the principal axis (the detector's signal)
        var vertical = 0.0  // along gravity
        var across = (0.0, 0.0, 0.0)  // the rest, in sensor axes
    }

    private var ring: TimedRing<Point>
    private var work: [[Double]]  // resampled channels, allocated once
    private let periods: Int
    private static let pointsPerPeriod = 16

    /// A ring holding `seconds` of points at least `spacing` apart, able to compare `periods` periods without
    /// allocating.
    init(seconds: Double, spacing: Double, periods: Int) {
        ring = TimedRing(capacity: Int((seconds / spacing).rounded(.up)), filler: Point())
        work = Array(repeating: Array(repeating: 0, count: (periods + 2) * Self.pointsPerPeriod), count: 5)
        self.periods = periods
    }

    /// Adds the motion `(x, y, z)` (gravity removed), its projection `value` on the principal axis and `down`,
    /// gravity's unit direction. Points must come in time order, at least `spacing` apart.
    mutating func append(
        time: Double, value: Double, motion: (Double, Double, Double), down: (Double, Double, Double)
    ) {
        let v = down.0 * motion.0 + down.1 * motion.1 + down.2 * motion.2
        let point = Point(
            time: time, principal: value, vertical: v,
            across: (motion.0 - v * down.0, motion.1 - v * down.1, motion.2 - v * down.2))
        ring.append(point)
    }

    mutating func removeAll() {
        ring.removeAll()
    }

    /// How the last `periods` periods of motion before `endTime` compare with walking. Nil when the ring holds less
    /// than two periods' worth before `endTime`.
    mutating func measure(endingAt endTime: Double, period: Double) -> StepMeasure? {
        let perPeriod = Self.pointsPerPeriod
        let step = period / Double(perPeriod)
        guard ring.count >= 2, period > 0, let oldest = ring.oldestTime else { return nil }
        let available = Int(((endTime - oldest) / step).rounded(.down)) + 1
        let total = min(periods * perPeriod + perPeriod + 1, available)
        guard total >= 2 * perPeriod else { return nil }
        resample(from: endTime - step * Double(total - 1), step: step, points: total)
        let half = perPeriod / 2
        var principalSquares = 0.0
        var verticalHalf = Correlation(), verticalFull = Correlation(), across = Correlation()
        for k in perPeriod..<total {
            principalSquares += work[0][k] * work[0][k]
            verticalHalf.add(work[1][k], work[1][k - half])
            verticalFull.add(work[1][k], work[1][k - perPeriod])
            for axis in 2...4 { across.add(work[axis][k], work[axis][k - perPeriod]) }
        }
        return StepMeasure(
            halfPeriodSimilarity: verticalHalf.value, periodSimilarity: verticalFull.value,
            acrossPeriodSimilarity: across.value,
            verticalShare: principalSquares > 0 ? verticalHalf.xx / principalSquares : 0)
    }

    /// Fills the first `total` entries of each `work` channel with the points linearly interpolated at `from`,
    /// `from + step`, ….
    private mutating func resample(from: Double, step: Double, points total: Int) {
        let ring = ring
        ring.interpolate(from: from, step: step, total: total) { k, p0, p1, w in
            work[0][k] = p0.principal + (p1.principal - p0.principal) * w
            work[1][k] = p0.vertical + (p1.vertical - p0.vertical) * w
            work[2][k] = p0.across.0 + (p1.across.0 - p0.across.0) * w
            work[3][k] = p0.across.1 + (p1.across.1 - p0.across.1) * w
            work[4][k] = p0.across.2 + (p1.across.2 - p0.across.2) * w
        }
    }
}

/// How a stretch of motion compares with walking (see `StepHistory`). Correlations are normalized, −1 to 1.
struct StepMeasure: Equatable, Sendable {
    /// The vertical motion (along gravity) against itself half a period earlier.
    var halfPeriodSimilarity: Double
    /// The vertical motion against itself one period earlier.
    var periodSimilarity: Double
    /// The motion across gravity against itself one period earlier.
    var acrossPeriodSimilarity: Double
    /// Mean square of the vertical motion over that of the motion along the principal axis.
    var verticalShare: Double

    /// How much the motion looks like walking whose stride is the period: the steps repeat every half period.
    var strideLikeness: Double { halfPeriodSimilarity }
    /// How much it looks like walking whose step is the period: the steps repeat, the arm swings the other way.
    var stepLikeness: Double { min(periodSimilarity, -acrossPeriodSimilarity) }
}
