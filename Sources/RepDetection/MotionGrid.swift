/// The detector's recent motion, resampled on a regular 25 Hz grid: gravity-removed acceleration, its part along
/// gravity and its part across it. Points are addressed by an absolute index that keeps counting across resets, so
/// that index × `spacing` is sample time since the grid's origin.
struct MotionGrid {
    /// Seconds between grid points.
    static let spacing = 0.04
    /// How many points are kept (a power of two: 8192 points, 5 min 27 s).
    let capacity: Int
    private let mask: Int
    /// The index the next point gets.
    private(set) var next = 0
    /// The first index of the current unbroken run (a long gap or a reset starts a new one).
    private(set) var origin = 0
    /// Gravity-removed motion, g.
    private(set) var x: [Double], y: [Double], z: [Double]
    /// |motion|², g².
    private(set) var energy: [Double]
    /// Motion along gravity (down is positive), g.
    private(set) var vertical: [Double]
    /// Motion across gravity, g.
    private(set) var hx: [Double], hy: [Double], hz: [Double]
    /// The unit vector of gravity (the detector's slow estimate, `gravityTimeConstant`): the wrist's orientation,
    /// which a rep brings back to where it was a rep earlier (`RepDetector`'s set-end check, "Reps that turn the wrist
    /// for good" in docs/DETECTOR.md). Single precision: only angles of several degrees are read from it.
    private(set) var downX: [Float], downY: [Float], downZ: [Float]
    /// How many of the first slots of `vertical`, `hx`, `hy` and `hz` are stored again after the last (at slot +
    /// capacity): any `tail` points from any slot on are contiguous from that slot (`ExerciseGateFeatures.measure`
    /// reads up to three of the longest periods, 900 points, in order).
    static let tail = 1024

    init(capacityPowerOfTwo: Int = 13) {
        capacity = 1 << capacityPowerOfTwo
        mask = capacity - 1
        // x, y, z and energy are stored twice (slot and slot + capacity), so that the `capacity` points up to any
        // index are contiguous from `mirrored(index) - capacity + 1` to `mirrored(index)`: the template match then
        // reads memory in order, without wrapping (the period tracker keeps its own newest-first copy).
        x = Array(repeating: 0, count: 2 * capacity)
        y = x
        z = x
        energy = x
        vertical = Array(repeating: 0, count: capacity + min(Self.tail, capacity))
        hx = vertical
        hy = vertical
        hz = vertical
        downX = Array(repeating: 0, count: capacity)
        downY = downX
        downZ = downX
    }

    /// The slot of absolute index `index`.
    @inline(__always) func slot(_ index: Int) -> Int { index & mask }

    /// Where `index` sits in the upper copy of x, y, z and energy: `mirrored(index) - n` is `index - n` for n below
    /// the capacity.
    @inline(__always) func mirrored(_ index: Int) -> Int { (index & mask) + capacity }

    /// The oldest index still held in the current run.
    var oldest: Int { max(origin, next - capacity) }

    /// Appends a point: the motion and the unit vector of gravity.
    @inline(__always)
    mutating func append(motion: (Double, Double, Double), down: (Double, Double, Double)) {
        let s = next & mask
        let e = motion.0 * motion.0 + motion.1 * motion.1 + motion.2 * motion.2
        x[s] = motion.0
        y[s] = motion.1
        z[s] = motion.2
        energy[s] = e
        x[s + capacity] = motion.0
        y[s + capacity] = motion.1
        z[s + capacity] = motion.2
        energy[s + capacity] = e
        let v = motion.0 * down.0 + motion.1 * down.1 + motion.2 * down.2
        let h = (motion.0 - v * down.0, motion.1 - v * down.1, motion.2 - v * down.2)
        downX[s] = Float(down.0)
        downY[s] = Float(down.1)
        downZ[s] = Float(down.2)
        vertical[s] = v
        hx[s] = h.0
        hy[s] = h.1
        hz[s] = h.2
        if s < Self.tail {
            vertical[s + capacity] = v
            hx[s + capacity] = h.0
            hy[s + capacity] = h.1
            hz[s + capacity] = h.2
        }
        next += 1
    }

    /// The cosine of the angle between the gravity directions at grid points `a` and `b` (both still held).
    func downCosine(_ a: Int, _ b: Int) -> Double {
        let i = slot(a), j = slot(b)
        return Double(downX[i] * downX[j] + downY[i] * downY[j] + downZ[i] * downZ[j])
    }

    /// Starts a new run at `index` (≥ `next`): the points before it no longer count as history.
    mutating func restart(at index: Int) {
        next = max(index, next)
        origin = next
    }
}
