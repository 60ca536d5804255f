/// The rep detector's settings. One configuration serves every exercise; the defaults are the documented ones.
///
/// Time constants are in seconds of sample time, so the detector behaves the same at 12.5 Hz and at 1.6 kHz.
public struct RepDetectorConfiguration: Sendable, Equatable {
    /// Gravity is tracked by a low-pass filter with this time constant and subtracted (default 1.0 s).
    public var gravityTimeConstant: Double = 1.0
    /// Two cascaded low-pass stages with this time constant smooth the motion (default 0.08 s, about 2 Hz).
    public var smoothingTimeConstant: Double = 0.08
    /// The axis of motion is the principal axis of the last second or so of motion (default 1.0 s).
    public var axisTimeConstant: Double = 1.0
    /// The signal level that scales the threshold is averaged over this time (default 1.5 s).
    public var levelTimeConstant: Double = 1.5
    /// A sample adds at most this many times the current level to the level (default 2): one large movement, such
    /// as getting into position before a set, does not raise the threshold above the reps that follow it.
    public var levelOutlierLimit: Double = 2
    /// Outside a set, a swing counts when it passes `sensitivity` × the signal's RMS level (default 0.9; lower
    /// counts smaller movements).
    public var sensitivity: Double = 0.9
    /// Inside a set, a swing counts when it passes this fraction of the set's typical half swing (default 0.5).
    public var setThresholdFraction: Double = 0.5
    /// Swings smaller than this, in g, never count: the noise floor (default 0.02 g).
    public var minimumAmplitude: Double = 0.02
    /// The shortest rep period (default 0.25 s, 4 reps per second).
    public var minimumRepPeriod: Double = 0.25
    /// The longest rep period (default 8 s: slow, controlled physiotherapy reps of 5–6 s still fit with room for
    /// tempo variation).
    public var maximumRepPeriod: Double = 8
    /// A set starts when this many reps in a row are rhythmic (default 3); they are counted then, with their own
    /// timestamps, and earlier reps of the same rhythm found in the recent signal are counted too.
    public var repsToStartSet: Int = 3
    /// The longest of those reps may last at most this many times the shortest (default 1.4).
    public var rhythmTolerance: Double = 1.4
    /// Inside a set, a rep may take up to this many times the set's typical period, or its last period if longer
    /// (default 1.8); after a longer pause the set goes on only once its rhythm is established anew.
    public var maximumPauseFactor: Double = 1.8
    /// Inside a set, a swing that comes sooner than this fraction of the typical period is part of the same rep
    /// (a second bump of one rep), not a new rep (default 0.55).
    public var harmonicFactor: Double = 0.55
    /// A set ends after this much time without a rep (default 8 s).
    public var restToEndSet: Double = 8
    /// A gap in the samples longer than this restarts the filters (default 1 s); the set goes on.
    public var gapToReset: Double = 1
    /// When a set starts, the recent signal is searched this many periods back for its earlier reps (default 2.5).
    public var lookbackPeriods: Double = 2.5
    /// In that search a swing counts when it passes this fraction of the set's typical half swing (default 0.3,
    /// below `setThresholdFraction`: the first reps of a set are often smaller than the ones that establish it).
    public var lookbackThresholdFraction: Double = 0.3

    /// A set starts only when the signal over its first `repsToStartSet` reps correlates with itself one period
    /// earlier at least this much (normalized correlation; 0 turns the check off; default 0.4). Reps look alike,
    /// fidgets that happen to fall into step for a few swings do not.
    public var minimumPeriodicity: Double = 0.4
    /// A set does not start when its first reps move like walking at least this much (default 0.5; 1 turns the
    /// check off). Walking swings the arm once per stride and bounces the body once per step. For a rhythm as long
    /// as a stride (0.7–1.5 s), the measure is how much the vertical motion (along gravity) resembles itself half a
    /// period earlier; for one as long as a step (0.35–0.75 s), the lesser of how much the vertical motion resembles
    /// itself one period earlier and how much the motion across gravity is reversed one period later (normalized
    /// correlations). A rep moves down and up once per period and repeats itself every way.
    public var maximumStepSimilarity: Double = 0.5
    /// The step check applies only when the vertical motion's mean square is at least this fraction of the motion
    /// along the principal axis (default 0.05): a rep that hardly moves up and down has nothing to judge.
    public var minimumStepShare: Double = 0.05

