/// What the period tracker said during one set about the set's own period: how much the motion repeated at it (the
/// NSDF there, summed), and at how many points the tracker clearly held a period `RepDetector.wrongPeriodRatio`–
/// `RepDetector.wrongPeriodMaximumRatio` times longer instead (and those periods, summed). At the set's end the
/// detector counts a set whose motion did not repeat at its own period at the longer one (docs/DETECTOR.md, "Sets that
/// started on a wrong period").
struct SetPeriodTally {
    private var points = 0
    private var repetition = 0.0
    private var longerPoints = 0
    private var longerLags = 0

    /// Adds one grid point of the set: `repetition` is the NSDF at the set's period `setLag`, `k` and `clarity` the
    /// tracker's period and periodicity.
    mutating func add(repetition: Double, tracked k: Int, clarity: Double, setLag: Int) {
        points += 1
        self.repetition += repetition
        let ratio = Double(k) / Double(setLag)
        if clarity >= RepDetector.wrongPeriodClarity, ratio >= RepDetector.wrongPeriodRatio,
            ratio <= RepDetector.wrongPeriodMaximumRatio
        {
            longerPoints += 1
            longerLags += k
        }
    }

    /// The mean of the longer periods held, in grid points, when the motion's mean NSDF at the set's period is below
    /// `maximumRepetition` and the tracker held a longer period at `minimumShare` of the points or more; nil otherwise.
    func longerPeriod(maximumRepetition: Double, minimumShare: Double) -> Int? {
        guard points > 0, repetition < maximumRepetition * Double(points),
            Double(longerPoints) >= minimumShare * Double(points)
        else { return nil }
        return Int((Double(longerLags) / Double(longerPoints)).rounded())
    }
}
