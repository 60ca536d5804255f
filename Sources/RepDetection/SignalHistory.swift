/// A fixed-size ring of recent (time, signal) points, so that the start of a set can be searched for earlier reps.
/// Points closer than `spacing` seconds are thinned out, so the ring covers the same time at any sample rate.
struct SignalHistory: Sendable {
    private var times: [Double]
    private var values: [Double]
    private let mask: Int
    private var end = 0  // index one past the newest point (wraps through `mask`)
    private(set) var count = 0
    private var newestTime = -Double.infinity
    let spacing: Double

    /// A ring of at least `capacity` points (rounded up to a power of two).
    init(capacity: Int, spacing: Double) {
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
}
