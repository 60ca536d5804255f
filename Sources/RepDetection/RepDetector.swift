import MotionCore

/// A streaming rep counter that tracks the period of the 3-D motion. Feed it samples in time order; it appends events
/// as they happen.
///
/// How it counts (docs/DETECTOR.md has the whole story and the measured figures):
/// 1. **Motion.** Gravity is tracked by a slow low-pass filter and subtracted from the smoothed acceleration; the
///    motion is resampled on a regular 25 Hz grid (`MotionGrid`), whatever the sensor's rate (12.5 Hz–1.6 kHz).
/// 2. **Period.** `PeriodTracker` keeps the normalized 3-D autocorrelation of the motion for every lag from
///    `minimumRepPeriod` to `maximumRepPeriod`; the period is the shortest lag whose peak comes close to the highest
///    (an octave guard: the second bump of a press lockout is a harmonic, not a rep). No axis is chosen: the sensor
///    may sit any way on any body part.
/// 3. **Set start.** When the periodicity stays at least `minimumPeriodicity` for `startHold` (or half a period) with
///    a steady period and the motion is above the noise floor, a set starts. Its cycle template is the last period of
///    motion; the motion before it is matched against the template, and the cycles found there (up to
///    `lookbackPeriods` back, matching at least `lookbackMatch`) are counted at once with their own times.
/// 4. **Reps.** Inside a set, each new point's last period of motion is matched against the template; a peak of the
///    match of at least `minimumMatch`, at least `minimumCycleSeparation` periods after the previous rep, is a rep,
///    announced one grid point (40 ms) after the cycle completed. The template follows the set slowly (each rep moves
///    it a fifth of the way) and so does the period.
/// 5. **Walking** is periodic too. For a period as long as a stride, walking's motion along gravity repeats every
///    half period (one step each foot) while the arm's motion across gravity reverses; a rep does neither. Such a
///    rhythm (`isWalking`) neither starts a set nor counts as a rep.
/// 6. **Set end.** A set ends after `restToEndSet` without a rep, at `finish()` or `reset`. It is then counted again
///    over its whole length with a template averaged over all its reps (`finalMatch`): `setEnded` carries that
///    count, and the count announced live when it differs.
///
/// The detector reads no clock and allocates nothing per sample in steady state (only when a set starts or ends).
/// Samples whose time does not advance, and samples that are not plausible (`MotionSample.isPlausible`: a value that
/// is not finite, an acceleration beyond ±1000 g, a time beyond ±10¹² s), are ignored; a gap up to `gapToReset` is
/// bridged, a longer one restarts the tracker without ending the set.
public struct RepDetector: Sendable {
    /// The configuration in use.
    public let configuration: RepDetectorConfiguration

    /// Samples ignored because their time did not advance or they were not plausible (`MotionSample.isPlausible`).
    public private(set) var ignoredSamples = 0
    /// Reps counted since the start or the last reset (corrected by each set's final count): the `rep` events sent
    /// so far, not those the open set holds (`HeldSetEvents`).
    public var totalReps: Int { repsCounted - held.heldReps }
    /// The number of the current or last set (0 before the first).
    public private(set) var setNumber = 0
    /// Whether a set is in progress.
    public var inSet: Bool { open }
    /// The tracked period after the last grid point, in seconds (0 when none), for plots and diagnostics.
    public private(set) var period = 0.0
    /// The motion's periodicity at that period (−1…1; 0 when walking-like), for plots and diagnostics.
    public private(set) var periodicity = 0.0
    /// Inside a set, how well the last period of motion matched the set's template (−1…1); nil outside a set.
    public private(set) var match: Double?
    /// The walking likeness after the last grid point, when judged (see `maximumWalkingLikeness`).
    public private(set) var walkingLikeness: Double?
    /// Whether the last grid point was judged walking: its walking likeness reached `maximumWalkingLikeness` and, with
    /// the exercise gate on, when the gate judged the moment exercise with a probability of at least
    /// `gateTrustedExercise` or cannot judge it yet (the first seconds of a run of samples), also
    /// `gateTrustedWalkingLikeness`. Walking starts no set and counts no rep.
    public var isWalking: Bool {
        guard let likeness = walkingLikeness, likeness >= configuration.maximumWalkingLikeness else { return false }
        if gateThreshold > 0, (exerciseLikelihood ?? 1) >= Self.gateTrustedExercise {
            return likeness >= Self.gateTrustedWalkingLikeness
        }
        return true
    }
    /// The exercise gate's probability that the periodic motion is exercise (0…1), measured every fourth grid point
    /// while the gate is on and the motion is periodic; nil otherwise. Below `minimumExerciseLikelihood` the moment is
    /// refused: no set starts within `gateHoldOff` of it (`gateUnsureHoldOff` when it was refused unsure).
    public private(set) var exerciseLikelihood: Double?
    /// The features the gate judged last (for plots, traces and `scripts/train-gate`).
    public private(set) var gateFeatures: ExerciseGateFeatures?
    /// Grid points produced so far (25 per second of samples); plots sample the diagnostics when it changes.
    public var gridPoints: Int { grid.next }

    private static let spacing = MotionGrid.spacing

    /// The detector decides only at the points of its grid, whole multiples of this many seconds of sample time
    /// (0.04): samples that do not reach the next multiple cannot complete an event, so a pipeline may hold them
    /// until one does without delaying any event.
    public static let decisionInterval = MotionGrid.spacing

    // Conditioning.
    private var started = false
    private var origin = 0.0  // sample time of grid index 0
    private var lastTime = 0.0
    private var gravity = (0.0, 0.0, 0.0)
    private var smooth1 = (0.0, 0.0, 0.0)
    private var smooth2 = (0.0, 0.0, 0.0)
    private var lastMotion = (0.0, 0.0, 0.0)
    private var lastGravity = (0.0, 0.0, 0.0)
    private var cachedStep = -1.0
    private var alphaGravity = 0.0, alphaSmooth = 0.0

