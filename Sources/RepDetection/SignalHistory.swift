/// A fixed-size ring of recent (time, signal) points, so that the start of a set can be searched for earlier reps
/// and checked for periodicity. Points closer than `spacing` seconds are thinned out, so the ring covers the same
/// time at any sample rate.
struct SignalHistory: Sendable {
    /// One point of the ring.
    struct Point: TimedPoint {
        var time = 0.0
        var value = 0.0
    }

    private var ring: TimedRing<Point>
    private var newestTime = -Double.infinity
    let spacing: Double
    private let periodicityPeriods: Int
    private var resampled: [Double]  // work space of `periodicity`, allocated once
    private static let pointsPerPeriod = 16

    /// How many points the history holds.
    var count: Int { ring.count }

    /// A ring of at least `capacity` points (rounded up to a power of two), able to judge the periodicity of up
    /// to `periodicityPeriods` periods without allocating.
    init(capacity: Int, spacing: Double, periodicityPeriods: Int) {
        self.periodicityPeriods = periodicityPeriods
        resampled = Array(repeating: 0, count: (periodicityPeriods + 2) * Self.pointsPerPeriod)
        ring = TimedRing(capacity: capacity, filler: Point())
        self.spacing = spacing
    }

    @inline(__always)
    mutating func append(time: Double, value: Double) {
        if time - newestTime < spacing { return }
        newestTime = time
        ring.append(Point(time: time, value: value))
    }

    mutating func removeAll() {
        ring.removeAll()
        newestTime = -Double.infinity
    }

    /// Calls `body` with the time and value of every point whose time is in `range`, oldest first.
    func forEach(in range: Range<Double>, _ body: (Double, Double) -> Void) {
        ring.forEach(in: range) { body($0.time, $0.value) }
    }

    /// How much the last `periodicityPeriods` periods of the signal before `endTime` resemble the signal one period
    /// earlier: the best normalized correlation (−1 to 1) over lags of 0.75 to 1.25 × `period`, on the signal resampled at
    /// 16 points per period. It uses as much of that span as the ring holds; with less than two periods to
    /// compare (the stream or a dropout began too recently) it cannot judge and returns nil.
    mutating func periodicity(endingAt endTime: Double, period: Double) -> Double? {
        let perPeriod = Self.pointsPerPeriod
        let step = period / Double(perPeriod)
        let shortestLag = perPeriod * 3 / 4
        let longestLag = perPeriod * 5 / 4
        guard ring.count >= 2, period > 0, let oldest = ring.oldestTime else { return nil }
        let available = Int(((endTime - oldest) / step).rounded(.down)) + 1
        let total = min(periodicityPeriods * perPeriod + longestLag + 1, available)
        guard total - longestLag >= 2 * perPeriod else { return nil }
        resample(from: endTime - step * Double(total - 1), step: step, count: total)
        return resampled.withUnsafeBufferPointer { points in
            var best = -1.0
            for lag in shortestLag...longestLag {
                var correlation = Correlation()
                for k in longestLag..<total { correlation.add(points[k], points[k - lag]) }
                if correlation.xx > 0, correlation.yy > 0 { best = max(best, correlation.value) }
            }
            return best
        }
    }

    /// Fills the first `total` points of `resampled` with the signal linearly interpolated at `from`,
    /// `from + step`, ….
    private mutating func resample(from: Double, step: Double, count total: Int) {
        resampled.withUnsafeMutableBufferPointer { out in
            ring.interpolate(from: from, step: step, total: total) { k, p0, p1, w in
                out[k] = p0.value + (p1.value - p0.value) * w
            }
        }
    }
}
