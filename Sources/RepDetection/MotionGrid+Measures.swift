/// What the detector measures on the grid's recent motion: its size, where it started from stillness, and how much it
/// moves like walking.
extension MotionGrid {
    /// RMS of the motion over the `window` points ending at `i`, g (points older than the run count as still).
    func rms(endingAt i: Int, window: Int) -> Double {
        var sum = 0.0
        let first = max(i - window + 1, oldest)
        for j in first...i { sum += energy[slot(j)] }
        return (sum / Double(window)).squareRoot()
    }

    /// Where the periodic motion of period `lag` ending at `i` started from stillness. Walking back over at most
    /// `lookback` points, a point is still where the motion's energy (smoothed over a sixteenth of the period) is
    /// below 5 % of the last period's mean. `nearest` is the first still point found. `rest` is where the rest before
    /// the set ended: `nearest`, when its still stretch is at least a period long or reaches the look-back's start;
    /// or, when `nearest` is a pause inside the set's first rep (a paused squat holds 1–2 s at the bottom), the end of
    /// such a stretch before it, the motion between lasting less than a period and moving at least half as much as
    /// the last period on average (the first rep's way down); else nil. nil when the motion does not start from
    /// stillness there.
    func onset(before i: Int, lag: Int, lookback: Int) -> (nearest: Int, rest: Int?)? {
        let (mean, still, half) = stillness(endingAt: i, lag: lag)
        let low = max(oldest + half, i - lookback)
        var j = i - lag
        guard j - half >= low, j + half < next else { return nil }
        var smoothed = 0.0
        for n in (j - half)...(j + half) { smoothed += energy[slot(n)] }
        let width = Double(2 * half + 1)
        var nearest: Int?
        var stretchEnd: Int?
        var moved = 0.0, moving = 0
        // Whether the still stretch ending at `end` is the rest before the set: the one at `nearest`, or one before
        // a first rep that paused at `nearest`.
        func rest(_ end: Int) -> Int? {
            guard let nearest, end < nearest else { return end }
            return moving > 0 && moved / Double(moving) >= 0.5 * mean ? end : nil
        }
        while j - half > low {
            let value = smoothed / width
            if value < still {
                if nearest == nil { nearest = j }
                if stretchEnd == nil { stretchEnd = j }
                if let end = stretchEnd, end - j + 1 >= lag { return (nearest ?? end, rest(end)) }
            } else if let nearest {
                stretchEnd = nil
                moved += value
                moving += 1
                // A pause is inside the first rep only when that rep began less than a period before it.
                if nearest - j > lag { return (nearest, nil) }
            }
            smoothed += energy[slot(j - half - 1)] - energy[slot(j + half)]
            j -= 1
        }
        guard let nearest else { return nil }
        return (nearest, stretchEnd.flatMap(rest))
    }

    /// How much the last `window` points move like walking at a stride of `lag` points: the correlation of the
    /// motion along gravity with itself half a stride earlier, minus that of the motion across gravity. nil when
    /// the lag is not a stride's (`configuration`'s walking periods), the vertical motion is too small, the motion is
    /// too large, or there is too little history. With `halfStride` (the lag is twice a tracked step-long period) the
    /// arm must also be seen swinging back.
    func walkingLikeness(
        at i: Int, lag: Int, window: Int, halfStride: Bool = false, configuration c: RepDetectorConfiguration
    ) -> Double? {
        let seconds = Double(lag) * Self.spacing
        guard seconds >= c.walkingPeriodLow, seconds <= c.walkingPeriodHigh else { return nil }
        let half = lag / 2
        let first = i - window + 1
        guard first - half >= oldest else { return nil }
        var vv = 0.0, vl = 0.0, vll = 0.0, hh = 0.0, hl = 0.0, hll = 0.0
        for j in first...i {
            let a = slot(j), b = slot(j - half)
            let v = vertical[a], w = vertical[b]
            vv += v * v
            vl += v * w
            vll += w * w
            let hx = self.hx[a], hy = self.hy[a], hz = self.hz[a]
            let gx = self.hx[b], gy = self.hy[b], gz = self.hz[b]
            hh += hx * hx + hy * hy + hz * hz
            hl += hx * gx + hy * gy + hz * gz
            hll += gx * gx + gy * gy + gz * gz
        }
        guard vv >= c.minimumVerticalShare * (vv + hh) else { return nil }
        // A swinging arm and a bouncing body move the wrist by a few tenths of a g (0.12–0.32 g RMS on the real
        // walks); jumping jacks and rope skipping, which also bounce twice per arm cycle, by 0.8–2.3 g.
        guard (vv + hh) / Double(window) <= c.walkingMaximumRMS * c.walkingMaximumRMS else { return nil }
        let alongRepeat = vl / max((vv * vll).squareRoot(), 1e-12)
        let acrossRepeat = hl / max((hh * hll).squareRoot(), 1e-12)
        // Any back-and-forth motion across gravity reverses every half period, so the reversal alone says nothing:
        // the steps (vertical motion repeating at half the stride) must be there too.
        let likeness = min(alongRepeat - acrossRepeat, 2 * alongRepeat)
        // A step-long period judged as half a stride: a fast rep along gravity also repeats every period, and only
        // the arm swinging back tells walking from it, so the reversal must be there too.
        // (With hardly any motion across gravity there is no arm to swing back: its correlation is noise.)
        guard halfStride else { return likeness }
        return hh >= c.minimumVerticalShare * (vv + hh) ? min(likeness, -2 * acrossRepeat) : nil
    }