    // Tracking.
    private var grid = MotionGrid()
    private var tracker: PeriodTracker
    private var steps = StepRhythmTracker()
    private let minimumWindow: Int
    /// `configuration.minimumExerciseLikelihood`, read once: the configuration works it out from the placement.
    private let gateThreshold: Double
    private var runLag = 0.0  // 0: no run of steady periodicity
    private var picked = (lag: 0, periodicity: 0.0)
    private var lastWalking = Int.min / 2
    /// The pace of the last gait outside a set, held back when it goes on after a pause.
    private var pausedGait = PausedGait()
    private var retryAt = 0  // the next grid point at which a set whose template stopped matching may re-anchor
    /// Reps faster than this many grid points (0.4 s) are not counted again at the set's end: a template of fewer
    /// points is too coarse to place a 3 Hz cycle's edges (its live count is kept).
    static let shortestRecountedPeriod = 10
    /// A set whose period changed by more than this factor is not counted again at its end.
    static let steadyPaceRatio = 1.5
    /// `followTrackedPeriod`: the tracked period's periodicity must be at least this.
    static let wrongPeriodClarity = 0.8
    /// `followTrackedPeriod`: the periodicity at the set's own period must be below this fraction of the tracked
    /// period's (as the tracker's default `key_maximum_fraction`: with it, the tracker would not pick the set's period).
    /// Fixed, so that another `key_maximum_fraction` changes the tracker only.
    static let wrongPeriodFraction = 0.8
    /// `followTrackedPeriod`: the tracked period must be at least this many times the set's …
    static let wrongPeriodRatio = 1.3
    /// … and at most this many (a rep of four phases, pull, hold at lockout, lowering and rest on the floor, can
    /// start a set on a quarter of it: 4.1 on generated paused deadlifts; a set moves only when its own period is no
    /// longer periodic, which a group of like reps still is at each rep's period) …
    static let wrongPeriodMaximumRatio = 4.5
    /// … and not within this of twice it (a pair of alternating reps, rightly counted one by one).
    static let pairTolerance = 0.2
    /// `followTrackedPeriod`: the set's last two reps together must have lasted at most this share of the tracked
    /// period (two reps a tracked period; a set that slowed down has reps as long as it), and the last one must have
    /// ended within a tracked period. Either of the two may be the longer: on a template of a quarter of a paused
    /// deadlift, the pull and, 0.9 s later, the lowering matched, then nothing for the 3.6 s left of a 4.6 s rep.
    static let doubledPairShare = 1.25
    /// `followTrackedPeriod`: about twice the set's period (`pairTolerance`) is followed only when the motion did not
    /// repeat at the set's own period over the run, its NSDF there below this on average: the two sides of
    /// alternating lunges are alike (0.38–0.57 in ../shared), a deadlift's lowering is not its pull. Or when the live
    /// reps already came once a tracked period (a paused bench press, whose halves repeat too, on a template that
    /// matched once a rep).
    static let pairMaximumRepetition = 0.0
    /// `followTrackedPeriod`: a set whose live reps already come once a tracked period (a template that matches
    /// only the pull of each deadlift) is followed when the tracked period is at least this many times the set's; a
    /// set that slowed down by less keeps its period (the live template followed it).
    static let followedMinimumRatio = 1.5
    /// At the set's end: a set whose motion did not repeat at its own period (mean NSDF below this) while the tracker
    /// held a period `wrongPeriodRatio`–`wrongPeriodMaximumRatio` times longer at `setLongerShare` of its points or
    /// more is counted at that period (`SetPeriodTally`).
    static let setMaximumRepetition = 0.0
    /// See `setMaximumRepetition`.
    static let setLongerShare = 0.5
    /// `liveFollowedPeriod`: live reps at least this many times the set's period apart, over at least
    /// `liveFollowedMinimumReps` reps, make the set-end recount count at their median interval.
    static let liveFollowedRatio = 2.0
    /// See `liveFollowedRatio`.
    static let liveFollowedMinimumReps = 4
    /// At the end of the stream, a cycle at least this much done (and matching the template so far) is a rep.
    static let cutCycleShare = 0.7
    /// A cycle cut shorter than `cutCycleShare`, but at least this much done, is a rep when it matches the template
    /// so far and moves at least `cutCycleEnergy` as much as the template there: a lifter whose recording started or
    /// stopped a little later into the rep (tbe's heavy sets: three of the 14 that counted 4 of 5).
    static let shortCutCycleShare = 0.6
    /// The least energy, as a share of the template's over the same part, of a short cut cycle or of a piece that
    /// adds up with one at the other end.
    static let cutCycleEnergy = 0.5
    /// A piece cut by the stream's start or end that is not a rep by its share of a period is one when a window cut by
    /// the stream there, wherever it lies, holds at least this share of the template's energy in the piece and matches
    /// it (`finalMatch`) with at least `cutCycleEnergy` of its motion (`CycleTemplate.cutRepMatch`): the rep's
    /// movement is whole, only its rest is cut or shorter than the template's (tbe's heavy sets, whose recordings
    /// start and stop at a rep).
    static let cutRepCoverage = 0.7
    /// `cutRepCoverage` is tried only on a piece shorter than this many periods: a longer one is not the set's edge.
    static let cutRepLongestPiece = 1.25
    /// `cutRepCoverage`'s window may reach this share of a period past the piece into the first (last) counted
    /// cycle, where the recount's match peak placed that cycle's boundary late (early); only its points in the piece
    /// count towards the coverage.
    static let cutRepOverlap = 0.25
    /// At the end of the stream, a rep that ended on its last point may be this many periods after the last one.
    static let endedCycleStretch = 1.6
    /// `slowLastRep`: the motion after the last rep, up to where it comes to rest, lasts at least this many times the
    /// set's last rep interval …
    static let slowRepShortest = 0.75
    /// … and at most this many (as a rep that ended on the stream's last point) …
    static let slowRepLongest = endedCycleStretch
    /// … moves at least this share of the template's energy per point (a bar re-racked or set down after the set moves
    /// a few centimetres; the slow reps of generated deadlifts at 50 % velocity loss 0.46–0.70) …
    static let slowRepEnergy = 0.2
    /// … and matches the template under time warping at least this well (those slow reps 0.95–0.98; motion coming to
    /// rest after the sets of the three manifests, gate off, at most 0.88).
    static let slowRepMatch = 0.93
    /// The warping path's greatest drift from the diagonal, as a share of the lengths.
    static let slowRepBand = 0.25
    /// Seconds after a walking-like moment during which no set starts.
    static let walkingHoldOff = 3.0
    /// With the gate on, a moment it judges exercise with at least this probability is walking only from a walking
    /// likeness of `gateTrustedWalkingLikeness` (not `maximumWalkingLikeness`, 0.3): lunges, squats and rope skipping
    /// at the wrist bounce at each step of their cycle too, and the gate, trained on gait and sets, tells them apart
    /// better than the likeness does in between. Held out by `scripts/train-gate`: clean sets ±1 84 → 86 %, mixed MAE
    /// 4.12 → 4.02, true-0 recordings 95 % at 0 and 15 → 14 false reps an hour (docs/DETECTOR.md, "Walking or
    /// exercise"). At 0.6–0.7 a held-out WISDM walk counts 95; at 0.9 the clean sets gain nothing. While the gate
    /// cannot judge yet (it needs 3 s and a period of motion), a moment is treated as one it is sure of: a clean
    /// rope-skipping set that starts with its recording counts (0 → 6 of 5), and nothing else changes.
    static let gateTrustedExercise = 0.8
    /// See `gateTrustedExercise`. 1.2 let WISDM stairs count (92 → 85 % at 0).
    static let gateTrustedWalkingLikeness = 0.8
    private var runStart = 0
    /// The gate's probability smoothed over about a second of judgements (0 while the motion is not periodic).
    private var gateAverage = 0.0
    /// The gate's judgements of the set, in two parts: those made at another pace (the tracked period more than
    /// `gateSetPaceRatio` times the set's, or less than its inverse) since the set's last rep wait in
    /// `offPaceSinceRep` and join `setPaceGate`, which holds all the others, when a rep comes. A set whose motion the
    /// gate judged not to be exercise on average is dismissed at its end.
    private var setPaceGate = SetGateTally()
    private var offPaceSinceRep = SetGateTally()
    /// The last grid point where the gate refused the motion with confidence (its probability below
    /// `gateUnsureShare` of `minimumExerciseLikelihood`), and the last where it refused it unsure (below the threshold,
    /// at or above that share).
    private var lastRefusal = Int.min / 2
    private var lastUnsureRefusal = Int.min / 2
    /// No set starts within this long (s) of a moment the gate refused with confidence: gait's judgements flicker
    /// between steps and swings, and a walk's or a jog's rhythm must not start a set in the moments between (chosen
    /// with the other gate settings by `scripts/train-gate`, held out; docs/DETECTOR.md).
    static let gateHoldOff = 4.0
    /// A refused moment whose probability is at least this share of the threshold was refused unsure (0.03–0.2 at the
    /// default threshold: the built-in tree's leaves of 7–14 % exercise, where the first judgements of a short set
    /// fall while the gate's window still holds the moments before it). No set starts within `gateUnsureHoldOff` of it.
    static let gateUnsureShare = 0.15
    /// The hold-off (s) after a moment refused unsure. Held out by `scripts/train-gate`, with the dismissal below:
    /// true-0 recordings 91 → 92 % at 0 and 22 → 20 false reps an hour, clean sets the same (84 %), mixed MAE 4.65 →
    /// 4.51; `scripts/cross-validate`'s mixed MAE 4.62 → 4.75 (docs/DETECTOR.md). 2 s let a fidgeting rest of the
    /// generated slow asymmetric sets start a set.
    static let gateUnsureHoldOff = 2.5
    /// Inside a set, no rep is counted live while the smoothed probability is below this share of the threshold
    /// (gait took over).
    static let gateVetoShare = 0.5
    /// A set is dismissed at its end when its judgements average below this multiple of the threshold (gait that
    /// slipped through at its start, fidgeting), or below `gateRefusedDismissalMultiple` of it with at least
    /// `gateDismissalRefusedShare` of them refusals (docs/DETECTOR.md has the held-out figures).
    static let gateDismissalMultiple = 2.0
    /// See `gateDismissalMultiple`: a set the gate refused at times must average higher.
    static let gateRefusedDismissalMultiple = 2.75
    /// See `gateDismissalMultiple`.
    static let gateDismissalRefusedShare = 0.4
    /// A set is judged for its dismissal by at least this many of the gate's judgements (fewer: it is kept).
    static let gateDismissalMinimumJudgements = 4
    /// The dismissal leaves out the judgements made after the set's last rep at a pace more than this many times
    /// faster or slower than the set's (when at least `gateDismissalMinimumJudgements` are left): until the set ends
    /// (8 s after its last rep), the wrist does something else, which says nothing of the set (after a clean rope
    /// skipping set, a motion at 3–4 times its period that the gate refused). Gait at twice or half the set's period
    /// (stride and step) stays judged. `repctl eval` on the three manifests counts the same from 2.8 to 3.5; at 2.5 a
    /// WISDM recording of kicking a ball counts 5 (docs/DETECTOR.md, "Judged at the set's own pace").
    static let gateSetPaceRatio = 3.0
    /// With the gate on, a set whose final count is below this is dismissed at its end (its live reps taken back).
    /// Held out by `scripts/train-gate`: true-0 recordings 92 → 94 % at 0, 20 → 18 false reps an hour, clean sets the
    /// same, mixed MAE 4.45 → 4.43 (docs/DETECTOR.md). A real set of one or two reps (a heavy single or double) needs
    /// the gate off (`minimum_exercise_likelihood = 0`), the default with the sensor on a bar.
    static let gateMinimumSetReps = 3
    /// With the gate on, a set whose period is at least this long (s) must count one rep more than
    /// `gateMinimumSetReps`: three "reps" of 5 s or more are what standing up, walking a few metres, turning, walking
    /// back and sitting down look like (`scripts/sit-walk-sit`; docs/DETECTOR.md, "Sit, walk, turn, sit"). No clean
    /// or mixed set of the three manifests counts at a period this long.
    static let gateSlowSetPeriod = 5.0
    /// With the gate on, a set is dismissed at its end when its reps turn the wrist for good: the direction of
    /// gravity (the detector's slow estimate) at a rep's end differs from where it was at the rep's start by more than
    /// this angle (degrees), at the median of the set's reps. A rep brings the wrist back to where it started, so a
    /// repeated movement's orientation repeats one rep later whatever phase its ends fall at; standing up, turning and
    /// sitting down change it and keep it. Of the sets counted in the three manifests' exercise and everyday
    /// recordings (393 sets of 9 people), the largest median is 25°, 99 % are under 19° (docs/DETECTOR.md, "Reps that
    /// turn the wrist for good").
    static let gateTurnedRepDegrees = 30.0
    /// The cosine of `gateTurnedRepDegrees`.
    private static let gateTurnedRepCosine = cosine(gateTurnedRepDegrees * .pi / 180)
    /// A set whose period is at least this long (s) counts two reps a cycle when its cycle template's second half
    /// repeats the first, in shape (`pairedRepShapeRepetition`) and in how busy it is (`pairedRepEnergyRepetition`;
    /// `CycleTemplate.halfRepetition()`): live, by the template that matched (the first rep ending half a period
    /// before the cycle), and at its end, by the template averaged over the set. Alternating lunges whose two sides
    /// differ enough that the tracker takes the pair for the period. In the three manifests (469 sets), the cycles of 2.4 s
    /// or more that repeat so are four lunge sets' (3.6–4.0 s; shape 0.35–0.59, energy 0.34–0.84); no other such set's
    /// shape repeats by more than 0.13 (a rep's way down reverses on its way up). Generated barbell squats and bench
    /// presses (a rep, then a pause at the top) repeat their shape by up to 0.39, their energy by −0.19 at most.
    static let pairedRepPeriod = 2.4
    /// See `pairedRepPeriod`.
    static let pairedRepShapeRepetition = 0.25
    /// See `pairedRepPeriod`.
    static let pairedRepEnergyRepetition = 0.2
    /// A pair's two halves also dip alike: the height of the cycles matched so far (`MotionGrid.heightHalfRepetition`)
    /// must not reverse half a period later, as a paused squat's or bench press's does (up for one half, down for the
    /// other: −0.6 to −0.8 on 666 generated cycles with 1–2 s at the bottom), whose shape and energy can repeat there
    /// (0.41–0.49 and 0.25–0.51 with a 2 s pause: the way down's braking falls on the way up's drive). The real
    /// lunge sets' cycles: −0.28 (the first alone) to 0.98. With no cycle left in the grid it does not veto.
    static let pairedRepHeightRepetition = -0.45

