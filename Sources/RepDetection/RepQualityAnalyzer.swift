import MotionCore

/// How the vertical acceleration is taken from the accelerometer (which has no gyro to follow the sensor's tilt).
public enum VerticalAcceleration: String, Sendable, Equatable, CaseIterable {
    /// The length of the measured acceleration minus gravity's: exact for a load that moves vertically, whatever
    /// the sensor's tilt; the load's horizontal acceleration a_h adds a_h²/2g (the default).
    case magnitude
    /// The projection on gravity's direction as measured at rest, minus gravity: exact without tilt; a tilt of θ
    /// makes the load look (g + a)(1 − cos θ) lighter (0.15 m/s² at 10°).
    case projection
}

/// Measures reps from the raw samples (at the sensor's rate, not the detector's 25 Hz grid): keeps the last
/// `keepSeconds` of samples in a ring, tracks gravity while the sensor is still, and, given a rep's approximate window
/// from the detector, finds the rests at its ends and integrates the vertical acceleration between them with the
/// velocity and the position forced back to zero at the end (an acceleration error a₀ + a₁t is removed).
///
/// `record` costs a few stores and additions per sample and allocates only while the ring grows to its size (a few
/// times in the first minute); `measure` (once per rep) allocates a few small arrays of candidates, and its scratch
/// arrays grow only when a rep is longer than any before.
struct RepQualityAnalyzer {
    /// The ring starts with 2¹² samples (128 KiB) and doubles while it holds less than `keepSeconds` of them, up to
    /// 2¹⁶ (2 MiB): 2¹³ at 100 Hz (82 s, 256 KiB), 2¹⁶ at 1.6 kHz (41 s). A set longer than that has its first reps
    /// measured live only (`set_end` measures again only reps still held). The ring was 2¹⁶ at every rate before:
    /// 2 MiB of written memory where 256 KiB do.
    static let initialCapacity = 1 << 12
    /// The most samples kept (see `initialCapacity`).
    static let maximumCapacity = 1 << 16
    /// How much time the ring grows to hold, at most `maximumCapacity` samples.
    static let keepSeconds = 60.0
    /// A rep whose velocity and position need an acceleration correction larger than this (RMS over the rep,
    /// m/s²) to end at rest where it began gets no figures (sensor errors, tilt and the bar's horizontal motion
    /// typically need a few hundredths in the generated sets, docs/QUALITY.md).
    static let largestCorrection = 0.3
    /// Gravity is measured over still blocks this long …
    static let blockSeconds = 0.25
    /// … whose acceleration varies by less than this (RMS of the vector, g).
    static let stillRMS = 0.03

    let placement: SensorPlacement
    let method: VerticalAcceleration
    /// Below this sample rate no velocity is claimed.
    let minimumVelocityRate: Double
    private var mask = initialCapacity - 1
    private var ring: [MotionSample]  // one store per sample
    /// Samples recorded so far (the ring holds those from `oldest` on).
    private(set) var count = 0
    /// The first sample the ring still holds when it grew after wrapping (the slots it gained hold nothing yet).
    private var firstHeld = 0

    // Gravity, from still blocks.
    private var blockStart = 0.0
    private var blockCount = 0
    private var blockSum = (0.0, 0.0, 0.0)
    private var blockSquares = 0.0
    private(set) var gravity: (Double, Double, Double)?
    private var previousBlock: (Double, Double, Double)?  // the last quiet block's mean

    // Scratch for a rep's samples.
    private var tScratch: [Double] = []
    private var aScratch: [Double] = []
    private var vScratch: [Double] = []
    private var pScratch: [Double] = []
    private var rScratch: [Double] = []
    private var energyScratch: [Double] = []
    private var uScratch: [Double] = []  // uncorrected velocity and position from a window's start
    private var qScratch: [Double] = []

    init(placement: SensorPlacement, method: VerticalAcceleration, minimumVelocityRate: Double) {
        self.placement = placement
        self.method = method
        self.minimumVelocityRate = minimumVelocityRate
        ring = Array(repeating: MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: Self.initialCapacity)
        tScratch.reserveCapacity(4096)
        aScratch.reserveCapacity(4096)
        vScratch.reserveCapacity(4096)
        pScratch.reserveCapacity(4096)
        rScratch.reserveCapacity(4096)
        energyScratch.reserveCapacity(4096)
        uScratch.reserveCapacity(4096)
        qScratch.reserveCapacity(4096)
    }

