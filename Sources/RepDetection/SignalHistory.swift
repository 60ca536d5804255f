/// A fixed-size ring of recent (time, signal) points, so that the start of a set can be searched for earlier reps
/// and checked for periodicity. Points closer than `spacing` seconds are thinned out, so the ring covers the same
/// time at any sample rate.
struct SignalHistory: Sendable {
    /// One point of the ring.
    private struct Point: Sendable {
        var time = 0.0
        var value = 0.0
    }

    private var points: [Point]  // one array, so that appending checks uniqueness once
    private let mask: Int
    private var end = 0  // index one past the newest point (wraps through `mask`)
    private(set) var count = 0
    private var newestTime = -Double.infinity
    let spacing: Double
    private let periodicityPeriods: Int
    private var resampled: [Double]  // work space of `periodicity`, allocated once
    private static let pointsPerPeriod = 16

    /// A ring of at least `capacity` points (rounded up to a power of two), able to judge the periodicity of up
    /// to `periodicityPeriods` periods without allocating.
    init(capacity: Int, spacing: Double, periodicityPeriods: Int) {
        self.periodicityPeriods = periodicityPeriods
        resampled = Array(repeating: 0, count: (periodicityPeriods + 2) * Self.pointsPerPeriod)
        var size = 1
        while size < capacity { size <<= 1 }
        points = Array(repeating: Point(), count: size)
        mask = size - 1
        self.spacing = spacing
    }

    @inline(__always)
    mutating func append(time: Double, value: Double) {
        if time - newestTime < spacing { return }
        newestTime = time
        let index = end
        points.withUnsafeMutableBufferPointer { $0[index] = Point(time: time, value: value) }
        end = (end + 1) & mask
        if count <= mask { count += 1 }
    }

    mutating func removeAll() {
        count = 0
        newestTime = -Double.infinity
    }

    /// Calls `body` with every point whose time is in `range`, oldest first.
    func forEach(in range: Range<Double>, _ body: (Double, Double) -> Void) {
        let start = (end - count) & mask
        var offset = pointsBefore(range.lowerBound)
        while offset < count {
            let point = points[(start + offset) & mask]
            guard point.time < range.upperBound else { break }
            body(point.time, point.value)
            offset += 1
        }
    }

    /// How many points are older than `time` (a binary search: the ring is in time order).
    private func pointsBefore(_ time: Double) -> Int {
        let start = (end - count) & mask
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if points[(start + middle) & mask].time < time { low = middle + 1 } else { high = middle }
        }
        return low
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
        guard count >= 2, period > 0 else { return nil }
        let oldest = points[(end - count) & mask].time
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

    /// Fills the first `count` points of `resampled` with the signal linearly interpolated at `from`,
    /// `from + step`, …; the span must lie within the ring.
    private mutating func resample(from: Double, step: Double, count total: Int) {
        let start = (end - count) & mask
        // The point just before `from` (or the oldest): the ring holds up to a few thousand points before it.
        var offset = max(pointsBefore(from) - 1, 0)
        for k in 0..<total {
            let time = from + step * Double(k)
            while offset + 1 < count, points[(start + offset + 1) & mask].time < time { offset += 1 }
            let p0 = points[(start + offset) & mask]
            let p1 = points[(start + min(offset + 1, count - 1)) & mask]
            let w = p1.time > p0.time ? min(max((time - p0.time) / (p1.time - p0.time), 0), 1) : 0
            resampled[k] = p0.value + (p1.value - p0.value) * w
        }
    }
}