    // The set.
    private var open = false
    /// Reps counted, including those the open set holds.
    private var repsCounted = 0
    /// The open set's events not sent yet.
    private var held = HeldSetEvents()
    private var setStart = 0
    private var setRuns = 0  // grid restarts during the set: its final count is then the live one
    private var setOrigin = 0
    private var lag = 0
    private var template: CycleTemplate
    private var reps: [Int] = []
    private var liveCount = 0
    private var previousSetEnd: Int?  // the last rep of the previous set
    private var startLag = 0  // the set's period when it started
    private var livePairedCycles = 0  // cycles of the set counted live as two reps (`isPaired`)
    private var pairedLive = false  // a cycle of the set was a pair of reps live (`isPaired`): the gate keeps the set
    private var trackedRun = TrackedPeriodRun()  // a clear period the set's template is not at
    private var periodTally = SetPeriodTally()
    private var rebased = false  // the set's period was found wrong and the set anchored again at the tracked one
    private var previousMatch = 0.0
    private var lastMatch = 0.0
    private var scratch: [Double] = []
    /// Working space of `isPaired`.
    private var cycleScratch: [Double] = []

    // Quality (tempo, range of motion, velocity) from the raw samples.
    private var quality: RepQualityAnalyzer
    private var lastRest: Double?  // where the set's previous rep ended (its rest), sample time
    private var lastMeasure: RepKinematics.Measure?
    private var fastestVelocity: Double?
    private var liveQualities: [RepQuality?] = []  // each live rep's, in order

    /// Creates a detector. The configuration must be valid (see `RepDetectorConfiguration.validate()`).
    public init(configuration: RepDetectorConfiguration = .init()) {
        precondition((try? configuration.validate()) != nil, "invalid RepDetectorConfiguration")
        self.configuration = configuration
        gateThreshold = configuration.minimumExerciseLikelihood
        let minimumLag = max(2, Int((configuration.minimumRepPeriod / Self.spacing).rounded()))
        let maximumLag = Int((configuration.maximumRepPeriod / Self.spacing).rounded())
        minimumWindow = Int((configuration.minimumWindow / Self.spacing).rounded())
        tracker = PeriodTracker(
            minimumLag: minimumLag, maximumLag: maximumLag, minimumWindow: minimumWindow,
            keyMaximumFraction: configuration.keyMaximumFraction)
        template = CycleTemplate(reserving: maximumLag * 2)
        reps.reserveCapacity(1024)
        scratch.reserveCapacity(grid.capacity)
        cycleScratch.reserveCapacity(maximumLag * 2)
        quality = RepQualityAnalyzer(
            placement: configuration.placement, method: configuration.verticalAcceleration,
            minimumVelocityRate: configuration.minimumVelocityRate)
    }

    /// Forgets everything: a new workout starts with set 1 and rep 1.
    public mutating func reset() {
        self = RepDetector(configuration: configuration)
    }

    /// Processes one sample, appending any events it completes to `events`.
    public mutating func process(_ sample: MotionSample, into events: inout [WorkoutEvent]) {
        let t = sample.timestamp
        // NaN fails every comparison, so this also refuses values that are not finite. One absurd value would swamp
        // the sliding sums (and a time past Int's range would trap computing its grid index).
        guard sample.isPlausible else {
            ignoredSamples += 1
            return
        }
        guard started else {
            started = true
            quality.record(sample)
            // Grid times are whole multiples of the spacing, not offsets from the first sample: a recording of a
            // stream, replayed, puts its reps at the same times as the live stream did.
            origin = (t / Self.spacing).rounded(.up) * Self.spacing
            lastTime = t
            gravity = (sample.ax, sample.ay, sample.az)
            smooth1 = gravity
            smooth2 = gravity
            lastMotion = (0, 0, 0)
            lastGravity = gravity
            if origin <= t {
                addGridPoint(motion: (0, 0, 0), down: Self.unit(gravity), into: &events)
            }
            return
        }
        let dt = t - lastTime
        guard dt > 0 else {
            ignoredSamples += 1
            return
        }
        quality.record(sample)
        if dt > configuration.gapToReset {
            // A long dropout: the filters and the tracker start again; the set stays open (the rest rule, in sample
            // time, ends it) and the grid's indices keep counting sample time.
            lastTime = t
            gravity = (sample.ax, sample.ay, sample.az)
            smooth1 = gravity
            smooth2 = gravity
            lastMotion = (0, 0, 0)
            lastGravity = gravity
            let index = Int(((t - origin) / Self.spacing).rounded(.up))
            advanceIdle(to: index, into: &events)
            grid.restart(at: index)
            tracker.reset()
            runLag = 0
            trackedRun.reset()
            if open { setRuns += 1 }
            return
        }
        if abs(dt - cachedStep) > 1e-6 * cachedStep { updateAlphas(dt) }
        gravity.0 += alphaGravity * (sample.ax - gravity.0)
        gravity.1 += alphaGravity * (sample.ay - gravity.1)
        gravity.2 += alphaGravity * (sample.az - gravity.2)
        smooth1.0 += alphaSmooth * (sample.ax - smooth1.0)
        smooth1.1 += alphaSmooth * (sample.ay - smooth1.1)
        smooth1.2 += alphaSmooth * (sample.az - smooth1.2)
        smooth2.0 += alphaSmooth * (smooth1.0 - smooth2.0)
        smooth2.1 += alphaSmooth * (smooth1.1 - smooth2.1)
        smooth2.2 += alphaSmooth * (smooth1.2 - smooth2.2)
        let motion = (smooth2.0 - gravity.0, smooth2.1 - gravity.1, smooth2.2 - gravity.2)
        // Resample: every grid time in (lastTime, t] gets the linear interpolation of motion and gravity.
        var gridTime = origin + Double(grid.next) * Self.spacing
        while gridTime <= t {
            let f = (gridTime - lastTime) / dt
            let m = (
                lastMotion.0 + f * (motion.0 - lastMotion.0), lastMotion.1 + f * (motion.1 - lastMotion.1),
                lastMotion.2 + f * (motion.2 - lastMotion.2)
            )
            let g = (
                lastGravity.0 + f * (gravity.0 - lastGravity.0), lastGravity.1 + f * (gravity.1 - lastGravity.1),
                lastGravity.2 + f * (gravity.2 - lastGravity.2)
            )
            addGridPoint(motion: m, down: Self.unit(g), into: &events)
            gridTime = origin + Double(grid.next) * Self.spacing
        }
        lastTime = t
        lastMotion = motion
        lastGravity = gravity
    }