    /// The defaults.
    public init() {}

    /// Checks every value and says which one is wrong and what is allowed.
    public func validate() throws(RepDetectorConfigurationError) {
        func positive(_ value: Double, _ name: String) throws(RepDetectorConfigurationError) {
            guard value.isFinite, value > 0 else { throw .init(key: name, value: value, allowed: "a number > 0") }
        }
        try positive(gravityTimeConstant, "gravityTimeConstant")
        try positive(smoothingTimeConstant, "smoothingTimeConstant")
        try positive(axisTimeConstant, "axisTimeConstant")
        try positive(levelTimeConstant, "levelTimeConstant")
        guard levelOutlierLimit.isFinite, levelOutlierLimit >= 1 else {
            throw .init(key: "levelOutlierLimit", value: levelOutlierLimit, allowed: "a number ≥ 1")
        }
        try positive(sensitivity, "sensitivity")
        try positive(minimumAmplitude, "minimumAmplitude")
        try positive(minimumRepPeriod, "minimumRepPeriod")
        try positive(restToEndSet, "restToEndSet")
        try positive(gapToReset, "gapToReset")
        guard setThresholdFraction.isFinite, setThresholdFraction > 0, setThresholdFraction <= 1 else {
            throw .init(key: "setThresholdFraction", value: setThresholdFraction, allowed: "a number in (0, 1]")
        }
        guard lookbackThresholdFraction.isFinite, lookbackThresholdFraction > 0, lookbackThresholdFraction <= 1 else {
            throw .init(key: "lookbackThresholdFraction", value: lookbackThresholdFraction, allowed: "a number in (0, 1]")
        }
        guard maximumRepPeriod.isFinite, maximumRepPeriod > minimumRepPeriod else {
            throw .init(key: "maximumRepPeriod", value: maximumRepPeriod, allowed: "a number > minimumRepPeriod")
        }
        guard (2...8).contains(repsToStartSet) else {
            throw .init(key: "repsToStartSet", value: Double(repsToStartSet), allowed: "a whole number from 2 to 8")
        }
        guard rhythmTolerance.isFinite, rhythmTolerance >= 1 else {
            throw .init(key: "rhythmTolerance", value: rhythmTolerance, allowed: "a number ≥ 1")
        }
        guard maximumPauseFactor.isFinite, maximumPauseFactor >= 1 else {
            throw .init(key: "maximumPauseFactor", value: maximumPauseFactor, allowed: "a number ≥ 1")
        }
        guard harmonicFactor.isFinite, harmonicFactor >= 0, harmonicFactor < 1 else {
            throw .init(key: "harmonicFactor", value: harmonicFactor, allowed: "a number in [0, 1)")
        }
        guard lookbackPeriods.isFinite, lookbackPeriods >= 0, lookbackPeriods <= 10 else {
            throw .init(key: "lookbackPeriods", value: lookbackPeriods, allowed: "a number from 0 to 10")
        }
        guard maximumStepSimilarity.isFinite, maximumStepSimilarity > 0, maximumStepSimilarity <= 1 else {
            throw .init(key: "maximumStepSimilarity", value: maximumStepSimilarity, allowed: "a number in (0, 1]")
        }
        guard minimumStepShare.isFinite, minimumStepShare >= 0 else {
            throw .init(key: "minimumStepShare", value: minimumStepShare, allowed: "a number >= 0")
        }
        guard minimumPeriodicity.isFinite, minimumPeriodicity >= 0, minimumPeriodicity < 1 else {
            throw .init(key: "minimumPeriodicity", value: minimumPeriodicity, allowed: "a number in [0, 1) (0 turns the check off)")
        }
        guard restToEndSet >= maximumRepPeriod else {
            throw .init(key: "restToEndSet", value: restToEndSet, allowed: "a number ≥ maximumRepPeriod")
        }
    }
}

/// A detector setting that is out of range.
public struct RepDetectorConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting's name.
    public var key: String
    /// The value given.
    public var value: Double
    /// What is allowed.
    public var allowed: String

    /// Creates the error for `key` = `value`, saying what is allowed.
    public init(key: String, value: Double, allowed: String) {
        self.key = key
        self.value = value
        self.allowed = allowed
    }

    public var description: String { "\(key) = \(value) is not allowed: expected \(allowed)" }
}
