/// The rep detector's settings. One configuration serves every exercise, person and sensor placement; the defaults
/// are the documented ones (docs/DETECTOR.md says how each was chosen).
///
/// Time constants are in seconds of sample time, so the detector behaves the same at 12.5 Hz and at 1.6 kHz.
public struct RepDetectorConfiguration: Sendable, Equatable {
    /// Gravity is tracked by a low-pass filter with this time constant and subtracted (default 1.5 s).
    public var gravityTimeConstant: Double = 1.5
    /// Two cascaded low-pass stages with this time constant smooth the motion before it is resampled at 25 Hz
    /// (default 0.06 s).
    public var smoothingTimeConstant: Double = 0.06
    /// The shortest rep period tracked (default 0.25 s, 4 reps per second).
    public var minimumRepPeriod: Double = 0.25
    /// The longest rep period tracked (default 8 s: slow, controlled physiotherapy reps).
    public var maximumRepPeriod: Double = 8
    /// The periodicity of a lag is measured over at least this much motion, or one period when longer (default 1 s).
    public var minimumWindow: Double = 1
    /// Octave guard: the period is the shortest lag whose periodicity peak reaches this fraction of the highest peak
    /// (McLeod's key maxima; default 0.8). A press whose lockout adds a second bump has a weaker peak at half its
    /// period and a stronger one at the period: the period wins.
    public var keyMaximumFraction: Double = 0.8
    /// A set starts when the motion's periodicity (normalized 3-D autocorrelation at the tracked period, −1…1) stays
    /// at least this high (default 0.5) …
    public var minimumPeriodicity: Double = 0.5
    /// … for this long or half a period, whichever is longer, with a steady period (default 1 s).
    public var startHold: Double = 1
    /// The period may change by at most this factor while periodicity builds up (default 1.25).
    public var periodTolerance: Double = 1.25
    /// Inside a set, a cycle is a rep when the last period of motion matches the set's cycle template at least this
    /// much (normalized 3-D correlation of the shapes, default 0.6).
    public var minimumMatch: Double = 0.6
    /// When a set starts, the recent motion is searched this many periods back for its earlier reps (default 3) …
    public var lookbackPeriods: Double = 3
    /// … where a cycle counts when it matches at least this much (default 0.4: the first reps are often less alike).
    public var lookbackMatch: Double = 0.4
    /// When a set ends it is counted again, over all of it, with this match threshold (default 0.6).
    public var finalMatch: Double = 0.6
    /// Matched cycles closer than this fraction of the period are one rep (default 0.6).
    public var minimumCycleSeparation: Double = 0.6
    /// Motion whose RMS is below this, in g, never starts a set: the noise floor (default 0.015 g).
    public var minimumAmplitude: Double = 0.015
    /// Walking: for a period as long as a stride (`walkingPeriods`), the motion along gravity repeats every half
    /// period (a step) while the motion across it reverses (the arm swings back). When the lesser of the first
    /// correlation minus the second and twice the first (for a step-long period judged as half a stride, also −2 times
    /// the second) reaches this (−2…2; default 0.3), the rhythm is walking, not reps; with the exercise gate on, a moment
    /// the gate judges exercise with 0.8 or more (or cannot judge yet) is walking only from 0.8 (`RepDetector.isWalking`).
    public var maximumWalkingLikeness: Double = 0.3
    /// The periods judged as strides (default 0.8–1.7 s: 70–150 steps a minute).
    public var walkingPeriodLow: Double = 0.8
    /// See `walkingPeriodLow`.
    public var walkingPeriodHigh: Double = 1.7
    /// The walking check judges only motion whose RMS is at most this, in g (default 1 g): a wrist on a walk moves
    /// by a few tenths of a g, jumping jacks and rope skipping (which also bounce twice per arm cycle) by 1–2 g.
    public var walkingMaximumRMS: Double = 1.0
    /// The walking check needs at least this share of the motion along gravity (default 0.1).
    public var minimumVerticalShare: Double = 0.1
    /// The exercise gate: a shallow decision tree that tells how likely periodic motion is exercise rather than gait or everyday
    /// movement, from features of the last few periods (`ExerciseGateFeatures`; default the model trained by
    /// `scripts/train-gate`, docs/DETECTOR.md). Not a configuration key.
    public var exerciseGate: ExerciseGateModel = .trained
    /// The exercise gate's threshold; 0 turns the gate off. A moment of periodic motion whose probability of exercise
    /// is below it is refused: no set starts within 4 s of a moment refused with confidence (below 0.15 times it) or
    /// 2.5 s of one refused unsure, no rep is counted live while the smoothed probability is below half of it, and a
    /// set whose moments average below 2 times it (2.75 times with 40 % of them refused), or whose final count is
    /// below 3 (4 when its period is 5 s or more), is dismissed at its end (judgements after its last rep at a pace
    /// over 3 times slower or faster are left out). Steady clean repetition, slow strong repetition, level repetition
    /// (a wrist that only tilts) and vertical repetition (a wrist held still on a body that rises and sinks) are never
    /// refused (`ExerciseGateFeatures.isSteadyRepetition`); any other moment too small for its pace to be a rep (under
    /// 1 mm either way), with gait's signature, with an arm swing at a stride's period without steps (smooth, or
    /// jolted and swinging back like a pendulum), or with a slow stride's two steps bouncing the wrist alike, is
    /// refused with confidence (`isTooSmallForItsPace`, `isGait`, `isArmSwing`, `isStrideSwing`, `isStrideBounce`;
    /// judged 0); a jump rope's rhythm that none of them refuses (one landing a turn, `isJumpRhythm`) passes.
    /// Default 0.2 with the sensor on a wrist or arm, chosen held out by `scripts/train-gate` (docs/DETECTOR.md, "The
    /// exercise gate"); 0 with `placement` `bar`, until set: the gate was trained on wrists, a bar never walks, and
    /// the gate dismisses every set of one or two reps (a lifter's heavy doubles).
    /// Configuration key `minimum_exercise_likelihood`; `repctl eval --minimum-exercise-likelihood` measures others.
    public var minimumExerciseLikelihood: Double {
        get { exerciseLikelihoodSetting ?? (placement == .bar ? 0 : Self.wristMinimumExerciseLikelihood) }
        set { exerciseLikelihoodSetting = newValue }
    }
    /// Whether `minimumExerciseLikelihood` was set (in code or a configuration file), rather than taken from the
    /// placement's default: a file written for a wrist that sets it keeps the gate on when its placement becomes `bar`.
    public var isMinimumExerciseLikelihoodSet: Bool { exerciseLikelihoodSetting != nil }
    /// `minimumExerciseLikelihood`'s default on a wrist or arm.
    private static let wristMinimumExerciseLikelihood = 0.2
    /// `minimumExerciseLikelihood` as set; nil takes the placement's default.
    private var exerciseLikelihoodSetting: Double?
    /// A set ends after this much time without a rep (default 8 s).
    public var restToEndSet: Double = 8
    /// A gap in the samples up to this long is bridged (default 4 s); a longer one restarts the tracker (the set
    /// stays open until `restToEndSet`).
    public var gapToReset: Double = 4
    /// Where the sensor sits (default `wrist`): `bar` claims range of motion and velocities, `wrist` and `arm` the
    /// tempo only. On a `bar` the exercise gate is off unless `minimumExerciseLikelihood` is set.
    public var placement: SensorPlacement = .wrist
    /// How the vertical acceleration is taken for quality (default `magnitude`; `projection` for comparisons, not
    /// a configuration key).
    public var verticalAcceleration: VerticalAcceleration = .magnitude
    /// Below this sample rate no velocity is claimed (default 40 Hz, chosen from docs/QUALITY.md; not a
    /// configuration key: 0 measures at any rate, for comparisons).
    public var minimumVelocityRate = 40.0

