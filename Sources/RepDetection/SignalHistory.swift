/// A fixed-size ring of recent (time, signal) points, so that the start of a set can be searched for earlier reps.
/// Points closer than `spacing` seconds are thinned out, so the ring covers the same time at any sample rate.
struct SignalHistory: Sendable {
    private var times: [Double]
    private var values: [Double]
    private var start = 0
    private(set) var count = 0
    let spacing: Double

    init(capacity: Int, spacing: Double) {
        times = Array(repeating: 0, count: capacity)
        values = Array(repeating: 0, count: capacity)
        self.spacing = spacing
    }

    mutating func append(time: Double, value: Double) {
        if count > 0, time - times[(start + count - 1) % times.count] < spacing { return }
        if count == times.count {
            start = (start + 1) % times.count
            count -= 1
        }
        let index = (start + count) % times.count
        times[index] = time
        values[index] = value
        count += 1
    }

    mutating func removeAll() {
        start = 0
        count = 0
    }

    /// Calls `body` with every point whose time is in `range`, oldest first.
    func forEach(in range: Range<Double>, _ body: (Double, Double) -> Void) {
        for offset in 0..<count {
            let index = (start + offset) % times.count
            if range.contains(times[index]) { body(times[index], values[index]) }
        }
    }
}
