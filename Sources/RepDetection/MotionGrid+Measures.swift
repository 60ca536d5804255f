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

    /// The last still point before the periodic motion of period `lag` ending at `i`: walking back over at most
    /// `lookback` points, the first point where the motion's energy (smoothed over a sixteenth of the period) is below
    /// 5 % of the last period's mean. nil when the motion does not start from stillness there.
    func onset(before i: Int, lag: Int, lookback: Int) -> Int? {
        var sum = 0.0
        for j in (i - lag + 1)...i { sum += energy[slot(j)] }
        let still = 0.05 * sum / Double(lag)
        let half = max(1, lag / 16)
        let low = max(oldest + half, i - lookback)
        var j = i - lag
        guard j - half >= low, j + half < next else { return nil }
        var smoothed = 0.0
        for n in (j - half)...(j + half) { smoothed += energy[slot(n)] }
        let width = Double(2 * half + 1)
        while j - half > low {
            if smoothed / width < still { return j }
            smoothed += energy[slot(j - half - 1)] - energy[slot(j + half)]
            j -= 1
        }
        return nil
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
}
