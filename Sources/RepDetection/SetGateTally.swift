/// The exercise gate's judgements of one set, summed: how many, their probabilities' sum, how many were refusals.
/// At the set's end the detector dismisses the set when they average too low (docs/DETECTOR.md, "How the detector
/// uses it").
struct SetGateTally {
    private(set) var sum = 0.0
    private(set) var count = 0
    private(set) var refusals = 0

    /// Adds one judgement, `probability`, refused or not.
    mutating func add(_ probability: Double, refused: Bool) {
        sum += probability
        count += 1
        if refused { refusals += 1 }
    }

    /// Adds `other`'s judgements.
    mutating func add(_ other: SetGateTally) {
        sum += other.sum
        count += other.count
        refusals += other.refusals
    }

    /// Whether the judgements say the set was not exercise: at least `minimumCount` of them, averaging below
    /// `multiple` times `threshold`, or below `refusedMultiple` times it with at least `refusedShare` of them refused.
    func dismisses(
        threshold: Double, minimumCount: Int, multiple: Double, refusedMultiple: Double, refusedShare: Double
    ) -> Bool {
        let n = Double(count)
        return count >= minimumCount
            && (sum < multiple * threshold * n
                || (sum < refusedMultiple * threshold * n && Double(refusals) >= refusedShare * n))
    }
}
