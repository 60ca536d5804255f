/// One rep's motion as the set repeats it: a period of 3-D motion, mean removed, that each new stretch of motion is
/// matched against (normalized correlation, −1…1). A rep is where the match peaks.
struct CycleTemplate {
    private(set) var length = 0
    private(set) var x: [Double] = []
    private(set) var y: [Double] = []
    private(set) var z: [Double] = []
    private var scratch: [Double] = []
    private(set) var sum = (0.0, 0.0, 0.0)
    private(set) var squares = 0.0
    private var firstHalfSquares = 0.0
    private var secondHalfSquares = 0.0
    /// A window matches only when each of its halves carries at least this share of the template's energy in that
    /// half: a window only partly filled with motion (a set's first or last partial cycle) is not a rep.
    static let halfEnergyShare = 0.25

    init(reserving capacity: Int) {
        x.reserveCapacity(capacity)
        y.reserveCapacity(capacity)
        z.reserveCapacity(capacity)
        scratch.reserveCapacity(capacity)
    }

    /// The template becomes the `length` points of motion ending at `end`, mean removed.
    mutating func set(from grid: MotionGrid, endingAt end: Int, length: Int) {
        self.length = length
        x.removeAll(keepingCapacity: true)
        y.removeAll(keepingCapacity: true)
        z.removeAll(keepingCapacity: true)
        let mean = Self.mean(grid, endingAt: end, length: length)
        for j in (end - length + 1)...end {
            let s = grid.slot(j)
            x.append(grid.x[s] - mean.0)
            y.append(grid.y[s] - mean.1)
            z.append(grid.z[s] - mean.2)
        }
        updateSums()
    }

    /// The template becomes the mean of the (mean-removed) periods of motion ending at each of `ends`.
    mutating func average(from grid: MotionGrid, endingAt ends: [Int], length: Int) {
        self.length = length
        x = Array(repeating: 0, count: length)
        y = x
        z = x
        var used = 0
        for end in ends where end - length + 1 >= grid.oldest && end < grid.next {
            let mean = Self.mean(grid, endingAt: end, length: length)
            for n in 0..<length {
                let s = grid.slot(end - length + 1 + n)
                x[n] += grid.x[s] - mean.0
                y[n] += grid.y[s] - mean.1
                z[n] += grid.z[s] - mean.2
            }
            used += 1
        }
        if used > 1 {
            let inverse = 1 / Double(used)
            for n in 0..<length {
                x[n] *= inverse
                y[n] *= inverse
                z[n] *= inverse
            }
        }
        updateSums()
    }

    /// Moves the template a fraction `weight` toward the period of motion ending at `end`.
    mutating func blend(from grid: MotionGrid, endingAt end: Int, weight: Double) {
        let mean = Self.mean(grid, endingAt: end, length: length)
        for n in 0..<length {
            let s = grid.slot(end - length + 1 + n)
            x[n] += weight * (grid.x[s] - mean.0 - x[n])
            y[n] += weight * (grid.y[s] - mean.1 - y[n])
            z[n] += weight * (grid.z[s] - mean.2 - z[n])
        }
        updateSums()
    }

    /// Stretches or shrinks the template to `newLength` points (linear interpolation).
    mutating func resample(to newLength: Int) {
        guard newLength != length, length > 1, newLength > 1 else { return }
        func stretch(_ values: inout [Double], _ scratch: inout [Double]) {
            scratch.removeAll(keepingCapacity: true)
            let step = Double(length - 1) / Double(newLength - 1)
            for n in 0..<newLength {
                let position = Double(n) * step
                let lower = min(Int(position), length - 2)
                let fraction = position - Double(lower)
                scratch.append(values[lower] + fraction * (values[lower + 1] - values[lower]))
            }
            swap(&values, &scratch)
        }
        stretch(&x, &scratch)
        stretch(&y, &scratch)
        stretch(&z, &scratch)
        length = newLength
        updateSums()
    }