    /// Processes samples in order.
    public mutating func process(_ samples: some Sequence<MotionSample>, into events: inout [WorkoutEvent]) {
        for sample in samples { process(sample, into: &events) }
    }

    /// Ends the stream: an open set is counted again over its whole length, closed and its `setEnded` appended.
    public mutating func finish(into events: inout [WorkoutEvent]) {
        if open { endSet(streamEnded: true, into: &events) }
    }

    // MARK: - Per grid point

    /// Appends a grid point, brings the period tracker (and, while the gate is on, the step rhythm) up to it, and
    /// runs the detector's step there.
    @inline(__always)
    private mutating func addGridPoint(
        motion: (Double, Double, Double), down: (Double, Double, Double), into events: inout [WorkoutEvent]
    ) {
        grid.append(motion: motion, down: down)
        tracker.update(grid)
        if gateThreshold > 0 { steps.update(grid) }
        step(into: &events)
    }

    private mutating func step(into events: inout [WorkoutEvent]) {
        let i = grid.next - 1
        let c = configuration
        // The period is picked every other grid point (every 80 ms): it moves slowly, and picking is half the cost.
        if i & 1 == 0 || grid.next - 1 == grid.origin { picked = tracker.pick() }
        var (k, clarity) = picked
        var window = max(k, minimumWindow)
        if k == 0 { window = minimumWindow }
        // A step-long period may be half a stride: judge the stride too. (Only periodic motion is judged: the rest
        // neither starts a set nor counts.)
        walkingLikeness =
            k > 0 && clarity >= c.minimumPeriodicity
            ? Self.larger(
                grid.walkingLikeness(at: i, lag: k, window: window, configuration: c),
                grid.walkingLikeness(
                    at: i, lag: 2 * k, window: max(2 * k, minimumWindow), halfStride: true, configuration: c))
            : nil
        // The exercise gate, every fourth point (160 ms) while the motion is periodic.
        if gateThreshold == 0 || k == 0 || clarity < c.minimumPeriodicity {
            // The gate is off (it costs nothing then), or the motion is not periodic.
            exerciseLikelihood = nil
            gateFeatures = nil
        } else if i & 3 == 0 || exerciseLikelihood == nil {
            gateFeatures = ExerciseGateFeatures.measure(grid, endingAt: i, lag: k, periodicity: clarity, steps: steps)
            exerciseLikelihood = gateFeatures.map { c.exerciseGate.judgement(of: $0) }
            if let p = exerciseLikelihood {
                gateAverage += 0.2 * (p - gateAverage)
                if p < Self.gateUnsureShare * gateThreshold {
                    lastRefusal = i
                    if !open { pausedGait.noteRefusal(at: i, lag: k) }
                } else if p < gateThreshold {
                    lastUnsureRefusal = i
                }
                if open {
                    let refused = p < gateThreshold
                    if Self.within(Self.gateSetPaceRatio, k, lag) {
                        setPaceGate.add(p, refused: refused)
                    } else {
                        offPaceSinceRep.add(p, refused: refused)
                    }
                    // The judgement that makes the set's first `gateDismissalMinimumJudgements` sends the reps held
                    // since its start when they keep it; later, only a rep's judgements send held reps (`countCycle`).
                    // (A set counted in pairs holds nothing: `countCycle`.)
                    if setPaceGate.count == Self.gateDismissalMinimumJudgements, held.holding, gateKeepsSet {
                        held.release(into: &events)
                    }
                }
            }
        }
        if exerciseLikelihood == nil, i & 3 == 0 { gateAverage -= 0.2 * gateAverage }
        let walking = isWalking
        if walking {
            clarity = 0
            lastWalking = i
            if !open { pausedGait.noteWalking(at: i, lag: k) }
        } else if k == 0 || clarity < c.minimumPeriodicity {
            pausedGait.notePause()
        }
        period = Double(k) * Self.spacing
        periodicity = clarity

        if open {
            inSetStep(
                at: i, lag: k, clarity: clarity, walking: walking,
                into: &events)
            return
        }
        // Walking comes and goes as the arm's swing varies: no set starts within a few seconds of a walking moment.
        let afterWalking = Double(i - lastWalking) * Self.spacing <= Self.walkingHoldOff
        let steady =
            k > 0 && !afterWalking && clarity >= c.minimumPeriodicity
            && grid.rms(endingAt: i, window: window) >= c.minimumAmplitude
        if steady, runLag > 0, max(Double(k), runLag) / min(Double(k), runLag) <= c.periodTolerance {
            runLag = 0.8 * runLag + 0.2 * Double(k)
        } else if steady {
            runLag = Double(k)
            runStart = i
        } else {
            runLag = 0
        }
        // The gate: no set starts within a few seconds of a moment it refused (walking or fidgeting comes and goes),
        // or within a shorter while of one it refused unsure.
        let exercise =
            gateThreshold == 0
            || (Double(i - lastRefusal) * Self.spacing > Self.gateHoldOff
                && Double(i - lastUnsureRefusal) * Self.spacing > Self.gateUnsureHoldOff)
        // … nor from gait that paused and goes on at its pace (a walk of a few metres, a turn, the walk back).
        if runLag > 0, exercise, i >= retryAt, !pausedGait.holdsBack(at: i, lag: runLag),
            Double(i - runStart) * Self.spacing >= max(c.startHold, 0.5 * runLag * Self.spacing)
        {
            startSet(at: i, window: window, into: &events)
        }
    }

    private mutating func inSetStep(
        at i: Int, lag k: Int, clarity: Double, walking: Bool, into events: inout [WorkoutEvent]
    ) {
        let c = configuration
        var current = template.match(grid, endingAt: i)
        if walking { current = 0 }
        // Gait (or other motion the gate refuses) took over: no live reps while it lasts.
        if gateThreshold > 0, exerciseLikelihood != nil,
            gateAverage < Self.gateVetoShare * gateThreshold
        {
            current = 0
        }
        match = current
        let j = i - 1
        let last = reps.last ?? setStart
        if lastMatch >= c.minimumMatch, lastMatch >= previousMatch, lastMatch > current,
            Double(j - last) >= c.minimumCycleSeparation * Double(lag), j - lag + 1 >= grid.oldest
        {
            countCycle(at: j, previous: last, into: &events)
            template.blend(from: grid, endingAt: j, weight: 0.2)
            if k > 0, clarity >= c.minimumPeriodicity, Double(max(k, lag)) / Double(min(k, lag)) <= 1.3 {
                lag = Int((0.7 * Double(lag) + 0.3 * Double(k)).rounded())
                template.resample(to: lag)
            }
        }
        previousMatch = lastMatch
        lastMatch = current
        if k > 0 {
            // A clear period `wrongPeriodRatio`–`wrongPeriodMaximumRatio` times the set's: both rules below read it.
            let ratio = Double(k) / Double(lag)
            let longer =
                clarity >= Self.wrongPeriodClarity && ratio >= Self.wrongPeriodRatio
                && ratio <= Self.wrongPeriodMaximumRatio
            periodTally.add(repetition: tracker.nsdf[lag], longerPeriod: longer ? k : nil)
            if !rebased { followTrackedPeriod(at: i, lag: k, ratio: ratio, clarity: clarity, longer: longer) }
        }
        let sinceRep = i - (reps.last ?? setStart)
        if Double(sinceRep) * Self.spacing > restToEnd {
            endSet(into: &events)
        } else if k > 0, clarity >= c.minimumPeriodicity, Double(sinceRep) > 1.5 * Double(lag), i >= retryAt,
            Self.isNewPace(k, comparedTo: lag, tolerance: c.periodTolerance),
            // … and the motion is still as large as the set's (a third of its RMS: a rep 1.6 times slower at the same
            // depth accelerates 0.4 times as much), not the small movements of a rest.
            grid.rms(endingAt: i, window: max(k, minimumWindow))
                >= max(c.minimumAmplitude, template.amplitude / (2 * 2.0.squareRoot()) / 3)
        {
            retryAt = i + max(1, k / 2)
            reanchor(at: i, lag: k, window: max(k, minimumWindow), into: &events)
        }
    }

