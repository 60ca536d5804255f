/// A fixed-size ring of recent (time, signal) points, so that the start of a set can be searched for earlier reps
/// and checked for periodicity. Points closer than `spacing` seconds are thinned out, so the ring covers the same
/// time at any sample rate.
struct SignalHistory: Sendable {
    private var times: [Double]
    private var values: [Double]
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
        times = Array(repeating: 0, count: size)
        values = Array(repeating: 0, count: size)
        mask = size - 1
        self.spacing = spacing
    }

    @inline(__always)
    mutating func append(time: Double, value: Double) {
        if time - newestTime < spacing { return }
        newestTime = time
        times.withUnsafeMutableBufferPointer { $0[end] = time }
        values.withUnsafeMutableBufferPointer { $0[end] = value }
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
        for offset in 0..<count {
            let index = (start + offset) & mask
            if range.contains(times[index]) { body(times[index], values[index]) }
        }
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
        let oldest = times[(end - count) & mask]
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
    private mutating func resample(from: Double, step: Double, count points: Int) {
        let start = (end - count) & mask
        var offset = 0
        for k in 0..<points {
            let time = from + step * Double(k)
            while offset + 1 < count, times[(start + offset + 1) & mask] < time { offset += 1 }
            let i0 = (start + offset) & mask
            let i1 = (start + min(offset + 1, count - 1)) & mask
            let t0 = times[i0], t1 = times[i1]
            let w = t1 > t0 ? min(max((time - t0) / (t1 - t0), 0), 1) : 0
            resampled[k] = values[i0] + (values[i1] - values[i0]) * w
        }
    }
}
