/// The phase rules that turn one rep's vertical velocity and position into its figures. The same rules measure the
/// estimate (repd) and the truth (the barbell generator, from its exact kinematics), so that a difference between
/// the two is an error of the sensing, not of the definitions.
///
/// - The far turnaround is where the position is furthest from the start; below it, the rep started at the top.
/// - A phase (eccentric: downward, concentric: upward) is the span around its peak speed during which the load moves
///   faster than `movingFraction` (a tenth) of that peak speed, with sub-sample crossing times (linear
///   interpolation).
/// - Mean concentric velocity = the rise during the concentric phase / its duration; peak = the highest upward
///   velocity (parabolic interpolation between samples).
/// - Range of motion = highest minus lowest position during the rep.
public enum RepKinematics {
    /// A phase moves faster than this fraction of its peak speed.
    public static let movingFraction = 0.1
    /// … and faster than this, m/s.
    public static let movingFloor = 0.01

    /// One rep measured.
    public struct Measure: Sendable, Equatable {
        /// Whether the far turnaround is below the start (squat, bench).
        public var startsAtTop: Bool
        /// Highest minus lowest position, m.
        public var rangeOfMotion: Double
        /// Concentric phase: start and end time, mean and peak velocity (m/s).
        public var concentric: (start: Double, end: Double, mean: Double, peak: Double)?
        /// Eccentric phase: start and end time.
        public var eccentric: (start: Double, end: Double)?

        /// When the rep began to move.
        public var movementStart: Double? { startsAtTop ? eccentric?.start : concentric?.start }
        /// When it stopped moving.
        public var movementEnd: Double? { startsAtTop ? concentric?.end : eccentric?.end }
        /// The pause at the far turnaround, s.
        public var turnaroundPause: Double? {
            guard let c = concentric, let e = eccentric else { return nil }
            return max(0, startsAtTop ? c.start - e.end : e.start - c.end)
        }

        /// Equal when every figure is (written out because tuples are not `Equatable`).
        public static func == (a: Measure, b: Measure) -> Bool {
            a.startsAtTop == b.startsAtTop && a.rangeOfMotion == b.rangeOfMotion
                && a.concentric?.start == b.concentric?.start && a.concentric?.end == b.concentric?.end
                && a.concentric?.mean == b.concentric?.mean && a.concentric?.peak == b.concentric?.peak
                && a.eccentric?.start == b.eccentric?.start && a.eccentric?.end == b.eccentric?.end
        }

        /// The rep's quality; `previous` (the set's rep before, measured) gives the pause at the start position.
        public func quality(
            start: Double, end: Double, previous: Measure?, velocities: Bool, unavailable: String? = nil
        ) -> RepQuality {
            var q = RepQuality(start: start, end: end, startsAtTop: startsAtTop)
            q.concentric = concentric.map { $0.end - $0.start }
            q.eccentric = eccentric.map { $0.end - $0.start }
            let before = previous?.movementEnd.flatMap { e in movementStart.map { max(0, $0 - e) } }
            if startsAtTop {
                q.pauseBottom = turnaroundPause
                q.pauseTop = before
            } else {
                q.pauseTop = turnaroundPause
                q.pauseBottom = before
            }
            if velocities, let c = concentric {
                q.velocity = RepVelocity(rangeOfMotion: rangeOfMotion, meanConcentric: c.mean, peakConcentric: c.peak)
            }
            q.velocityUnavailable = unavailable
            return q
        }
    }

    /// Measures one rep from its samples: `times` (s), vertical `velocity` (m/s, up positive) and `position` (m).
    /// nil for fewer than 3 samples.
    public static func measure(times: [Double], velocity: [Double], position: [Double]) -> Measure? {
        let n = times.count
        guard n >= 3, velocity.count == n, position.count == n else { return nil }
        var far = 0
        var low = position[0], high = position[0]
        for i in 0..<n {
            let p = position[i]
            if abs(p - position[0]) > abs(position[far] - position[0]) { far = i }
            low = min(low, p)
            high = max(high, p)
        }
        let top = position[far] < position[0]
        let first = top ? -1.0 : 1.0  // the sign of the first phase's velocity
        let a = phase(times, velocity, position, sign: first, range: 0...far)
        let b = phase(times, velocity, position, sign: -first, range: far...(n - 1))
        let up = top ? b : a
        let down = top ? a : b
        return Measure(
            startsAtTop: top, rangeOfMotion: high - low,
            concentric: up.map { ($0.start, $0.end, $0.mean, $0.peak) },
            eccentric: down.map { ($0.start, $0.end) })
    }

    /// Velocity loss of `value` against `fastest`, percent.
    public static func loss(_ value: Double, fastest: Double) -> Double {
        fastest > 0 ? max(0, (fastest - value) / fastest * 100) : 0
    }

    /// The phase moving in the direction `sign` within `range`: the span around its peak speed above the threshold.
    private static func phase(
        _ t: [Double], _ v: [Double], _ p: [Double], sign: Double, range: ClosedRange<Int>
    ) -> (start: Double, end: Double, mean: Double, peak: Double)? {
        var k = range.lowerBound
        for i in range where sign * v[i] > sign * v[k] { k = i }
        let peakSample = sign * v[k]
        guard peakSample > movingFloor else { return nil }
        let threshold = max(movingFloor, movingFraction * peakSample)
        var a = k
        while a > range.lowerBound, sign * v[a - 1] >= threshold { a -= 1 }
        var b = k
        while b < range.upperBound, sign * v[b + 1] >= threshold { b += 1 }
        // Crossing times between the last sample below and the first above the threshold.
        func crossing(_ below: Int, _ above: Int) -> (time: Double, position: Double) {
            let vb = sign * v[below], va = sign * v[above]
            let f = va != vb ? min(max((threshold - vb) / (va - vb), 0), 1) : 0
            return (t[below] + f * (t[above] - t[below]), p[below] + f * (p[above] - p[below]))
        }
        let start = a > range.lowerBound ? crossing(a - 1, a) : (t[a], p[a])
        let end = b < range.upperBound ? crossing(b + 1, b) : (t[b], p[b])
        let duration = end.time - start.time
        guard duration > 0 else { return nil }
        var peak = peakSample
        if k > 0, k < t.count - 1 {
            let y0 = sign * v[k - 1], y2 = sign * v[k + 1]
            let curvature = y0 - 2 * peakSample + y2
            if curvature < 0, y0 < peakSample, y2 < peakSample {
                peak = peakSample - (y0 - y2) * (y0 - y2) / (8 * curvature)
            }
        }
        return (start.time, end.time, abs(end.position - start.position) / duration, peak)
    }
}
