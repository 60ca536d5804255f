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

    /// Adds one grid point of the set: `repetition` is the NSDF at the set's period, `longerPeriod` the tracker's
    /// period when it holds one clearly at such a ratio (nil otherwise).
    mutating func add(repetition: Double, longerPeriod: Int?) {
        points += 1
        self.repetition += repetition
        if let longerPeriod {
            longerPoints += 1
            longerLags += longerPeriod
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
