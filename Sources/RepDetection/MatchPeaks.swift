/// Peak picking over a run of template matches, as the detector's look-back and set-end recount use it.
enum MatchPeaks {
    /// Calls `body` with each greedy peak of `values` (index `offset` is `values[0]`) from `offset` to `last`: local
    /// maxima of at least `threshold`; of two closer than `separation`, the higher. Values outside the run count as 0.
    static func forEach(
        in values: [Double], offset: Int, upTo last: Int, threshold: Double, separation: Double, _ body: (Int) -> Void
    ) {
        guard !values.isEmpty else { return }
        func value(_ j: Int) -> Double {
            let n = j - offset
            return n >= 0 && n < values.count ? values[n] : 0
        }
        var pending: Int? = nil
        var j = offset
        while j <= last {
            let v = value(j)
            if v >= threshold, v >= value(j - 1), v > value(j + 1) {
                if let p = pending, Double(j - p) < separation {
                    if v > value(p) { pending = j }
                } else {
                    if let p = pending { body(p) }
                    pending = j
                }
            }
            j += 1
        }
        if let p = pending { body(p) }
    }
}