    /// How much the height of the mean cycle of `length` points ending at each of `ends` repeats half a cycle later,
    /// at the best shift within a tenth of a cycle (circular normalized correlation, −1…1): the motion along gravity
    /// summed twice over the cycle, each sum's mean removed. Both legs of a pair of alternating lunges dip and come
    /// back up, so the height repeats; a paused squat is up for one half of its cycle and down for the other, so it
    /// reverses. Cycles older than the grid holds are left out; 0 when none is left. `scratch` is working space.
    func heightHalfRepetition(endingAt ends: [Int], length: Int, scratch: inout [Double]) -> Double {
        guard length >= 8 else { return 0 }
        scratch.removeAll(keepingCapacity: true)
        for _ in 0..<length { scratch.append(0) }
        var used = 0
        for end in ends where end - length + 1 >= oldest && end < next {
            for n in 0..<length { scratch[n] += vertical[slot(end - length + 1 + n)] }
            used += 1
        }
        guard used > 0 else { return 0 }
        // Acceleration → velocity → height, each made to sum to zero over the cycle (a cycle returns where it began).
        for _ in 0..<2 {
            var mean = 0.0
            for n in 0..<length { mean += scratch[n] }
            mean /= Double(length)
            var sum = 0.0
            for n in 0..<length {
                sum += scratch[n] - mean
                scratch[n] = sum
            }
        }
        var mean = 0.0
        for n in 0..<length { mean += scratch[n] }
        mean /= Double(length)
        var squares = 0.0
        for n in 0..<length {
            scratch[n] -= mean
            squares += scratch[n] * scratch[n]
        }
        guard squares > 0 else { return 0 }
        var best = -1.0
        let spread = max(1, length / 10)
        for shift in (length / 2 - spread)...(length / 2 + spread) {
            var dot = 0.0
            for n in 0..<length { dot += scratch[n] * scratch[n + shift < length ? n + shift : n + shift - length] }
            best = max(best, dot / squares)
        }
        return best
    }

    /// Where the motion after a rep that ended at `end`, of period `lag`, comes to rest: the first point from half a
    /// period after `end` to at most `within` points after it whose energy, smoothed over a sixteenth of the period,
    /// is below 5 % of the rep's mean (as `onset`'s still points), and stays so for a period or up to the newest
    /// point (a pause inside a rep, at a paused squat's bottom, is shorter). nil when the motion goes on.
    func rest(after end: Int, lag: Int, within: Int) -> Int? {
        guard lag > 1, end - lag + 1 >= oldest, end < next else { return nil }
        let (_, still, half) = stillness(endingAt: end, lag: lag)
        var j = end + lag / 2
        guard j + half < next else { return nil }
        var smoothed = 0.0
        for n in (j - half)...(j + half) { smoothed += energy[slot(n)] }
        let width = Double(2 * half + 1)
        var stillSince: Int?
        while stillSince != nil || j - end <= within {
            if smoothed / width < still {
                if stillSince == nil { stillSince = j }
                if let since = stillSince, j - since + 1 >= lag { return since }
            } else {
                stillSince = nil
            }
            guard j + half + 1 < next else { return stillSince }
            smoothed += energy[slot(j + half + 1)] - energy[slot(j - half)]
            j += 1
        }
        return nil
    }

    /// What `onset` and `rest(after:)` call still: the mean energy per point of the period of `lag` points ending at
    /// `i`, 5 % of it (the still level), and the half-width of the smoothing, a sixteenth of the period.
    private func stillness(endingAt i: Int, lag: Int) -> (mean: Double, still: Double, half: Int) {
        var sum = 0.0
        for j in (i - lag + 1)...i { sum += energy[slot(j)] }
        let mean = sum / Double(lag)
        return (mean, 0.05 * mean, max(1, lag / 16))
    }
}
