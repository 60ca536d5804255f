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
/// `capacity` samples in a ring, tracks gravity while the sensor is still, and, given a rep's approximate window
/// from the detector, finds the rests at its ends and integrates the vertical acceleration between them with the
/// velocity and the position forced back to zero at the end (an acceleration error a₀ + a₁t is removed).
///
/// `record` costs a few stores and additions per sample and never allocates; `measure` allocates only when a rep
/// is longer than any before.
struct RepQualityAnalyzer {
    /// Samples kept: 2¹⁶, 11 min at 100 Hz, 41 s at 1.6 kHz (a longer set's first reps get no quality at its end).
    static let capacity = 1 << 16
    /// Below this sample rate no velocity is claimed: at 25 Hz the mean concentric velocity of fast reps is off by
    /// more than the goal (docs/QUALITY.md).
    static let minimumVelocityRate = 40.0
    /// Gravity is measured over still blocks this long …
    static let blockSeconds = 0.25
    /// … whose acceleration varies by less than this (RMS of the vector, g).
    static let stillRMS = 0.03

    let placement: SensorPlacement
    let method: VerticalAcceleration
    private let mask = capacity - 1
    private var times: [Double]
    private var xs: [Float], ys: [Float], zs: [Float]
    /// Samples recorded so far (the ring holds the last `capacity`).
    private(set) var count = 0

    // Gravity, from still blocks.
    private var blockStart = 0.0
    private var blockCount = 0
    private var blockSum = (0.0, 0.0, 0.0)
    private var blockSquares = 0.0
    private(set) var gravity: (Double, Double, Double)?

    // Scratch for a rep's samples.
    private var tScratch: [Double] = []
    private var aScratch: [Double] = []
    private var vScratch: [Double] = []
    private var pScratch: [Double] = []
    private var rScratch: [Double] = []

    init(placement: SensorPlacement, method: VerticalAcceleration) {
        self.placement = placement
        self.method = method
        times = Array(repeating: 0, count: Self.capacity)
        xs = Array(repeating: 0, count: Self.capacity)
        ys = xs
        zs = xs
        tScratch.reserveCapacity(4096)
        aScratch.reserveCapacity(4096)
        vScratch.reserveCapacity(4096)
        pScratch.reserveCapacity(4096)
        rScratch.reserveCapacity(4096)
    }

