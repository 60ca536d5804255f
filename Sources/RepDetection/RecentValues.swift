/// The last five values of something (rep periods, rep amplitudes), without allocating.
struct RecentValues: Sendable {
    private var values: (Double, Double, Double, Double, Double) = (0, 0, 0, 0, 0)
    private(set) var count = 0
    private var next = 0

    init() {}

    init(_ initial: some Sequence<Double>) {
        for value in initial { append(value) }
    }

    mutating func append(_ value: Double) {
        withUnsafeMutableBytes(of: &values) { $0.storeBytes(of: value, toByteOffset: next * 8, as: Double.self) }
        next = (next + 1) % 5
        count = min(count + 1, 5)
    }

    mutating func removeAll() {
        count = 0
        next = 0
    }

    /// The upper median (for an even count, the larger of the two middle values).
    var median: Double {
        precondition(count > 0, "median of no values")
        var copy = values  // the stored values are always slots 0..<count
        let n = count
        return withUnsafeMutableBytes(of: &copy) { raw in
            let slots = raw.bindMemory(to: Double.self)
            for i in 1..<n {
                let value = slots[i]
                var j = i - 1
                while j >= 0, slots[j] > value {
                    slots[j + 1] = slots[j]
                    j -= 1
                }
                slots[j + 1] = value
            }
            return slots[n / 2]
        }
    }
}