    /// Keeps one sample (time advancing) and updates gravity at the end of each still block.
    @inline(__always)
    mutating func record(_ s: MotionSample) {
        // Full, and the sample about to be overwritten is less than keepSeconds old: grow first.
        if count >= ring.count, ring.count < Self.maximumCapacity,
            s.timestamp - ring[count & mask].timestamp < Self.keepSeconds
        {
            grow()
        }
        let slot = count & mask
        ring[slot] = s
        count += 1
        if blockCount == 0 { blockStart = s.timestamp }
        blockCount += 1
        blockSum.0 += s.ax
        blockSum.1 += s.ay
        blockSum.2 += s.az
        blockSquares += s.ax * s.ax + s.ay * s.ay + s.az * s.az
        if s.timestamp - blockStart >= Self.blockSeconds { endBlock() }
    }

    private mutating func endBlock() {
        let n = Double(blockCount)
        let m = (blockSum.0 / n, blockSum.1 / n, blockSum.2 / n)
        let norm2 = m.0 * m.0 + m.1 * m.1 + m.2 * m.2
        let variance = blockSquares / n - norm2
        let quiet = blockCount >= 3 && variance < Self.stillRMS * Self.stillRMS && norm2 > 0.64 && norm2 < 1.44
        // Still: two quiet blocks in a row whose means agree within 0.01 g (a slow, smooth motion can be quiet
        // within a block, but its mean moves).
        let before = previousBlock
        previousBlock = quiet ? m : nil
        if quiet, let p = before,
            (m.0 - p.0) * (m.0 - p.0) + (m.1 - p.1) * (m.1 - p.1) + (m.2 - p.2) * (m.2 - p.2) < 1e-4
        {
            // Tracked slowly: each still block moves the estimate a tenth of the way (about 2.5 s of stillness).
            if let g = gravity {
                gravity = (g.0 + 0.1 * (m.0 - g.0), g.1 + 0.1 * (m.1 - g.1), g.2 + 0.1 * (m.2 - g.2))
            } else {
                gravity = m
            }
        }
        blockCount = 0
        blockSum = (0, 0, 0)
        blockSquares = 0
    }

    /// The samples held: the ring's size in samples.
    var capacity: Int { ring.count }

    /// Doubles the ring, keeping every sample at its place for the new mask. A ring that had wrapped before it grew
    /// holds nothing older than what it held then (`firstHeld`).
    private mutating func grow() {
        let held = oldest
        var larger = Array(repeating: MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: 2 * ring.count)
        let largerMask = larger.count - 1
        for i in held..<count { larger[i & largerMask] = ring[i & mask] }
        ring = larger
        mask = largerMask
        firstHeld = held
    }

    /// The index of the oldest sample held.
    private var oldest: Int { max(firstHeld, count - ring.count) }

    /// The time of the oldest sample held (nil before the first).
    var oldestTimestamp: Double? { count > oldest ? ring[oldest & mask].timestamp : nil }