    /// A set that started on a wrong period: its template, shorter than a rep, matches twice a cycle (a deadlift's
    /// pull and its lowering), so every rep counts twice, or once with the recount at the set's end doubling it. When
    /// the tracker has held, for a whole length of it (`TrackedPeriodRun`), a clear period (`wrongPeriodClarity`)
    /// `wrongPeriodRatio`–`wrongPeriodMaximumRatio` times the set's, while the motion is no longer periodic at the
    /// set's own period (`wrongPeriodFraction`), and the set's last two reps came within about that period
    /// (`doubledPairShare`) or each as long as it (with the tracked period at least `followedMinimumRatio` times the
    /// set's), the set anchors again at the tracked period: the cycles found there replace the set's reps, so that
    /// the set-end recount counts them at that period (and is not held to the live count). The live reps already
    /// announced stay announced. About twice the set's period (`pairTolerance`) is followed only when the motion did
    /// not repeat at the set's period over the run (`pairMaximumRepetition`): alternating lunges whose sides differ
    /// are counted one by one, rightly, while the tracker takes the pair for the period.
    /// `ratio` is `k` over the set's period; `longer` says the tracker holds `k` clearly at such a ratio.
    private mutating func followTrackedPeriod(at i: Int, lag k: Int, ratio: Double, clarity: Double, longer: Bool) {
        guard longer, tracker.nsdf[lag] < Self.wrongPeriodFraction * clarity else {
            trackedRun.miss()
            return
        }
        let twice = abs(ratio - 2) < Self.pairTolerance
        guard trackedRun.note(at: i, lag: k, repetition: tracker.nsdf[lag], nearlyTwice: twice) else { return }
        // About twice a period at which the motion repeats can be a pair of alternating reps counted one by one:
        // followed only when the live reps already come once a tracked period (`once`), not two to it.
        let pairLike = trackedRun.nearlyTwice && trackedRun.meanRepetition >= Self.pairMaximumRepetition
        trackedRun.reset()
        // A set that slowed down has reps as long as the tracked period: the live template followed it. A set whose
        // reps stopped a while ago is not moved onto other motion.
        let n = reps.count, tracked = Double(k)
        guard n >= 3, i - reps[n - 1] <= k else { return }
        let doubled = Double(reps[n - 1] - reps[n - 3]) <= Self.doubledPairShare * tracked
        let once =
            ratio >= Self.followedMinimumRatio
            && Self.within(TrackedPeriodRun.tolerance, reps[n - 1] - reps[n - 2], k)
            && Self.within(TrackedPeriodRun.tolerance, reps[n - 2] - reps[n - 3], k)
        guard (doubled && !pairLike) || once else { return }
        // Live reps that came once a tracked period mark where its cycles may end.
        rebase(at: i, lag: k, reaching: 0, liveEnd: doubled ? nil : reps[n - 1])
    }

    /// Anchors the set again at period `k` from `i`, looking back at least `reaching` points: the cycles found there
    /// replace the set's reps, and the set-end recount counts at that period, not held to the live count. `liveEnd`:
    /// the last live rep, when the live reps already came once a period (`anchor`'s `liveEnd`).
    private mutating func rebase(at i: Int, lag k: Int, reaching: Int, liveEnd: Int? = nil) {
        guard
            let cycles = anchor(
                at: i, lag: k, window: max(k, minimumWindow), after: previousSetEnd, starting: true, reaching: reaching,
                firstRep: reps.first.map { $0 - startLag + k }, liveEnd: liveEnd)
        else { return }
        reps.removeAll(keepingCapacity: true)
        reps.append(contentsOf: cycles)
        startLag = lag
        rebased = true
    }

    /// The median interval between the set's live reps, when it is at least `liveFollowedRatio` times the set's period
    /// over `liveFollowedMinimumReps` reps or more: the template is part of a rep (one of a paused squat's two like
    /// halves) that matched once a rep live, and counted again at its own period it would match every part.
    private func liveFollowedPeriod() -> Int? {
        guard reps.count >= Self.liveFollowedMinimumReps else { return nil }
        let intervals = Self.sortedIntervals(reps)
        let median = intervals[intervals.count / 2]
        return Double(median) >= Self.liveFollowedRatio * Double(lag) ? median : nil
    }

    /// Whether the set kept its pace: its period at the end within `steadyPaceRatio` of its period at the start (a
    /// set that slowed towards failure, or changed pace, did not; a missed rep does not change the period).
    private func steadyPace() -> Bool {
        Self.within(Self.steadyPaceRatio, lag, startLag)
    }

    /// A set ends after `restToEndSet` without a rep, or two periods of its reps when that is longer (slow reps: a
    /// set of 6 s reps survives one missed rep).
    private var restToEnd: Double { max(configuration.restToEndSet, 2 * Double(lag) * Self.spacing) }

    /// Grid indices skipped by a long gap: the rest rule still applies in sample time.
    private mutating func advanceIdle(to index: Int, into events: inout [WorkoutEvent]) {
        guard open else { return }
        if Double(index - (reps.last ?? setStart)) * Self.spacing > restToEnd {
            endSet(into: &events)
        }
    }

    // MARK: - Sets

    private mutating func startSet(at i: Int, window: Int, into events: inout [WorkoutEvent]) {
        let candidateLag = Int(runLag.rounded())
        // The look-back never reaches into the previous set: its cycles were counted there.
        guard let cycles = anchor(at: i, lag: candidateLag, window: window, after: previousSetEnd, starting: true)
        else {
            return
        }
        runLag = 0
        open = true
        setStart = i
        startLag = lag
        setOrigin = grid.origin
        livePairedCycles = 0
        pairedLive = false
        trackedRun.reset()
        periodTally = SetPeriodTally()
        rebased = false
        setRuns = 0
        setNumber += 1
        held.startSet()
        reps.removeAll(keepingCapacity: true)
        liveCount = 0
        lastRest = nil
        lastMeasure = nil
        fastestVelocity = nil
        liveQualities.removeAll(keepingCapacity: true)
        setPaceGate = SetGateTally()
        offPaceSinceRep = SetGateTally()
        let first = cycles.first ?? i
        held.emit(
            .setStarted(SetEvent(setNumber: setNumber, timestamp: time(first - lag), repCount: cycles.count)),
            into: &events)
        count(cycles, at: i, into: &events)
    }

    /// Inside a set whose template no longer matches (the lifter changed pace, or the set started on a harmonic)
    /// while the motion is still periodic: a new template at the tracked period, and the cycles since the last rep.
    private mutating func reanchor(at i: Int, lag newLag: Int, window: Int, into events: inout [WorkoutEvent]) {
        let last = reps.last ?? setStart
        guard let cycles = anchor(at: i, lag: newLag, window: window, after: last, starting: false) else { return }
        count(cycles, at: i, into: &events)
    }

    /// Takes the last `candidateLag` points before `i` as the cycle template, its period ending where the motion is
    /// quietest (a rep's rest position: the cycles it matches are whole reps, and a set's edges, rest before and
    /// after, make no half cycle), and finds the earlier cycles it matches: peaks of the match before that end,
    /// walking back while they follow each other within 1.6 periods and come after `after` (`chain`). `liveEnd`, the
    /// last of live reps that came once a period, is the other phase the cycles may end at. Returns those cycles'
    /// ends and the template's, in time order; nil when there is not enough history.
    private mutating func anchor(
        at i: Int, lag candidateLag: Int, window: Int, after: Int?, starting: Bool, reaching: Int = 0,
        firstRep: Int? = nil, liveEnd: Int? = nil
    ) -> [Int]? {
        let c = configuration
        guard candidateLag > 1, i - candidateLag + 1 >= grid.oldest else { return nil }
        var end = i - candidateLag + 1 + CycleTemplate.quietestOffset(grid, endingAt: i, length: candidateLag)
        // How far back the cycles before the template are looked for (and where the motion's onset may lie): at
        // least `reaching` points (a whole set counted again at another period).
        let lookback = max(Int((c.lookbackPeriods + 2) * Double(candidateLag)) + window, reaching)
        // A set that starts from stillness starts its first rep where the motion begins: its cycles end a whole
        // number of periods after that (this decides between two equally quiet points, as a sine has).
        var setRest: Int?
        if starting, let onset = grid.onset(before: i, lag: candidateLag, lookback: lookback) {
            let periods = (i - onset.nearest) / candidateLag
            if periods >= 1 { end = onset.nearest + periods * candidateLag }
            // The nearest still moment can be a pause inside the first rep (the bottom of a paused squat), the rest
            // before the set less than a period before it: when the rest puts the cycles' ends more than a quarter
            // period away, its phase wins. A set anchored again later looks for that rest where it began and projects
            // the phase from there, over several periods (where the tracked period is off the reps' pace, the error
            // adds up: one of 864 generated standard barbell sets, a deadlift slowing by half, lost a rep so).
            var rest = onset.rest
            if let firstRep, firstRep < i {
                rest = grid.onset(before: firstRep, lag: candidateLag, lookback: lookback)?.rest
            }
            setRest = rest ?? onset.nearest
            if let rest, rest < onset.nearest {
                let periods = (i - rest) / candidateLag
                let fromRest = rest + periods * candidateLag
                let offset = abs(fromRest - end) % candidateLag
                if periods >= 1, min(offset, candidateLag - offset) * 4 > candidateLag { end = fromRest }
            }
        }
        guard end - candidateLag + 1 >= grid.oldest else { return nil }
        let separation = c.minimumCycleSeparation * Double(candidateLag)
        if let after, Double(end - after) < separation { return nil }
        lag = candidateLag
        var cycles = chain(endingAt: end, at: i, lookback: lookback, after: after)
        // Live reps that already came once a period end their cycles at another phase than the still moment's (more
        // than a quarter period away): the phase whose cycles, walking back, begin nearest where the set's rest ended
        // wins. Projected from the rest over several periods of a set that slowed down, the still moment's phase
        // drifts onto the middle of a rep, and its cycles stop matching a few reps back.
        if let liveEnd, let rest = setRest, liveEnd - candidateLag + 1 >= grid.oldest,
            after.map({ Double(liveEnd - $0) >= separation }) ?? true
        {
            let offset = abs(liveEnd - end) % candidateLag
            if min(offset, candidateLag - offset) * 4 > candidateLag {
                let live = chain(endingAt: liveEnd, at: i, lookback: lookback, after: after)
                if abs(live[0] - candidateLag - rest) < abs(cycles[0] - candidateLag - rest) {
                    cycles = live
                    end = liveEnd
                } else {
                    _ = chain(endingAt: end, at: i, lookback: lookback, after: after)
                }
            }
        }
        // The live peak search goes on from the match since `end` (the cycle ending there is counted).
        previousMatch = i > end + 1 ? scratch[scratch.count - 2] : 0
        lastMatch = i > end ? scratch[scratch.count - 1] : 0
        return cycles
    }

