/// A point with a time, as kept by `TimedRing`.
protocol TimedPoint: Sendable {
    var time: Double { get }
}

/// A fixed-size ring of points in time order, with the searches the detector's histories share: the points in a
/// time range, and linear interpolation at regular times. Both find where to begin by binary search, so their
/// cost does not grow with how much the ring holds before that. Appending never allocates.
struct TimedRing<Point: TimedPoint>: Sendable {
    private var points: [Point]
    private let mask: Int
    private var end = 0  // index one past the newest point (wraps through `mask`)
    /// How many points the ring holds.
    private(set) var count = 0

    /// A ring of at least `capacity` points (rounded up to a power of two), all initially `filler` (never read).
    init(capacity: Int, filler: Point) {
        var size = 1
        while size < capacity { size <<= 1 }
        points = Array(repeating: filler, count: size)
        mask = size - 1
    }

    /// The oldest point's time, or nil when the ring is empty.
    var oldestTime: Double? { count > 0 ? self[0].time : nil }

    /// The `offset`-th point from the oldest.
    private subscript(offset: Int) -> Point { points[(end - count + offset) & mask] }

    /// Adds a point no older than the newest one, replacing the oldest when the ring is full.
    @inline(__always)
    mutating func append(_ point: Point) {
        let index = end
        points.withUnsafeMutableBufferPointer { $0[index] = point }
        end = (end + 1) & mask
        if count <= mask { count += 1 }
    }

    mutating func removeAll() {
        count = 0
    }

    /// How many points are older than `time`.
    private func pointsBefore(_ time: Double) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle].time < time { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Calls `body` with every point whose time is in `range`, oldest first.
    func forEach(in range: Range<Double>, _ body: (Point) -> Void) {
        var offset = pointsBefore(range.lowerBound)
        while offset < count {
            let point = self[offset]
            guard point.time < range.upperBound else { break }
            body(point)
            offset += 1
        }
    }

    /// Calls `body(k, before, after, weight)` for the times `from + k × step`, k = 0..<`total`: the points on either
    /// side of that time and the weight (0–1) of `after` in a linear interpolation between them. Times outside the
    /// ring are clamped to its oldest or newest point. The ring must not be empty.
    func interpolate(from: Double, step: Double, total: Int, _ body: (Int, Point, Point, Double) -> Void) {
        var offset = max(pointsBefore(from) - 1, 0)  // the point just before `from`, or the oldest
        for k in 0..<total {
            let time = from + step * Double(k)
            while offset + 1 < count, self[offset + 1].time < time { offset += 1 }
            let p0 = self[offset]
            let p1 = self[min(offset + 1, count - 1)]
            let w = p1.time > p0.time ? min(max((time - p0.time) / (p1.time - p0.time), 0), 1) : 0
            body(k, p0, p1, w)
        }
    }
}