    /// The first index at or after time `t` (binary search over the ring).
    private func index(atOrAfter t: Double) -> Int {
        var lo = oldest, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ring[mid & mask].timestamp < t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Measures the rep whose rest points lie near `start` and `end` (searched within 0.6 and 0.3 `period` before and
    /// after `start`, 0.6 either side of `end` — with `fixedStart`, of the later of `end` and `start` + `period` —
    /// as far as samples exist), 0.4 to 1.6 periods apart; `fixedStart` is taken as it is, and `startsAtTop` (the
    /// way the set's previous rep went) is the way the rep must go. Returns the
    /// measure, the rest times chosen and the sample rate;
    /// nil when the samples are no longer (or not yet) held, or the rep needs too large a correction.
    mutating func measure(
        start: Double, end: Double, period: Double, fixedStart: Bool, startsAtTop expected: Bool? = nil
    ) -> (measure: RepKinematics.Measure, start: Double, end: Double, rate: Double)? {
        let search = 0.3 * period
        // A rep that starts at a known rest ends about a period later, wherever the detector placed the boundary
        // (the quietest point of its cycle, which can be a long pause at the turnaround).
        let end = fixedStart ? max(end, start + period) : end
        let first = index(atOrAfter: start - (fixedStart ? 0 : 2 * search))
        let last = min(count, index(atOrAfter: end + 2 * search + 1e-9)) - 1
        guard count > 0, ring[oldest & mask].timestamp <= start, last - first >= 8 else { return nil }
        // Vertical acceleration (m/s², up positive, gravity removed) of every sample in the search span.
        let up: (Double, Double, Double)
        var rest: Double
        if let g = gravity {
            rest = (g.0 * g.0 + g.1 * g.1 + g.2 * g.2).squareRoot()
            up = (g.0 / rest, g.1 / rest, g.2 / rest)
        } else {
            // No stillness seen: the rep's mean acceleration is zero (it starts and ends at rest).
            var sum = (0.0, 0.0, 0.0)
            for i in first...last {
                let s = i & mask
                sum = (sum.0 + ring[s].ax, sum.1 + ring[s].ay, sum.2 + ring[s].az)
            }
            rest = (sum.0 * sum.0 + sum.1 * sum.1 + sum.2 * sum.2).squareRoot() / Double(last - first + 1)
            let norm = max(rest * Double(last - first + 1), 1e-9)
            up = (sum.0 / norm, sum.1 / norm, sum.2 / norm)
        }
        tScratch.removeAll(keepingCapacity: true)
        aScratch.removeAll(keepingCapacity: true)
        for i in first...last {
            let s = i & mask
            let x = ring[s].ax, y = ring[s].ay, z = ring[s].az
            let along: Double
            switch method {
            case .magnitude: along = (x * x + y * y + z * z).squareRoot()
            case .projection: along = x * up.0 + y * up.1 + z * up.2
            }
            tScratch.append(ring[s].timestamp)
            aScratch.append((along - rest) * MotionSample.standardGravity)
        }
        // The rests: still moments (local minima of the acceleration's energy over 0.1 s) near each end. Of the
        // pairs, the one whose rep needs the smallest correction to end at rest where it started: a window from a
        // rest to the turnaround's pause (or into the next rep) cannot return to its start without a large one.
        let n = tScratch.count
        let span = tScratch[n - 1] - tScratch[0]
        let rate = Double(n - 1) / max(span, 1e-9)
        let half = max(1, Int((0.05 * rate).rounded()))
        energyScratch.removeAll(keepingCapacity: true)
        var running = 0.0
        energyScratch.append(0)
        for i in 0..<n {
            running += aScratch[i] * aScratch[i]
            energyScratch.append(running)
        }
        func energy(_ i: Int) -> Double {
            let lo = max(0, i - half), hi = min(n - 1, i + half)
            return (energyScratch[hi + 1] - energyScratch[lo]) / Double(hi - lo + 1)
        }
        // A set's first rep starts from the bar's stillness before the set (the longest still moment near the
        // start: a squat stands at the top, a deadlift lies on the floor); each later rep starts where the one
        // before ended, so the whole set keeps that start position.
        var startCandidates = [0]
        if !fixedStart {
            func stillness(_ i: Int) -> Double {
                let limit = 4 * energy(i) + 0.01
                var lo = i, hi = i
                while lo > 0, energy(lo - 1) < limit { lo -= 1 }
                while hi < n - 1, energy(hi + 1) < limit { hi += 1 }
                return tScratch[hi] - tScratch[lo]
            }
            let found = candidates(around: start, before: 2 * search, after: search, energy: energy)
            startCandidates = [found.max { stillness($0) < stillness($1) }!]
        }
        // The detector may announce a slow rep before it is over (its match peaks early): the end is searched
        // further after the boundary than before it.
        let endCandidates = candidates(around: end, before: 2 * search, after: 2 * search, energy: energy)
        var best: (a: Int, b: Int, score: Double, correction: Double)?
        var bestWhole: (a: Int, b: Int, score: Double, correction: Double)?
        for a in startCandidates {
            // A rep lasts about the detector's period: a window much longer holds parts of two reps.
            let limit = min(n - 1, lowerBound(tScratch[a] + 1.6 * period + 1e-9) - 1)
            guard limit > a else { continue }
            // One pass from the start: the correction of a window depends only on where it ends.
            integrateUncorrected(from: a, to: limit)
            // Besides the still moments, where the load stops: local minima of the speed. A touch-and-go rep ends
            // where the velocity changes sign at the start position, the bar never still there.
            var ends = endCandidates
            let lo = max(a + 1, lowerBound(end - 2 * search)), hi = min(limit - 1, lowerBound(end + 2 * search))
            if lo < hi {
                var stops: [(Int, Double)] = []
                for i in lo...hi {
                    let u = abs(uScratch[i - a])
                    if u <= abs(uScratch[i - a - 1]), u < abs(uScratch[i - a + 1]) { stops.append((i, u)) }
                }
                stops.sort { $0.1 < $1.1 }
                var added = 0
                for (i, _) in stops where added < 4 {
                    if ends.allSatisfy({ abs(tScratch[$0] - tScratch[i]) >= 0.05 }) {
                        ends.append(i)
                        added += 1
                    }
                }
            }
            ends = ends.filter { $0 <= limit && tScratch[$0] - tScratch[a] >= 0.4 * period }
            ends.sort()
            for i in ends {
                let k = i - a
                let T = tScratch[i] - tScratch[a]
                let v = uScratch[k], p = qScratch[k]
                let c = Self.correction(v: v, p: p, duration: T)
                // What the window must satisfy is physical: at rest where it began, the correction's size. How
                // still its ends are only breaks ties (a tenth: a touch-and-go rep ends at a velocity zero where
                // the bar accelerates hard, and a still moment elsewhere must not beat it).
                let score = c + 0.1 * (energy(a) + energy(i))
                if best == nil || score < best!.score { best = (a, i, score, c) }
                if bestWhole == nil || score < bestWhole!.score,
                    isOneRep(from: a, to: i, v: v, p: p, startsAtTop: expected)
                {
                    bestWhole = (a, i, score, c)
                }
            }
        }
        // A window that is one rep (out from the start position and back once, the way the set's reps go) is
        // preferred to one that needs a smaller correction but is not; when the way is known (the rep starts where
        // the set's previous one ended), a window that is not one rep gets no figures rather than another rep's.
        if bestWhole != nil || expected != nil { best = bestWhole }
        // A rep that needs a large correction was not whole (announced before the bar came to rest) or not a
        // rep of the load: no figures rather than wrong ones.
        guard let (a, b, _, correction) = best, b - a >= 4,
            correction <= Self.largestCorrection * Self.largestCorrection
        else { return nil }
        integrate(from: a, to: b)
        rScratch.removeAll(keepingCapacity: true)
        for i in a...b { rScratch.append(tScratch[i]) }
        guard let measure = RepKinematics.measure(times: rScratch, velocity: vScratch, position: pScratch) else {
            return nil
        }
        return (measure, tScratch[a], tScratch[b], rate)
    }

    /// Up to four still moments from `before` seconds before `t` to `after` seconds after it: local minima of `energy`, the quietest first, at least
    /// 0.15 s apart; the sample nearest `t` when there is none.
    private func candidates(around t: Double, before: Double, after: Double, energy: (Int) -> Double) -> [Int] {
        let n = tScratch.count
        let lo = max(0, lowerBound(t - before)), hi = min(n - 1, lowerBound(t + after))
        guard lo < hi else { return [min(max(lowerBound(t), 0), n - 1)] }
        var values: [Double] = []
        for i in lo...hi { values.append(energy(i)) }
        // Interior local minima only: an edge of the search span is usually on a slope.
        var minima: [(Int, Double)] = []
        for k in values.indices.dropFirst().dropLast() where values[k] <= values[k - 1] && values[k] <= values[k + 1] {
            minima.append((lo + k, values[k]))
        }
        minima.sort { $0.1 < $1.1 }
        var chosen: [Int] = []
        for (i, _) in minima where chosen.count < 4 {
            if chosen.allSatisfy({ abs(tScratch[$0] - tScratch[i]) >= 0.15 }) { chosen.append(i) }
        }
        // The quietest four can all lie in one long still stretch (a 2 s pause at the turnaround): each still
        // stretch (energy within 4 times the quietest, plus 0.01) gives its quietest moment too.
        if let quietest = minima.first?.1 {
            let limit = 4 * quietest + 0.01
            var run: (index: Int, value: Double)?
            for k in values.indices {
                if values[k] < limit {
                    if run == nil || values[k] < run!.value { run = (lo + k, values[k]) }
                }
                if values[k] >= limit || k == values.count - 1, let r = run {
                    if chosen.allSatisfy({ abs(tScratch[$0] - tScratch[r.index]) >= 0.15 }) { chosen.append(r.index) }
                    run = nil
                }
            }
        }
        return chosen.isEmpty ? [min(max(lowerBound(t), 0), n - 1)] : chosen
    }

    private func lowerBound(_ t: Double) -> Int {
        var lo = 0, hi = tScratch.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if tScratch[mid] < t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Integrates the vertical acceleration from sample `a` (at rest) to `b` into the scratch velocity and position,
    /// and removes the acceleration error c₀ + c₁τ that brings both back to zero at `b`.
    private mutating func integrate(from a: Int, to b: Int) {
        Self.trapezoid(t: tScratch, a: aScratch, from: a, to: b, velocity: &vScratch, position: &pScratch)
        let v = vScratch[vScratch.count - 1], p = pScratch[pScratch.count - 1]
        let t0 = tScratch[a]
        let T = tScratch[b] - t0
        let c0 = -2 * v / T + 6 * p / (T * T)
        let c1 = -12 * p / (T * T * T) + 6 * v / (T * T)
        for k in 0..<vScratch.count {
            let tau = tScratch[a + k] - t0
            vScratch[k] -= c0 * tau + c1 * tau * tau / 2
            pScratch[k] -= c0 * tau * tau / 2 + c1 * tau * tau * tau / 6
        }
    }

    /// Integrates the vertical acceleration from sample `a` (taken at rest) to `b` into the uncorrected scratch
    /// velocity and position (index 0 is sample `a`).
    private mutating func integrateUncorrected(from a: Int, to b: Int) {
        Self.trapezoid(t: tScratch, a: aScratch, from: a, to: b, velocity: &uScratch, position: &qScratch)
    }

    /// The trapezoid rule from sample `a` (velocity and position 0) to `b`: `velocity` and `position` are replaced by
    /// one value per sample, index 0 being sample `a` (only that one when `b` ≤ `a`).
    private static func trapezoid(
        t: [Double], a acceleration: [Double], from a: Int, to b: Int, velocity: inout [Double],
        position: inout [Double]
    ) {
        velocity.removeAll(keepingCapacity: true)
        position.removeAll(keepingCapacity: true)
        velocity.append(0)
        position.append(0)
        guard b > a else { return }
        var v = 0.0, p = 0.0
        for i in (a + 1)...b {
            let dt = t[i] - t[i - 1]
            let vNext = v + 0.5 * (acceleration[i] + acceleration[i - 1]) * dt
            p += 0.5 * (v + vNext) * dt
            v = vNext
            velocity.append(v)
            position.append(p)
        }
    }

    /// Whether the window from `a` to `b` (uncorrected velocity `v` and position `p` at `b`), once corrected to end
    /// at rest where it began, is one rep: the load goes out from its start position to one far turnaround (below
    /// the start when `startsAtTop`, when known from the set's reps before) and comes back once. A window from
    /// turnaround to turnaround goes the other way; one over two reps comes back near its start (within a quarter
    /// of its range) and leaves again (beyond half of it).
    private func isOneRep(from a: Int, to b: Int, v: Double, p: Double, startsAtTop: Bool?) -> Bool {
        let t0 = tScratch[a]
        let T = tScratch[b] - t0
        guard T > 0 else { return false }
        let c0 = -2 * v / T + 6 * p / (T * T)
        let c1 = -12 * p / (T * T * T) + 6 * v / (T * T)
        func position(_ i: Int) -> Double {
            let tau = tScratch[i] - t0
            return qScratch[i - a] - (c0 * tau * tau / 2 + c1 * tau * tau * tau / 6)
        }
        var far = 0.0
        for i in a...b {
            let x = position(i)
            if abs(x) > abs(far) { far = x }
        }
        guard far != 0 else { return false }
        if let startsAtTop, (far < 0) != startsAtTop { return false }
        let range = abs(far)
        var out = false, back = false
        for i in a...b {
            let x = abs(position(i))
            if !out {
                out = x > 0.5 * range
            } else if !back {
                back = x < 0.25 * range
            } else if x > 0.5 * range {
                return false
            }
        }
        return true
    }

    /// The mean square over [0, T] of the acceleration error c₀ + c₁τ that brings velocity `v` and position `p`
    /// at `T` back to zero, (m/s²)².
    private static func correction(v: Double, p: Double, duration T: Double) -> Double {
        let c0 = -2 * v / T + 6 * p / (T * T)
        let c1 = -12 * p / (T * T * T) + 6 * v / (T * T)
        return c0 * c0 + c0 * c1 * T + c1 * c1 * T * T / 3
    }

    /// Why this rep gets no velocity, or nil when it does (placement `bar` and a high enough sample rate).
    func velocityUnavailable(rate: Double) -> String? {
        guard placement == .bar else { return nil }
        return rate < minimumVelocityRate ? "sample rate too low" : nil
    }
}