    /// The cycles a template of the set's `lag` points ending at `end` matches before it: peaks of the match, walking
    /// back while they follow each other within 1.6 periods and come after `after`; and `end`, in time order. Sets the
    /// template to those points, and `scratch` to its match from `lookback` before `end` up to `i`.
    private mutating func chain(endingAt end: Int, at i: Int, lookback: Int, after: Int?) -> [Int] {
        let c = configuration
        let separation = c.minimumCycleSeparation * Double(lag)
        template.set(from: grid, endingAt: end, length: lag)
        let low = max(grid.oldest + lag - 1, end - lookback, 1)
        scratch.removeAll(keepingCapacity: true)
        for j in low...i { scratch.append(template.match(grid, endingAt: j)) }
        var found: [Int] = []
        MatchPeaks.forEach(in: scratch, offset: low, upTo: end - 1, threshold: c.lookbackMatch, separation: separation)
        {
            found.append($0)
        }
        var cycles: [Int] = []
        var next = end
        for j in found.reversed() {
            if Double(next - j) > 1.6 * Double(lag) { break }
            if let after, Double(j - after) < separation { break }
            if Double(next - j) >= separation {
                cycles.append(j)
                next = j
            }
        }
        cycles.reverse()
        cycles.append(end)
        return cycles
    }

    /// Counts `cycles` (grid indices where reps ended) as reps of the open set.
    private mutating func count(_ cycles: [Int], at i: Int, into events: inout [WorkoutEvent]) {
        var previous = reps.last
        for j in cycles {
            countCycle(at: j, previous: previous, into: &events)
            previous = j
        }
    }

    /// Counts the cycle ending at `j` as a rep of the open set, or as two when the template is a pair of like reps
    /// (`isPaired`): the first ending half a period earlier.
    private mutating func countCycle(at j: Int, previous: Int?, into events: inout [WorkoutEvent]) {
        reps.append(j)
        setPaceGate.add(offPaceSinceRep)
        offPaceSinceRep = SetGateTally()
        // With the gate on, the judgements up to this rep decide whether it goes out (after any held before it) or
        // waits (`HeldSetEvents`): it goes out when they keep the set (`gateKeepsSet`), so the reps a set counts at
        // its start, before any judgement of it, wait for its first judgements (`step`). Holding a set until it also
        // had `minimumSetReps` reps was tried: its first reps then came 0.8 s later on average in tbe's clean sets,
        // for 36 → 32 live false reps an hour in WISDM (docs/DETECTOR.md, "Live reps the set's end would take back"
        // and "A set's first reps wait for its first judgements"). Once a cycle of the set was a pair of reps,
        // nothing more is held: the gate does not dismiss such a set (`endSet`). A set only the set-end recount finds
        // paired is kept at its end, its held reps sent then.
        let paired = isPaired(endingAt: reps)
        if paired { pairedLive = true }
        if gateThreshold > 0 {
            if !gateKeepsSet && !pairedLive {
                held.hold()
            } else {
                held.release(into: &events)
            }
        }
        var previous = previous
        var repLag = lag
        if paired {
            repLag = lag / 2
            let middle = j - repLag
            if previous.map({ middle > $0 }) ?? true {
                liveCount += 1
                livePairedCycles += 1
                countRep(at: middle, previous: previous, lag: repLag, into: &events)
                previous = middle
            }
        }
        liveCount += 1
        countRep(at: j, previous: previous, lag: repLag, into: &events)
    }

    /// With the gate on, the fewest reps a set may count: a slow set must count one more (three cycles of 5 s or
    /// more can be standing up, walking there and back and sitting down).
    private var minimumSetReps: Int {
        Self.gateMinimumSetReps + (Double(lag) * Self.spacing >= Self.gateSlowSetPeriod ? 1 : 0)
    }

    /// Whether the set's reps turn the wrist for good (`gateTurnedRepDegrees`): at the median of its reps (each from
    /// the rep before, the first one period long), the direction of gravity at the rep's end lies farther than that
    /// angle from where it was at its start. Reps whose start the grid no longer holds are left out.
    private var repsTurnTheWrist: Bool {
        var cosines: [Double] = []
        for (n, end) in reps.enumerated() {
            let start = n > 0 ? reps[n - 1] : end - lag
            guard start >= grid.oldest, start < end else { continue }
            cosines.append(grid.downCosine(start, end))
        }
        guard !cosines.isEmpty else { return false }
        cosines.sort()
        let m = cosines.count / 2
        let median = cosines.count % 2 == 1 ? cosines[m] : 0.5 * (cosines[m - 1] + cosines[m])
        return median < Self.gateTurnedRepCosine
    }

    /// Whether the gate's judgements of the open set dismiss it: judged without what the wrist did at another pace
    /// after the last rep, when enough judgements are left.
    private var gateDismissesSet: Bool {
        var judged = setPaceGate
        if judged.count < Self.gateDismissalMinimumJudgements { judged.add(offPaceSinceRep) }
        return gateThreshold > 0
            && judged.dismisses(
                threshold: gateThreshold, minimumCount: Self.gateDismissalMinimumJudgements,
                multiple: Self.gateDismissalMultiple, refusedMultiple: Self.gateRefusedDismissalMultiple,
                refusedShare: Self.gateDismissalRefusedShare)
    }

    /// Whether the gate's judgements of the open set keep it: at least `gateDismissalMinimumJudgements` of them (with
    /// fewer, a set is not dismissed at its end, but nor is it judged yet), and they do not dismiss it.
    private var gateKeepsSet: Bool {
        setPaceGate.count >= Self.gateDismissalMinimumJudgements && !gateDismissesSet
    }

    /// Whether the template is a pair of like reps: a period of at least `pairedRepPeriod` whose second half repeats
    /// the first in shape and energy (alternating lunges whose sides differ enough that the pair is the period).
    /// `ends`: the cycles it matched, whose height must not reverse half a period later (`pairedRepHeightRepetition`).
    private mutating func isPaired(endingAt ends: [Int]) -> Bool {
        guard Double(lag) * Self.spacing >= Self.pairedRepPeriod else { return false }
        let half = template.halfRepetition()
        guard half.shape >= Self.pairedRepShapeRepetition && half.energy >= Self.pairedRepEnergyRepetition else {
            return false
        }
        return grid.heightHalfRepetition(endingAt: ends, length: lag, scratch: &cycleScratch)
            >= Self.pairedRepHeightRepetition
    }