    /// The normalized correlation of the `length` points of motion ending at `end` with the template.
    func match(_ grid: MotionGrid, endingAt end: Int) -> Double {
        guard length > 1, end - length + 1 >= grid.oldest else { return 0 }
        let half = length / 2
        // Contiguous reads from the grid's mirrored copy, one loop per half (so that both vectorize).
        let base = grid.mirrored(end) - length + 1
        typealias Sums = (Double, Double, Double, Double, Double)
        let ((hx, hy, hz, hq, hdot), (rx, ry, rz, rq, rdot)) = grid.x.withUnsafeBufferPointer { gx in
            grid.y.withUnsafeBufferPointer { gy in
                grid.z.withUnsafeBufferPointer { gz in
                    grid.energy.withUnsafeBufferPointer { ge in
                        x.withUnsafeBufferPointer { tx in
                            y.withUnsafeBufferPointer { ty in
                                z.withUnsafeBufferPointer { tz -> (Sums, Sums) in
                                    let gx = gx.baseAddress! + base, gy = gy.baseAddress! + base
                                    let gz = gz.baseAddress! + base, ge = ge.baseAddress! + base
                                    let tx = tx.baseAddress!, ty = ty.baseAddress!, tz = tz.baseAddress!
                                    // Two lanes (even and odd points), added at the end: the loop vectorizes.
                                    func sums(_ range: Range<Int>) -> Sums {
                                        var sx = SIMD2<Double>(), sy = sx, sz = sx, sq = sx, dot = sx
                                        var n = range.lowerBound
                                        let pairs = range.lowerBound &+ (range.count & ~1)
                                        while n < pairs {
                                            let a = SIMD2(gx[n], gx[n &+ 1]), b = SIMD2(gy[n], gy[n &+ 1])
                                            let c = SIMD2(gz[n], gz[n &+ 1])
                                            sx += a
                                            sy += b
                                            sz += c
                                            sq += SIMD2(ge[n], ge[n &+ 1])
                                            dot +=
                                                a * SIMD2(tx[n], tx[n &+ 1]) + b * SIMD2(ty[n], ty[n &+ 1])
                                                + c * SIMD2(tz[n], tz[n &+ 1])
                                            n &+= 2
                                        }
                                        var total = (sx.sum(), sy.sum(), sz.sum(), sq.sum(), dot.sum())
                                        if n < range.upperBound {
                                            let a = gx[n], b = gy[n], c = gz[n]
                                            total.0 += a
                                            total.1 += b
                                            total.2 += c
                                            total.3 += ge[n]
                                            total.4 += a * tx[n] + b * ty[n] + c * tz[n]
                                        }
                                        return total
                                    }
                                    return (sums(0..<half), sums(half..<length))
                                }
                            }
                        }
                    }
                }
            }
        }
        let sx = hx + rx, sy = hy + ry, sz = hz + rz, sq = hq + rq, dot = hdot + rdot
        let count = Double(length)
        // Each half's energy about the whole window's mean m: Σ|w|² − 2 m·Σw + n|m|².
        let m = (sx / count, sy / count, sz / count)
        func halfEnergy(_ q: Double, _ a: Double, _ b: Double, _ c: Double, _ n: Double) -> Double {
            q - 2 * (m.0 * a + m.1 * b + m.2 * c) + n * (m.0 * m.0 + m.1 * m.1 + m.2 * m.2)
        }
        let firstHalf = halfEnergy(hq, hx, hy, hz, Double(half))
        let secondHalf = halfEnergy(sq - hq, sx - hx, sy - hy, sz - hz, count - Double(half))
        guard firstHalf >= Self.halfEnergyShare * firstHalfSquares,
            secondHalf >= Self.halfEnergyShare * secondHalfSquares
        else { return 0 }
        let centeredEnergy = sq - (sx * sx + sy * sy + sz * sz) / count
        let centeredDot = dot - (sx * sum.0 + sy * sum.1 + sz * sum.2) / count
        // The shape only (normalized correlation): a tiring lifter's reps get smaller, not different. A window only
        // partly filled with motion (a set's edge) is refused by the halves' energies above.
        let denominator = (max(centeredEnergy, 0) * squares).squareRoot()
        return denominator > 0 ? centeredDot / denominator : 0
    }