    /// The defaults.
    public init() {}

    /// Checks every value and says which one is wrong and what is allowed.
    public func validate() throws(RepDetectorConfigurationError) {
        func positive(_ setting: Setting) throws(RepDetectorConfigurationError) {
            let value = self[keyPath: setting.keyPath]
            guard value.isFinite, value > 0 else { throw .init(setting, value: value, allowed: "a number > 0") }
        }
        func fraction(_ setting: Setting) throws(RepDetectorConfigurationError) {
            let value = self[keyPath: setting.keyPath]
            guard value.isFinite, value > 0, value < 1 else {
                throw .init(setting, value: value, allowed: "a number between 0 and 1 (exclusive)")
            }
        }
        guard gravityTimeConstant.isFinite, (0.2...30).contains(gravityTimeConstant) else {
            throw .init(.gravityTimeConstant, value: gravityTimeConstant, allowed: "a number from 0.2 to 30")
        }
        guard smoothingTimeConstant.isFinite, (0.005...0.5).contains(smoothingTimeConstant) else {
            throw .init(.smoothingTimeConstant, value: smoothingTimeConstant, allowed: "a number from 0.005 to 0.5")
        }
        guard minimumRepPeriod.isFinite, (0.1...2).contains(minimumRepPeriod) else {
            throw .init(.minimumRepPeriod, value: minimumRepPeriod, allowed: "a number from 0.1 to 2")
        }
        guard maximumRepPeriod.isFinite, maximumRepPeriod > minimumRepPeriod, maximumRepPeriod <= 12 else {
            throw .init(.maximumRepPeriod, value: maximumRepPeriod, allowed: "a number > minimumRepPeriod, at most 12")
        }
        guard minimumWindow.isFinite, (0.2...4).contains(minimumWindow) else {
            throw .init(.minimumWindow, value: minimumWindow, allowed: "a number from 0.2 to 4")
        }
        try fraction(.keyMaximumFraction)
        try fraction(.minimumPeriodicity)
        try positive(.startHold)
        guard periodTolerance.isFinite, periodTolerance >= 1 else {
            throw .init(.periodTolerance, value: periodTolerance, allowed: "a number ≥ 1")
        }
        try fraction(.minimumMatch)
        guard lookbackPeriods.isFinite, lookbackPeriods >= 0, lookbackPeriods <= 10 else {
            throw .init(.lookbackPeriods, value: lookbackPeriods, allowed: "a number from 0 to 10")
        }
        try fraction(.lookbackMatch)
        try fraction(.finalMatch)
        try fraction(.minimumCycleSeparation)
        try positive(.minimumAmplitude)
        guard maximumWalkingLikeness.isFinite, maximumWalkingLikeness > -2, maximumWalkingLikeness <= 2 else {
            throw .init(
                .maximumWalkingLikeness, value: maximumWalkingLikeness,
                allowed: "a number in (-2, 2] (2 turns the check off)")
        }
        try positive(.walkingPeriodLow)
        guard walkingPeriodHigh.isFinite, walkingPeriodHigh > walkingPeriodLow else {
            throw .init(.walkingPeriodHigh, value: walkingPeriodHigh, allowed: "a number > walkingPeriodLow")
        }
        try positive(.walkingMaximumRMS)
        guard minimumVerticalShare.isFinite, minimumVerticalShare >= 0, minimumVerticalShare < 1 else {
            throw .init(.minimumVerticalShare, value: minimumVerticalShare, allowed: "a number from 0 to 1 (exclusive)")
        }
        guard exerciseGate.isValid else {
            throw .init(
                key: "exerciseGate", value: .nan,
                allowed: "a tree whose nodes each ask one of the \(ExerciseGateFeatures.count) features")
        }
        guard minimumExerciseLikelihood.isFinite, minimumExerciseLikelihood >= 0, minimumExerciseLikelihood < 1 else {
            throw .init(
                .minimumExerciseLikelihood, value: minimumExerciseLikelihood,
                allowed: "a number from 0 to 1 (exclusive)")
        }
        guard restToEndSet.isFinite, restToEndSet >= maximumRepPeriod, restToEndSet <= 3600 else {
            throw .init(.restToEndSet, value: restToEndSet, allowed: "a number ≥ maximumRepPeriod, at most 3600")
        }
        guard gapToReset.isFinite, gapToReset > 0, gapToReset <= 60 else {
            throw .init(.gapToReset, value: gapToReset, allowed: "a number > 0, at most 60")
        }
    }
}