    private mutating func endSet(streamEnded: Bool = false, into events: inout [WorkoutEvent]) {
        let c = configuration
        var final = liveCount
        var pairs = false
        // The last two reps counted, and whether the recount counted a piece after them (a cycle cut by the stream's
        // end).
        var lastCycles: (Int, Int)?
        // The recount counted a piece cut by the stream at both ends as a whole rep (by any of its rules): it may then
        // exceed a steady live count by two (below).
        var bothEdges = false
        var endCounted = false
        // The gate judged the set's motion, on average, not to be exercise (gait that slipped through at its start):
        // it is dismissed, and its live reps are taken back; not when the set was counted in pairs (`isPaired`: a
        // period of 2.4 s or more whose halves repeat each other, which no stride has; alternating lunges with a step
        // in them, which the gate can take for gait). So is a set whose reps turned the wrist for good (standing up,
        // turning, sitting down: `repsTurnTheWrist`), paired or not.
        let gateDismisses = gateDismissesSet
        let turned = gateThreshold > 0 && repsTurnTheWrist
        // The whole set is counted again with one template of one period, so only when its pace was steady: a set
        // that slowed down (reps up to twice as long towards failure) keeps its live count, which followed the pace.
        // A set whose motion never repeated at its period, while the tracker held a longer one at half of its points
        // or more, is counted at that period (its template matched the pull and the lowering of each deadlift, but
        // the tracker's clear period came and went with every rep's rest on the floor). So is a set whose live reps came
        // twice its period apart or more (`liveFollowedPeriod`).
        if !rebased, reps.count >= 3, setRuns == 0, setOrigin == grid.origin, reps[0] - lag + 1 >= grid.oldest,
            let longer = periodTally.longerPeriod(
                maximumRepetition: Self.setMaximumRepetition, minimumShare: Self.setLongerShare) ?? liveFollowedPeriod()
        {
            let last = min(grid.next - 1, reps[reps.count - 1] + lag)
            rebase(at: last, lag: longer, reaching: last - reps[0] + 2 * longer)
        }
        if reps.count >= 2 { lastCycles = (reps[reps.count - 2], reps[reps.count - 1]) }
        if reps.count >= 2, setRuns == 0, setOrigin == grid.origin, reps[0] - lag + 1 >= grid.oldest, steadyPace(),
            lag >= Self.shortestRecountedPeriod
        {
            template.average(from: grid, endingAt: reps, length: lag)
            let low = max(grid.oldest + lag - 1, reps[0] - 2 * lag, 1)
            let high = min(grid.next - 1, reps[reps.count - 1] + lag)
            scratch.removeAll(keepingCapacity: true)
            for j in low...high { scratch.append(template.match(grid, endingAt: j)) }
            // Every peak of at least the look-back threshold; the strong ones (finalMatch) are reps, and so is a weaker
            // one that fills a gap of more than 1.25 periods between reps (a rep that moved a little differently).
            let separation = c.minimumCycleSeparation * Double(lag)
            var candidates: [Int] = []
            MatchPeaks.forEach(
                in: scratch, offset: low, upTo: high == grid.next - 1 ? high - 1 : high,
                threshold: c.lookbackMatch, separation: separation
            ) { candidates.append($0) }
            var strong: [Int] = []
            for j in candidates where scratch[j - low] >= c.finalMatch { strong.append(j) }
            var count = strong.count
            for (a, b) in zip(strong, strong.dropFirst()) where Double(b - a) > 1.25 * Double(lag) {
                var previous = a
                var filled = 0
                let room = max(1, Int((Double(b - a) / Double(lag)).rounded()) - 1)
                for j in candidates where j > a && j < b && filled < room {
                    if Double(j - previous) >= separation, Double(b - j) >= separation {
                        filled += 1
                        previous = j
                    }
                }
                count += filled
            }
            // Cycles cut short by the stream: a recording that starts or stops while the lifter moves. A piece at
            // least `cutCycleShare` of a period long that matches the template's start (end) is a rep, and so is one
            // of at least `shortCutCycleShare` that also moves at least half as much as the template there; so are
            // two short pieces at both ends that move that much and add up to `cutCycleShare` (the set's cycles
            // then only look cut in two because of where the template's period begins).
            let starts = grid.origin == 0 && grid.oldest == 0
            let head = starts ? max(0, (strong.first ?? reps[0]) - lag) : 0
            var tail = streamEnded ? grid.next - 1 - (strong.last ?? reps[reps.count - 1]) : 0
            // A rep that ended as the stream did (a recording stopped the moment the lifter got back): the match at
            // the last point is strong and still rising, a cycle after the last rep, or up to `endedCycleStretch`
            // of one (reps slow down towards the end of a hard set).
            let last = grid.next - 1
            if tail >= lag, Double(tail) <= Self.endedCycleStretch * Double(lag), last - lag >= grid.oldest {
                let atEnd = template.match(grid, endingAt: last)
                if atEnd >= c.finalMatch, atEnd > template.match(grid, endingAt: last - 1) {
                    count += 1
                    tail = 0
                    endCounted = true
                }
            }
            func piece(_ done: Int, _ period: Int, _ measured: (match: Double, energy: Double)) -> (
                whole: Bool, part: Bool
            ) {
                guard done > 1, done < period else { return (false, false) }
                let share = Double(done) / Double(period)
                let matches = measured.match >= c.finalMatch
                let moves = measured.energy >= Self.cutCycleEnergy
                let whole = matches && (share >= Self.cutCycleShare || (share >= Self.shortCutCycleShare && moves))
                let part = moves && (share < 0.3 || matches)
                return (whole, part)
            }
            var headPiece = piece(head, lag, template.suffixMatch(grid, endingAt: head, count: head))
            // Reps slow down through a hard set, so the piece before its first rep is also measured against the
            // interval between the first two reps the recount found (the set's pace at its start): a heavy set of five
            // whose first cycle is cut by the stream's start counts five.
            if starts, !headPiece.whole, strong.count >= 2 {
                let first = strong[1] - strong[0]
                let early = strong[0] - first
                let measured = template.suffixMatch(grid, endingAt: early, count: min(early, lag))
                headPiece.whole = piece(early, first, measured).whole
            }
            var tailPiece = piece(tail, lag, template.prefixMatch(grid, after: grid.next - 1 - tail, count: tail))
            // A piece that does not make a rep where the set's period puts it may hold a whole rep's movement whose
            // rest is cut or shorter: matched wherever it lies in the piece (`cutRepCoverage`).
            func cutRep(atStart: Bool, from lo: Int, to hi: Int, boundary: Int) -> Bool {
                let measured = template.cutRepMatch(
                    grid, atStart: atStart, from: lo, to: hi, boundary: boundary, coverage: Self.cutRepCoverage)
                return measured.match >= c.finalMatch && measured.energy >= Self.cutCycleEnergy
            }
            let overlap = Int(Self.cutRepOverlap * Double(lag))
            let longest = Self.cutRepLongestPiece * Double(lag)
            if starts, !headPiece.whole, head > 1, Double(head) < longest {
                headPiece.whole = cutRep(atStart: true, from: grid.oldest + 2, to: head + overlap, boundary: head)
            }
            if streamEnded, !tailPiece.whole, tail > 1, Double(tail) < longest {
                let lastRep = strong.last ?? reps[reps.count - 1]
                tailPiece.whole = cutRep(
                    atStart: false, from: lastRep + 1 - overlap, to: grid.next - 3, boundary: lastRep + 1)
            }
            bothEdges = headPiece.whole && tailPiece.whole
            if headPiece.whole { count += 1 }
            if tailPiece.whole { count += 1 }
            if !headPiece.whole, !tailPiece.whole, headPiece.part, tailPiece.part,
                Double(head + tail) >= Self.cutCycleShare * Double(lag)
            {
                count += 1
                endCounted = true
            }
            if tailPiece.whole { endCounted = true }
            if strong.count >= 2, let cycles = lastCycles, strong[strong.count - 1] > cycles.1 {
                lastCycles = (strong[strong.count - 2], strong[strong.count - 1])
            }
            // A slow cycle whose second half repeats its first is two reps: alternating sides (a left and a right
            // lunge) that differ enough for the tracker to take the pair as the period.
            pairs = isPaired(endingAt: reps)
            final = pairs ? 2 * count : count
        }
        // With the gate on, a set of fewer than `gateMinimumSetReps` is dismissed too: the sets of one or two reps that
        // everyday motion starts (kicking, standing, sitting) are half of the recordings without exercise that count.
        // The set's last rep, slowed towards failure until the template no longer matched it, and the motion then
        // came to rest (`slowLastRep`): not for pairs of reps, nor to lift a set over the gate's minimum.
        var setEnd = reps.last ?? setStart
        if !endCounted, !pairs, livePairedCycles == 0, let cycles = lastCycles,
            gateThreshold == 0 || final >= minimumSetReps,
            let rest = slowLastRep(after: cycles.1, interval: cycles.1 - cycles.0)
        {
            final += 1
            setEnd = max(setEnd, rest)
        }
        // A live count whose reps came at a steady pace is right within a rep: the recount may add a missed rep or
        // drop an edge piece, not undo half of it (a template averaged over asymmetric reps can match worse than
        // the live one that followed them). Not when the recount or the live count took cycles for pairs of reps.
        // It may add two when it counted a piece cut by the stream at each end as a whole rep (a recording of the set
        // alone, stopped and started within a rep).
        if final != liveCount, !rebased, liveCount >= 3, !pairs, livePairedCycles == 0, Self.steadyIntervals(reps) {
            final = min(max(final, liveCount - 1), liveCount + (bothEdges ? 2 : 1))
        }
        let dismissed = (gateDismisses && !pairs && !pairedLive) || turned
        if dismissed || (gateThreshold > 0 && final < minimumSetReps) { final = 0 }
        repsCounted += final - liveCount
        previousSetEnd = setEnd
        let lastTime = time(setEnd)
        // A kept set sends the reps it held before its end; a dismissed one drops them, and its end takes back only
        // the reps it sent.
        if final > 0 { held.release(into: &events) } else { held.drop() }
        events.append(
            .setEnded(
                SetEvent(
                    setNumber: setNumber, timestamp: lastTime, repCount: final,
                    liveRepCount: final == held.sentReps ? nil : held.sentReps, quality: setQuality())))
        open = false
        match = nil
        reps.removeAll(keepingCapacity: true)
        liveCount = 0
        runLag = 0
    }