    /// The point of the period of motion ending at `end` where it moves least (its energy smoothed over an eighth
    /// of the period, circularly), as an offset from the period's first point: a rep's rest position.
    static func quietestOffset(_ grid: MotionGrid, endingAt end: Int, length: Int) -> Int {
        let mean = Self.mean(grid, endingAt: end, length: length)
        let first = end - length + 1
        func energy(_ n: Int) -> Double {
            let s = grid.slot(first + ((n % length) + length) % length)
            let a = grid.x[s] - mean.0, b = grid.y[s] - mean.1, c = grid.z[s] - mean.2
            return a * a + b * b + c * c
        }
        let half = max(1, length / 16)
        var window = 0.0
        for n in -half...half { window += energy(n) }
        var best = 0
        var lowest = window
        for n in 1..<length {
            window += energy(n + half) - energy(n - half - 1)
            if window < lowest {
                lowest = window
                best = n
            }
        }
        return best
    }

    /// How well the `count` points after `last` match the template's first `count` points (McLeod's normalized
    /// difference, means removed): a cycle cut short by the end of the stream.
    func prefixMatch(_ grid: MotionGrid, after last: Int, count: Int) -> (match: Double, energy: Double) {
        guard count > 1, count <= length, last + count < grid.next, last + 1 >= grid.oldest else { return (0, 0) }
        return partialMatch(grid, from: last + 1, templateFrom: 0, count: count)
    }

    /// How well the `count` points ending at `end` match the template's last `count` points: a cycle cut short by
    /// the start of the stream.
    func suffixMatch(_ grid: MotionGrid, endingAt end: Int, count: Int) -> (match: Double, energy: Double) {
        guard count > 1, count <= length, end < grid.next, end - count + 1 >= grid.oldest else { return (0, 0) }
        return partialMatch(grid, from: end - count + 1, templateFrom: length - count, count: count)
    }

    /// The best match of a rep cut short by the stream's start (`atStart`) or end, wherever in the piece it lies: for
    /// every window that ends at `lo...hi` (at the start) or begins there (at the end) and is cut by the stream, the
    /// template's last (first) points that the stream still holds are matched against it, when those of them that lie
    /// in the piece (up to `boundary` at the start, from it at the end: a window may reach past it into the counted
    /// cycle next to the piece, but not borrow that cycle's motion) carry at least `coverage` of the template's energy.
    /// A rep's rest before or after its movement may be cut, or last longer or shorter than the template's (a heavy
    /// set's first rep came after a shorter rest than its later ones), and the rep is still whole; a piece aligned
    /// where the template's period begins would not match it. Returns the best match (−1…1; −1 when no window
    /// qualifies) and the ratio of the motion's energy to the template's there.
    func cutRepMatch(
        _ grid: MotionGrid, atStart: Bool, from lo: Int, to hi: Int, boundary: Int, coverage: Double
    ) -> (match: Double, energy: Double) {
        var best = (match: -1.0, energy: 0.0)
        guard length > 2, squares > 0, lo <= hi else { return best }
        for edge in lo...hi where edge >= grid.oldest && edge < grid.next {
            // Points of the window that the stream holds: it is cut, so fewer than a period.
            let count = atStart ? min(edge - grid.oldest + 1, length) : min(grid.next - edge, length)
            guard count > 2, count < length else { continue }
            let offset = atStart ? length - count : 0
            let first = atStart ? edge - count + 1 : edge
            // The template's points that fall in the piece.
            let inPiece =
                atStart
                ? offset..<(offset + max(0, min(count, boundary - first + 1)))
                : (offset + min(count, max(0, boundary - first)))..<(offset + count)
            var covered = 0.0
            for n in inPiece { covered += x[n] * x[n] + y[n] * y[n] + z[n] * z[n] }
            guard covered >= coverage * squares else { continue }
            let measured = partialMatch(grid, from: first, templateFrom: offset, count: count)
            if measured.match > best.match { best = measured }
        }
        return best
    }