    /// Keeps one sample (time advancing) and updates gravity at the end of each still block.
    @inline(__always)
    mutating func record(_ s: MotionSample) {
        let slot = count & mask
        times[slot] = s.timestamp
        xs[slot] = Float(s.ax)
        ys[slot] = Float(s.ay)
        zs[slot] = Float(s.az)
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
        if blockCount >= 3, variance < Self.stillRMS * Self.stillRMS, norm2 > 0.64, norm2 < 1.44 {
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

    /// The time of the newest sample.
    var newest: Double { count > 0 ? times[(count - 1) & mask] : 0 }
    private var oldest: Int { max(0, count - Self.capacity) }

    /// The first index at or after time `t` (binary search over the ring).
    private func index(atOrAfter t: Double) -> Int {
        var lo = oldest, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if times[mid & mask] < t { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Measures the rep whose rest points lie near `start` and `end` (each searched within `search` seconds either
    /// side, as far as samples exist; `fixedStart` is taken as it is). Returns the measure and the rest times
    /// chosen; nil when the samples are no longer (or not yet) held.
    mutating func measure(
        start: Double, end: Double, search: Double, fixedStart: Bool
    ) -> (measure: RepKinematics.Measure, start: Double, end: Double, rate: Double)? {
        let first = index(atOrAfter: start - (fixedStart ? 0 : search))
        let last = min(count, index(atOrAfter: end + search + 1e-9)) - 1
        guard count > 0, times[oldest & mask] <= start, last - first >= 8 else { return nil }
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
                sum = (sum.0 + Double(xs[s]), sum.1 + Double(ys[s]), sum.2 + Double(zs[s]))
            }
            rest = (sum.0 * sum.0 + sum.1 * sum.1 + sum.2 * sum.2).squareRoot() / Double(last - first + 1)
            let norm = max(rest * Double(last - first + 1), 1e-9)
            up = (sum.0 / norm, sum.1 / norm, sum.2 / norm)
        }
        tScratch.removeAll(keepingCapacity: true)
        aScratch.removeAll(keepingCapacity: true)
        for i in first...last {
            let s = i & mask
            let x = Double(xs[s]), y = Double(ys[s]), z = Double(zs[s])
            let along: Double
            switch method {
            case .magnitude: along = (x * x + y * y + z * z).squareRoot()
            case .projection: along = x * up.0 + y * up.1 + z * up.2
            }
            tScratch.append(times[s])
            aScratch.append((along - rest) * MotionSample.standardGravity)
        }
        // The rests: the quietest 0.1 s (at least 3 samples) near each end.
        let n = tScratch.count
        let span = tScratch[n - 1] - tScratch[0]
        let rate = Double(n - 1) / max(span, 1e-9)
        let half = max(1, Int((0.05 * rate).rounded()))
        func quietest(around t: Double) -> Int {
            let lo = max(half, lowerBound(t - search)), hi = min(n - 1 - half, lowerBound(t + search))
            guard lo <= hi else { return min(max(lowerBound(t), 0), n - 1) }
            var energy = 0.0
            for i in (lo - half)...(lo + half) { energy += aScratch[i] * aScratch[i] }
            var best = lo, lowest = energy
            var i = lo + 1
            while i <= hi {
                energy += aScratch[i + half] * aScratch[i + half] - aScratch[i - half - 1] * aScratch[i - half - 1]
                // Of equally quiet points, the one nearest the detector's boundary.
                if energy < lowest - 1e-12 || (energy <= lowest + 1e-12 && abs(tScratch[i] - t) < abs(tScratch[best] - t)) {
                    lowest = energy
                    best = i
                }
                i += 1
            }
            return best
        }
        func lowerBound(_ t: Double) -> Int {
            var lo = 0, hi = n
            while lo < hi {
                let mid = (lo + hi) / 2
                if tScratch[mid] < t { lo = mid + 1 } else { hi = mid }
            }
            return lo
        }
        let a = fixedStart ? 0 : quietest(around: start)
        let b = quietest(around: end)
        guard b - a >= 4 else { return nil }
        // Integrate, then remove the acceleration error c₀ + c₁τ that brings velocity and position back to zero.
        vScratch.removeAll(keepingCapacity: true)
        pScratch.removeAll(keepingCapacity: true)
        var v = 0.0, p = 0.0
        vScratch.append(0)
        pScratch.append(0)
        for i in (a + 1)...b {
            let dt = tScratch[i] - tScratch[i - 1]
            let vNext = v + 0.5 * (aScratch[i] + aScratch[i - 1]) * dt
            p += 0.5 * (v + vNext) * dt
            v = vNext
            vScratch.append(v)
            pScratch.append(p)
        }
        let t0 = tScratch[a]
        let T = tScratch[b] - t0
        let c0 = -2 * v / T + 6 * p / (T * T)
        let c1 = -12 * p / (T * T * T) + 6 * v / (T * T)
        for k in 0..<vScratch.count {
            let tau = tScratch[a + k] - t0
            vScratch[k] -= c0 * tau + c1 * tau * tau / 2
            pScratch[k] -= c0 * tau * tau / 2 + c1 * tau * tau * tau / 6
        }
        rScratch.removeAll(keepingCapacity: true)
        for i in a...b { rScratch.append(tScratch[i]) }
        guard let measure = RepKinematics.measure(times: rScratch, velocity: vScratch, position: pScratch) else {
            return nil
        }
        return (measure, tScratch[a], tScratch[b], rate)
    }

    /// Why this rep gets no velocity, or nil when it does (placement `bar` and a high enough sample rate).
    func velocityUnavailable(rate: Double) -> String? {
        guard placement == .bar else { return nil }
        return rate < Self.minimumVelocityRate ? "sample rate too low" : nil
    }
}