    /// Where the motion after the set's last counted rep, which ended at `last` `interval` points after the one
    /// before, came to rest when it is one more rep that slowed too much for the template to match (a set to failure:
    /// a deadlift's last pull 1.6 times as long as its first, its lowering and pauses not); else nil. The motion comes
    /// to rest (`MotionGrid.rest(after:)`) within two periods, after `slowRepShortest`–`slowRepLongest` times that
    /// interval, moves at least `slowRepEnergy` as much per point as the template, and matches it at `slowRepMatch`
    /// or more when its phases may each take their own time (`CycleTemplate.warpedMatch`). Motion after a set that
    /// does not come to rest (a wrist after its set) is never such a rep.
    private func slowLastRep(after last: Int, interval: Int) -> Int? {
        guard interval > 0, lag > 2, let rest = grid.rest(after: last, lag: lag, within: 2 * lag) else { return nil }
        let share = Double(rest - last) / Double(interval)
        guard share >= Self.slowRepShortest, share <= Self.slowRepLongest else { return nil }
        let measured = template.warpedMatch(grid, from: last + 1, to: rest, band: Self.slowRepBand)
        return measured.energy >= Self.slowRepEnergy && measured.match >= Self.slowRepMatch ? rest : nil
    }

    /// Announces the rep that ended at `j`; `lag` is a rep's period (half the set's for a pair of reps).
    private mutating func countRep(at j: Int, previous: Int?, lag: Int, into events: inout [WorkoutEvent]) {
        repsCounted += 1
        let duration = previous.map { Double(j - $0) * Self.spacing } ?? Double(lag) * Self.spacing
        held.emit(
            .rep(
                RepEvent(
                    setNumber: setNumber, repInSet: liveCount, totalReps: repsCounted, timestamp: time(j),
                    duration: duration, amplitude: template.amplitude, quality: liveQuality(at: j, lag: lag))),
            into: &events)
    }

    // MARK: - Quality

    /// The grid's motion lags the raw samples by the two smoothing stages.
    private var smoothingDelay: Double { 2 * configuration.smoothingTimeConstant }

    /// The quality of the rep that ended at grid index `j`, from the raw samples held so far: its start is where
    /// the set's previous rep ended (the first rep's is searched a period before), its end the quietest moment
    /// near `j` (a rep's rest at its start position).
    private mutating func measureLive(at j: Int, lag: Int) -> RepQuality? {
        let period = Double(lag) * Self.spacing
        let end = time(j) - smoothingDelay
        guard
            let result = measureRep(
                start: lastRest ?? end - period, fixedStart: lastRest != nil, end: end, period: period,
                previous: lastMeasure, startsAtTop: lastRest != nil ? lastMeasure?.startsAtTop : nil)
        else {
            lastRest = nil
            lastMeasure = nil
            return nil
        }
        let (q, measure, rest) = result
        lastRest = rest
        lastMeasure = measure
        guard var q, let v = q.velocity?.meanConcentric else { return q }
        let fastest = max(fastestVelocity ?? v, v)
        fastestVelocity = fastest
        q.velocity?.loss = RepKinematics.loss(v, fastest: fastest)
        return q
    }

    /// The live rep's quality, kept for the set's end.
    private mutating func liveQuality(at j: Int, lag: Int) -> RepQuality? {
        let q = measureLive(at: j, lag: lag)
        liveQualities.append(q)
        return q
    }

    /// The set's quality: its reps' as measured when they were announced (each window ends at the rest after the
    /// rep, which the samples held then already show), a rep that could not be measured then measured again
    /// between the rests of its neighbours, and the velocity loss of each rep against the fastest before it.
    private mutating func setQuality() -> SetQuality? {
        var qualities: [RepQuality] = []
        var lastMeasured = false
        var previousEnd: Double?  // the end of rep k − 1, as measured live or again here
        for (k, live) in liveQualities.enumerated() {
            lastMeasured = false
            if let live {
                qualities.append(live)
                lastMeasured = true
                previousEnd = live.end
                continue
            }
            // The rest after it: where the next rep began, or (the set's last rep, announced before the bar came to
            // rest) searched a period after the rest before it, in the samples that came since.
            guard k > 0, let before = previousEnd else { continue }
            previousEnd = nil
            let period = Double(lag) * Self.spacing
            let after = k + 1 < liveQualities.count ? liveQualities[k + 1]?.start : nil
            guard
                let result = measureRep(
                    start: before, fixedStart: true, end: after ?? before + period,
                    period: after.map { $0 - before } ?? period,
                    previous: nil, startsAtTop: qualities.last?.startsAtTop),
                let q = result.0
            else { continue }
            qualities.append(q)
            lastMeasured = true
            previousEnd = q.end
        }
        guard !qualities.isEmpty else { return nil }
        var set = SetQuality(reps: qualities)
        // The set's velocity loss is its last rep's: without that rep's figures there is none.
        if !lastMeasured { set.velocityLoss = nil }
        return set
    }

    private mutating func measureRep(
        start: Double, fixedStart: Bool, end: Double, period: Double, previous: RepKinematics.Measure?,
        startsAtTop: Bool?
    ) -> (RepQuality?, RepKinematics.Measure, Double)? {
        guard
            let m = quality.measure(
                start: start, end: end, period: period, fixedStart: fixedStart, startsAtTop: startsAtTop)
        else {
            return nil
        }
        let unavailable = quality.velocityUnavailable(rate: m.rate)
        let q = m.measure.quality(
            start: m.start, end: m.end, previous: previous,
            velocities: configuration.placement == .bar && unavailable == nil, unavailable: unavailable)
        return (q, m.measure, m.end)
    }

    // MARK: - Measures

    /// Whether a tracked period of `k` points is the same set at a new pace: more than `tolerance` and at most 1.6
    /// times faster or slower than the set's `lag` (a bigger change is another activity), and not a harmonic of it.
    /// Whether two periods (grid points) are within `factor` of each other: the longer at most `factor` times the
    /// shorter (a period of 0 counts as 1).
    static func within(_ factor: Double, _ a: Int, _ b: Int) -> Bool {
        Double(max(a, b)) <= factor * Double(max(1, min(a, b)))
    }

    static func isNewPace(_ k: Int, comparedTo lag: Int, tolerance: Double) -> Bool {
        let ratio = Double(max(k, lag)) / Double(min(k, lag))
        // A lifter changes pace by less than this; a bigger change is another activity.
        guard ratio > tolerance, ratio <= 1.6 else { return false }
        if k < lag {
            let multiple = (Double(lag) / Double(k)).rounded()
            if multiple >= 2, abs(Double(lag) / Double(k) - multiple) < 0.2 * multiple { return false }
        }
        return true
    }

    /// Whether every interval between consecutive reps is within 0.75–1.33 times their median.
    static func steadyIntervals(_ reps: [Int]) -> Bool {
        guard reps.count >= 3 else { return false }
        let intervals = sortedIntervals(reps)
        let median = Double(intervals[intervals.count / 2])
        return Double(intervals[0]) >= 0.75 * median && Double(intervals[intervals.count - 1]) <= 1.33 * median
    }

    /// The intervals between consecutive reps (grid points), shortest first; the median is at `count / 2`.
    private static func sortedIntervals(_ reps: [Int]) -> [Int] {
        var intervals: [Int] = []
        intervals.reserveCapacity(max(reps.count - 1, 0))
        for (a, b) in zip(reps, reps.dropFirst()) { intervals.append(b - a) }
        intervals.sort()
        return intervals
    }

    private static func larger(_ a: Double?, _ b: Double?) -> Double? {
        guard let a else { return b }
        guard let b else { return a }
        return max(a, b)
    }

    private func time(_ index: Int) -> Double { origin + Double(index) * Self.spacing }

    private static func unit(_ v: (Double, Double, Double)) -> (Double, Double, Double) {
        let norm = (v.0 * v.0 + v.1 * v.1 + v.2 * v.2).squareRoot()
        guard norm > 1e-9 else { return (0, 0, 0) }
        let inverse = 1 / norm
        return (v.0 * inverse, v.1 * inverse, v.2 * inverse)
    }

    private mutating func updateAlphas(_ dt: Double) {
        cachedStep = dt
        alphaGravity = 1 - exponential(-dt / configuration.gravityTimeConstant)
        alphaSmooth = 1 - exponential(-dt / configuration.smoothingTimeConstant)
    }
}
