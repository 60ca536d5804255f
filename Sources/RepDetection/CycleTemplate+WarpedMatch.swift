/// How well a stretch of motion of another length moves like the template when its phases may each take their own
/// time: a rep towards failure slows its drive (a deadlift's pull 1.6 times as long at 50 % velocity loss) but not its
/// lowering or its pauses, which a uniform stretch cannot follow.
extension CycleTemplate {
    /// The match of the points `first...last` with the template under dynamic time warping, at most 1, and their
    /// energy per point as a share of the template's (means removed, both).
    ///
    /// Both are scaled to unit RMS (the shape only, as `match`), and the warping path's points may drift from the
    /// diagonal by at most `band` of either length. The match is one minus half the mean squared distance per step of
    /// the path of least total distance (every step weighs the same, so a path may take more steps through close
    /// points): for two unit-RMS stretches aligned point for point, their normalized correlation. Allocates two arrays
    /// of two rows of the template's length: for a set's end, not per sample.
    func warpedMatch(_ grid: MotionGrid, from first: Int, to last: Int, band: Double) -> (
        match: Double, energy: Double
    ) {
        let count = last - first + 1
        guard count > 2, length > 2, first >= grid.oldest, last < grid.next else { return (0, 0) }
        let mean = Self.mean(grid, endingAt: last, length: count)
        var energy = 0.0
        for j in first...last {
            let s = grid.slot(j)
            let a = grid.x[s] - mean.0, b = grid.y[s] - mean.1, c = grid.z[s] - mean.2
            energy += a * a + b * b + c * c
        }
        let templateMean = (sum.0 / Double(length), sum.1 / Double(length), sum.2 / Double(length))
        let templateEnergy =
            squares / Double(length)
            - (templateMean.0 * templateMean.0 + templateMean.1 * templateMean.1 + templateMean.2 * templateMean.2)
        let pieceEnergy = energy / Double(count)
        guard pieceEnergy > 0, templateEnergy > 0 else { return (0, 0) }
        let pieceScale = 1 / pieceEnergy.squareRoot()
        let templateScale = 1 / templateEnergy.squareRoot()
        // Two rows of the cumulative distance and of the path's length over the template's points, in one array each:
        // row i of the path lies at (i & 1) * width (swapping two arrays of rows instead made Swift 6.0.3, Debian
        // trixie's, crash optimizing this function: "AccessPathVerification ... missing collected use").
        let width = length + 1
        var cost = [Double](repeating: .infinity, count: 2 * width)
        var pathSteps = [Int](repeating: 0, count: 2 * width)
        cost[0] = 0
        for i in 1...count {
            let current = (i & 1) * width, previous = width - current
            cost[current] = .infinity
            let s = grid.slot(first + i - 1)
            let a = (
                (grid.x[s] - mean.0) * pieceScale, (grid.y[s] - mean.1) * pieceScale, (grid.z[s] - mean.2) * pieceScale
            )
            let position = Double(i) / Double(count)
            for j in 1...length {
                cost[current + j] = .infinity
                guard abs(position - Double(j) / Double(length)) <= band else { continue }
                let b = (
                    (x[j - 1] - templateMean.0) * templateScale, (y[j - 1] - templateMean.1) * templateScale,
                    (z[j - 1] - templateMean.2) * templateScale
                )
                let d = (a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1) + (a.2 - b.2) * (a.2 - b.2)
                var best = cost[previous + j - 1]
                var steps = pathSteps[previous + j - 1]
                if cost[previous + j] < best {
                    best = cost[previous + j]
                    steps = pathSteps[previous + j]
                }
                if cost[current + j - 1] < best {
                    best = cost[current + j - 1]
                    steps = pathSteps[current + j - 1]
                }
                cost[current + j] = best + d
                pathSteps[current + j] = steps + 1
            }
        }
        let end = (count & 1) * width + length
        let total = cost[end], steps = pathSteps[end]
        guard total.isFinite, steps > 0 else { return (0, 0) }
        return (1 - total / Double(steps) / 2, pieceEnergy / templateEnergy)
    }
}