extension RepDetectorConfiguration {
    /// The numeric settings, each a configuration key (`[detector]`), that `validate()` checks: what a
    /// `RepDetectorConfigurationError` names, so that a configuration file can map it back to its own key.
    public enum Setting: String, Sendable, Equatable, CaseIterable {
        case gravityTimeConstant, smoothingTimeConstant, minimumRepPeriod, maximumRepPeriod, minimumWindow
        case keyMaximumFraction, minimumPeriodicity, startHold, periodTolerance, minimumMatch, lookbackPeriods
        case lookbackMatch, finalMatch, minimumCycleSeparation, minimumAmplitude, maximumWalkingLikeness
        case walkingPeriodLow, walkingPeriodHigh, minimumVerticalShare, walkingMaximumRMS, restToEndSet, gapToReset
        case minimumExerciseLikelihood

        /// The property the setting is (its name is the `rawValue`).
        public var keyPath: WritableKeyPath<RepDetectorConfiguration, Double> {
            switch self {
            case .gravityTimeConstant: \.gravityTimeConstant
            case .smoothingTimeConstant: \.smoothingTimeConstant
            case .minimumRepPeriod: \.minimumRepPeriod
            case .maximumRepPeriod: \.maximumRepPeriod
            case .minimumWindow: \.minimumWindow
            case .keyMaximumFraction: \.keyMaximumFraction
            case .minimumPeriodicity: \.minimumPeriodicity
            case .startHold: \.startHold
            case .periodTolerance: \.periodTolerance
            case .minimumMatch: \.minimumMatch
            case .lookbackPeriods: \.lookbackPeriods
            case .lookbackMatch: \.lookbackMatch
            case .finalMatch: \.finalMatch
            case .minimumCycleSeparation: \.minimumCycleSeparation
            case .minimumAmplitude: \.minimumAmplitude
            case .maximumWalkingLikeness: \.maximumWalkingLikeness
            case .walkingPeriodLow: \.walkingPeriodLow
            case .walkingPeriodHigh: \.walkingPeriodHigh
            case .minimumVerticalShare: \.minimumVerticalShare
            case .walkingMaximumRMS: \.walkingMaximumRMS
            case .restToEndSet: \.restToEndSet
            case .gapToReset: \.gapToReset
            case .minimumExerciseLikelihood: \.minimumExerciseLikelihood
            }
        }
    }
}

/// A detector setting that is out of range.
public struct RepDetectorConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The setting's name (the property's, e.g. `minimumRepPeriod`).
    public var key: String
    /// The setting, when `key` names one of the numeric ones (nil for `exerciseGate`).
    public var setting: RepDetectorConfiguration.Setting? { RepDetectorConfiguration.Setting(rawValue: key) }
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

    /// Creates the error for `setting` = `value`, saying what is allowed.
    public init(_ setting: RepDetectorConfiguration.Setting, value: Double, allowed: String) {
        self.init(key: setting.rawValue, value: value, allowed: allowed)
    }

    /// `key = value is not allowed: expected …`.
    public var description: String { "\(key) = \(value) is not allowed: expected \(allowed)" }
}