    /// The match and the ratio of the motion's energy to the template's over the same part.
    private func partialMatch(_ grid: MotionGrid, from first: Int, templateFrom offset: Int, count: Int)
        -> (match: Double, energy: Double)
    {
        var wx = 0.0, wy = 0.0, wz = 0.0, tx = 0.0, ty = 0.0, tz = 0.0
        for n in 0..<count {
            let s = grid.slot(first + n)
            wx += grid.x[s]
            wy += grid.y[s]
            wz += grid.z[s]
            tx += x[offset + n]
            ty += y[offset + n]
            tz += z[offset + n]
        }
        let inverse = 1 / Double(count)
        let wm = (wx * inverse, wy * inverse, wz * inverse), tm = (tx * inverse, ty * inverse, tz * inverse)
        var dot = 0.0, ww = 0.0, tt = 0.0
        for n in 0..<count {
            let s = grid.slot(first + n)
            let a = (grid.x[s] - wm.0, grid.y[s] - wm.1, grid.z[s] - wm.2)
            let b = (x[offset + n] - tm.0, y[offset + n] - tm.1, z[offset + n] - tm.2)
            dot += a.0 * b.0 + a.1 * b.1 + a.2 * b.2
            ww += a.0 * a.0 + a.1 * a.1 + a.2 * a.2
            tt += b.0 * b.0 + b.1 * b.1 + b.2 * b.2
        }
        return (ww + tt > 0 ? 2 * dot / (ww + tt) : 0, tt > 0 ? ww / tt : 0)
    }

    /// Peak-to-peak size of the template's motion, g (2√2 × its RMS: a sine's peak-to-peak).
    var amplitude: Double {
        length > 0 ? 2 * (2 * squares / Double(length)).squareRoot() : 0
    }

    /// The mean of the `length` points of motion ending at `end`.
    static func mean(_ grid: MotionGrid, endingAt end: Int, length: Int) -> (Double, Double, Double) {
        var sx = 0.0, sy = 0.0, sz = 0.0
        for j in (end - length + 1)...end {
            let s = grid.slot(j)
            sx += grid.x[s]
            sy += grid.y[s]
            sz += grid.z[s]
        }
        let inverse = 1 / Double(length)
        return (sx * inverse, sy * inverse, sz * inverse)
    }

    private mutating func updateSums() {
        var sx = 0.0, sy = 0.0, sz = 0.0, sq = 0.0
        for n in 0..<length {
            sx += x[n]
            sy += y[n]
            sz += z[n]
            sq += x[n] * x[n] + y[n] * y[n] + z[n] * z[n]
        }
        sum = (sx, sy, sz)
        squares = sq
        var firstHalf = 0.0
        for n in 0..<(length / 2) { firstHalf += x[n] * x[n] + y[n] * y[n] + z[n] * z[n] }
        firstHalfSquares = firstHalf
        secondHalfSquares = sq - firstHalf
    }

    /// How much the template's second half repeats its first, at the best shift within a tenth of a period of half a
    /// period (circular normalized correlation, −1…1): `shape`, of the 3-D motion; `energy`, of its energy per point
    /// (mean removed), which repeats when both halves are as busy. A pair of like reps (a left and a right lunge)
    /// repeats in both; one rep that goes and comes back reverses its shape, and one that moves and then rests does
    /// not repeat its energy.
    mutating func halfRepetition() -> (shape: Double, energy: Double) {
        guard length >= 8 else { return (0, 0) }
        scratch.removeAll(keepingCapacity: true)
        var squares = 0.0, mean = 0.0
        for n in 0..<length {
            let e = x[n] * x[n] + y[n] * y[n] + z[n] * z[n]
            scratch.append(e)
            squares += e
            mean += e
        }
        mean /= Double(length)
        var variance = 0.0
        for n in 0..<length {
            scratch[n] -= mean
            variance += scratch[n] * scratch[n]
        }
        guard squares > 0, variance > 0 else { return (0, 0) }
        var shape = -1.0, energy = -1.0
        let spread = max(1, length / 10)
        for shift in (length / 2 - spread)...(length / 2 + spread) {
            var dot = 0.0, energyDot = 0.0
            for n in 0..<length {
                let m = n + shift < length ? n + shift : n + shift - length
                dot += x[n] * x[m] + y[n] * y[m] + z[n] * z[m]
                energyDot += scratch[n] * scratch[m]
            }
            shape = max(shape, dot / squares)
            energy = max(energy, energyDot / variance)
        }
        return (shape, energy)
    }
}
