#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(ucrt)
    import ucrt
#endif

/// The exercise gate's hand rules: repetition it never refuses and gait (or motion too small to be a rep) it always
/// refuses, whatever the tree says (`ExerciseGateModel.judgement(of:)` passes `isSteadyRepetition` first, then refuses
/// `isTooSmallForItsPace`, `isGait`, `isArmSwing`, `isStrideSwing` and `isStrideBounce`, then passes `isJumpRhythm`
/// before the tree). Each is documented with what it measured in docs/DETECTOR.md ("How the detector uses it" and the
/// sections it names).
extension ExerciseGateFeatures {
    /// Repetition that the gate never refuses, whatever the tree says (the name is older than the kinds that ask for
    /// no steadiness). Four kinds:
    /// - Steady clean repetition: a periodicity of at least 0.95 and energy within 15 % from one period to the next,
    ///   with no step rhythm in the 3-D motion and at most a faint one (`steadyMaximumVerticalStepRhythm`) along
    ///   gravity. Gait on a wrist rarely holds this (its steps make a rhythm at half the stride, and a walk's
    ///   periodicity is 0.88 at the median); a machine-like rep does, and the tree has seen few signals this clean.
    ///   (Allowing a step rhythm at the period itself, for fast reps, let jogs through whose period the tracker took at
    ///   the step: 84 % of WISDM's jogs counted 0 instead of 100 %.) A wrist swinging across gravity hides the steps
    ///   from the 3-D motion, not from the motion along gravity: a WISDM walk with a 1 s arm swing passed this way and
    ///   counted 19.
    ///   When it is also level (under 2 % of the energy along gravity), it passes whatever its step rhythms and its
    ///   size (from `faintestRepetitionLogRMS`): nothing bounces there, so a step rhythm (a rep faster than 0.72 s
    ///   makes one at its own period) and the faint rhythm that a tiny motion along gravity shows say nothing of gait.
    ///   Small fast sines across gravity (0.05–0.1 g at 1.5–2 Hz) are this; the tree had refused them as a seated
    ///   wrist's fidgeting, which is neither this periodic nor this steady. Of the judged moments of ../shared's
    ///   recordings, none without exercise holds it (docs/DETECTOR.md, "Steady level repetition at any pace").
    /// - Slow, strong repetition: a period of at least 2 s, a periodicity of at least 0.85, energy within 15 % from one
    ///   period to the next and an RMS of at least 0.15 g, with or without a step rhythm. A stride lasts 0.8–1.7 s; of
    ///   the 58 000 judged moments of the 179 recordings without exercise in ../shared, 23 (in 8 recordings) hold
    ///   this (at 0.2 g and at 0.15 g alike), and no count changes for them. Burpees do: their landings (three a rep)
    ///   make a step rhythm, and the tree refused a third of a fast set's moments (docs/DETECTOR.md, "Burpees").
    /// - Level repetition: a periodicity of at least 0.85, under 3 % of the energy along gravity
    ///   (`levelRepetitionMaximumVerticalShare`), an RMS of at least 0.05 g and at most a faint step rhythm along
    ///   gravity. Gait bounces the body along gravity at every step (and a swinging arm's arc adds motion along it); a
    ///   wrist whose hand is on the floor or on a bar (push-ups, pull-ups) only tilts, which reads as motion across
    ///   gravity. The least share along gravity of a gait moment of 0.05 g or more in ../shared is 0.027, in a walk
    ///   whose steps still make a rhythm along gravity; with at most a faint one, 0.033 (docs/DETECTOR.md, "Level
    ///   repetition passes unjudged" and "Level repetition up to 3 % along gravity").
    /// - Vertical repetition: a periodicity of at least 0.85, at least 90 % of the energy along gravity, no clear step
    ///   rhythm along gravity (below `gaitMinimumVerticalStepRhythm`) and an RMS from `faintestRepetitionLogRMS`; no
    ///   steadiness is asked (real squats vary in size). The body rises and sinks while the arms stay still on it
    ///   (squats, calf raises); a walking, jogging or climbing wrist swings across gravity too, and where it barely
    ///   does (a hand on a rail) its steps make a clear rhythm along gravity. The built-in tree accepts such moments
    ///   in a leaf that one person's squats (cara's P1) make nearly alone: trained without that person, it refused
    ///   them as gait, and held out their sets counted 0 (docs/DETECTOR.md, "Vertical repetition passes unjudged").
    public var isSteadyRepetition: Bool {
        if periodicity >= 0.95 && steadiness >= 0.85
            && ((verticalShare < Self.levelMaximumVerticalShare && logRMS >= Self.faintestRepetitionLogRMS)
                || (stepPeriod == 0 && verticalStepRhythm <= Self.steadyMaximumVerticalStepRhythm))
        {
            return true
        }
        if periodicity >= 0.85 && verticalShare < Self.levelRepetitionMaximumVerticalShare
            && logRMS >= Self.levelRepetitionLogRMS
            && verticalStepRhythm <= Self.steadyMaximumVerticalStepRhythm
        {
            return true
        }
        if periodicity >= 0.85 && verticalShare >= Self.verticalRepetitionMinimumShare
            && verticalStepRhythm < Self.gaitMinimumVerticalStepRhythm && logRMS >= Self.faintestRepetitionLogRMS
        {
            return true
        }
        return logPeriod >= Self.slowRepetitionLogPeriod && periodicity >= 0.85 && steadiness >= 0.85
            && logRMS >= Self.strongRepetitionLogRMS
    }

    /// A jump rope's rhythm, which the gate passes whatever the tree says (after the refusals: a moment that holds
    /// gait's signature or a stride's swing is still refused). Skipping lands once a turn: the step rhythm lies at the
    /// period itself (within 10 %), and the motion along gravity is about as smooth as a sine at the period
    /// (`logVerticalSharpness` at most 0.35), where a stride's two steps bounce the wrist twice a period (about ln 2 =
    /// 0.69: the moments of WISDM's jogs that hold the rest of this measure 0.53–0.70 from the 5th to the 95th
    /// percentile). The hands turn the rope with every jump, so the motion across gravity repeats one period later
    /// (`acrossFull` at least 0.6), and it is strong (at least 0.4 g RMS of the smoothed motion) and periodic (at least
    /// 0.8). The step rhythm is looked for at lags of 0.24–0.72 s, so only periods up to about 0.79 s can hold this
    /// (rope turns are 0.4–0.7 s). The tree put rope skipping under 1.15 g RMS with jogging, in its leaf of motion with
    /// a step rhythm along gravity that does not reverse half a period later, and refused it there: a clean set of 7
    /// counted 0 (5 live, taken back) and a mixed set of 40 counted 16. Of the judged moments of ../shared's recordings
    /// without exercise, 4588 (jogs and stair climbs) hold all but the smoothness along gravity, and 30 all of it
    /// (WISDM jogs of three people and stair climbs of two), with no count, final or live, changing for them; of the
    /// exercise recordings, 1011 moments of rope skipping (95 % of those that hold the rest at most 0.22 sharp along
    /// gravity) and 4 others (docs/DETECTOR.md, "A jump rope's rhythm passes").
    public var isJumpRhythm: Bool {
        stepPeriod > 0 && abs(log(stepPeriod) - logPeriod) <= Self.jumpRhythmLogStepTolerance
            && logVerticalSharpness <= Self.jumpRhythmMaximumLogVerticalSharpness
            && acrossFull >= Self.jumpRhythmMinimumAcrossFull && logRMS >= Self.jumpRhythmLogRMS
            && periodicity >= Self.jumpRhythmMinimumPeriodicity
    }

    /// ln 1.1: the jump rope's step rhythm lies within 10 % of its period (either way, as a ratio).
    static let jumpRhythmLogStepTolerance = 0.09531017980432493
    /// One landing a turn: the motion along gravity at most this sharp (`logVerticalSharpness`; a sine is 0, a
    /// stride's two bounces a period about ln 2).
    static let jumpRhythmMaximumLogVerticalSharpness = 0.35
    /// The hands turn the rope with every jump: at least this correlation across gravity one period back.
    static let jumpRhythmMinimumAcrossFull = 0.6
    /// ln 0.4: the least RMS (g) of a jump rope's rhythm.
    static let jumpRhythmLogRMS = -0.916290731874155
    /// A jump rope's rhythm is at least this periodic.
    static let jumpRhythmMinimumPeriodicity = 0.8

    /// Gait's own signature, which the gate refuses whatever the tree says (a moment of `isSteadyRepetition` passes
    /// first: `ExerciseGateModel.judgement(of:)`): the motion along gravity repeats half a period back (the two steps
    /// of a stride), the motion across gravity reverses there (the arm's swing, at half the step frequency), and the
    /// steps make a strong rhythm along gravity, with the body's bounce holding a share of the energy there.
    /// Generated jogs harder than any real one in ../shared (1.5 g RMS) fell in a leaf the tree had filled with strong
    /// exercise; of the judged moments of ../shared's exercise recordings, 2 hold this (mixed crunches the tree
    /// refused already), and no count of the three manifests or of sit-walk-sit changes for it (docs/DETECTOR.md,
    /// "Gait's signature is refused"). No moment of level or vertical repetition can hold it (under 3 % along
    /// gravity, or a step rhythm along gravity below 1.0); only slow, strong repetition can, and it passes.
    public var isGait: Bool {
        verticalHalf >= Self.gaitMinimumVerticalHalf && acrossHalf <= Self.gaitMaximumAcrossHalf
            && verticalStepRhythm >= Self.gaitMinimumVerticalStepRhythm
            && verticalShare >= Self.gaitMinimumVerticalShare
    }

    /// A walk seen from a wrist that swings smoothly once per stride and does not feel the steps, which the gate
    /// refuses whatever the tree says (a moment of `isSteadyRepetition` passes first): a moment of the trained tree's
    /// leaf of smooth swings at a stride's period (the period within e^±0.0802 of 1 s, which on the detector's 40 ms
    /// grid is 0.96–1.08 s; a step rhythm along gravity of at most 0.135, a periodicity above 0.657, at most 0.92 g RMS
    /// and `logSharpness` at most 0.196; log-odds +0.81: 0.69, accepted) with no step rhythm at all, 15–60 % of the
    /// energy along gravity and 0.15–0.6 g RMS. 33 of the 35 trees trained without one person draw that leaf alike, and
    /// at its depth the tree cannot split it further. The exercise in it moves otherwise: push-ups are level (1 % of
    /// the energy along gravity at the median, 90 % of them under 8 %), squats mostly vertical (86 % at the median),
    /// rope skipping stronger (0.63–0.92 g); the walks in it swing 0.24–0.45 g with 19–57 % along gravity (10th to 90th
    /// percentile, the short walks of sit-walk-sit). Of the judged moments of ../shared's exercise recordings, 8 (5 of
    /// lunges) hold this, and no count changes for them; of those without exercise, 532 of 17 people (docs/DETECTOR.md,
    /// "A smooth arm swing at a stride's period is refused").
    public var isArmSwing: Bool {
        logPeriod * logPeriod <= Self.armSwingMaximumLogPeriodSquared && stepRhythm == 0
            && verticalStepRhythm <= Self.armSwingMaximumVerticalStepRhythm
            && periodicity > Self.armSwingMinimumPeriodicity && logSharpness <= Self.armSwingMaximumLogSharpness
            && Self.armSwingVerticalShares.contains(verticalShare) && Self.armSwingLogRMS.contains(logRMS)
    }

    /// Motion too small for its pace to be a rep, which the gate refuses whatever the tree says (a moment of
    /// `isSteadyRepetition` passes first): a sine of the moment's RMS and period moves the wrist less than 1 mm either
    /// way (RMS × √2 × g × (period / 2π)²; `smallestRepLogAcceleration`). The RMS is that of the detector's smoothed
    /// motion, which at the default smoothing keeps about 0.44 of a 3 Hz motion, 0.64 of a 2 Hz one and 0.88 of a 1 Hz
    /// one, so the floor is about 2.3, 1.6 and 1.1 mm of real motion there. A still wrist's tremor repeats at about
    /// 3 Hz with 0.01–0.03 g RMS, mostly under the floor; no exercise moves so little at its pace. Of the judged
    /// moments of ../shared's exercise sets the least moves 2.5 mm by this measure; of those without exercise, 829 move
    /// less than 1 mm (sitting, standing and sit-walk-sit wrists of 24 people), 76 of which (16 people) the built-in
    /// judgement accepted (docs/DETECTOR.md, "Motion too small for its pace is refused").
    public var isTooSmallForItsPace: Bool {
        logRMS + 2 * logPeriod < Self.smallestRepLogAcceleration
    }

    /// ln 0.0028466: the RMS (g) of a sine with a period of 1 s that moves the wrist 1 mm either way (a sine of RMS a g
    /// and period T s moves a × √2 × 9.80665 m/s² × (T / 2π)² either way; 0.001 m × 4π² / (√2 × 9.80665)). A moment
    /// whose ln RMS plus twice its ln period is below this moves less.
    static let smallestRepLogAcceleration = -5.861635463423023

    /// A walk whose wrist swings like a pendulum once per stride, jolted by the steps but without a step rhythm, which
    /// the gate refuses whatever the tree says (a moment of `isSteadyRepetition` passes first): a stride's period at
    /// any walker's pace (0.8–1.35 s, cadences of 1.5–2.5 steps a second; 0.80–1.32 s on the detector's 40 ms grid), no
    /// step rhythm in the 3-D motion (`stepRhythm` 0; a faint one along gravity may show), the motion across gravity
    /// reversing half a period later (`acrossHalf` at most −0.4: the swing back) while the motion along gravity does
    /// not repeat there (`verticalHalf` at most 0: the steps do not bounce the wrist), a periodicity of at least 0.75,
    /// sharper than a sine (`logSharpness` at least 0.1: the steps' jolts), 15–60 % of the energy along gravity (the
    /// bounds of `isArmSwing`) and 0.15–0.5 g RMS (`strideSwingLogRMS`). `isArmSwing` takes the smooth swings of the
    /// tree's leaf; this one a sharper swing at a stride's period that reverses so, wherever the tree put it. Until
    /// 2026-12-03 the period was 0.9–1.25 s and the swing back −0.6, drawn on ../shared's people at their own paces;
    /// with their recordings played 1.18 times faster (every timestamp times 0.85, `scripts/train-gate --stretch`) a
    /// quarter of WISDM's walks then counted (docs/DETECTOR.md, "Other paces"). Until 2026-12-04 the RMS reached 0.6 g
    /// (that of `isArmSwing`), just under rope skipping's 0.63 g: much of a rope skip 0.7 times as hard was refused as
    /// a stride swing (docs/DETECTOR.md, "Other strengths"). Of the judged moments of the three manifests' recordings without
    /// exercise (sit-walk-sit's pieces not counted), 3032 of 24 people hold this (3035 up to 0.6 g); of the exercise
    /// recordings (`manifest.csv`), 4 moments of one push-up set; of the everyday repetition of `manifest-more.csv`, 76
    /// (136). From 1.3 s (1.32 s on the grid) a moment may be a slow stride's bounce (`isStrideBounce`) as well; both
    /// refuse.
    /// One person's walk that the tree trained without them accepted (27 reps held out) counts 0 (docs/DETECTOR.md, "A
    /// jolted pendulum swing at a stride's period is refused").
    public var isStrideSwing: Bool {
        Self.strideSwingLogPeriods.contains(logPeriod) && stepRhythm == 0
            && acrossHalf <= Self.strideSwingMaximumAcrossHalf && verticalHalf <= Self.strideSwingMaximumVerticalHalf
            && periodicity >= Self.strideSwingMinimumPeriodicity && logSharpness >= Self.strideSwingMinimumLogSharpness
            && Self.armSwingVerticalShares.contains(verticalShare) && Self.strideSwingLogRMS.contains(logRMS)
    }

    /// ln 0.15 ... ln 0.5: the stride swing's RMS (g). The gait moments that the rule took up to 0.6 g (judged moments of
    /// ../shared's WISDM recordings, real walks and sit-walk-sit) swing 0.18–0.34 g from the 10th to the 90th
    /// percentile, 3 of 2778 above 0.5 g and none above 0.55 g; rope skipping measures 0.63 g and more at its own size
    /// and 0.44 g and more played 0.7 times as hard (`scripts/train-gate --strength 0.7`). Held out, 0.5 instead of 0.6
    /// took the mixed recordings at 0.7 from 5.19 to 4.65 and moved no count of a recording of the three manifests at
    /// its own size, at 0.7 or 1.4, or at other paces, but for two of cara_more's everyday activities; down to 0.45 the
    /// tree would judge 13 gait moments (3 recordings) that it accepts (docs/DETECTOR.md, "Other strengths").
    static let strideSwingLogRMS = -1.8971199848858813...(-0.6931471805599453)

    /// A slow stride whose two steps bounce the wrist alike, which the gate refuses whatever the tree says (a moment of
    /// `isSteadyRepetition` passes first): a slow stride's period (1.3–1.9 s; 1.32–1.88 s on the detector's 40 ms
    /// grid), the motion along gravity repeating half a period later (`verticalHalf` at least 0.85: one bounce per
    /// step) and holding at least half the energy. Such steps last 0.65–0.95 s, mostly longer than the step lags
    /// (0.24–0.72 s), so no step rhythm shows and `isGait` cannot see them; climbing stairs with a hand on the rail,
    /// the arm hardly swings either. Of the judged moments of ../shared's recordings without exercise, 367 hold this
    /// (stairs, jogging and real walks of 16 people), 67 of which the built-in judgement accepted (stairs of 4 WISDM
    /// people, two real walks); of the exercise recordings (`manifest.csv`), 18 (pull-ups 14, rope skipping 3, a lunge),
    /// and no count changes for them; of the everyday repetition of `manifest-more.csv`, 2. Exercise whose tracked
    /// period is 1.3–1.9 s and whose motion along gravity repeats at half of it would be refused; generated
    /// alternating dips at 1.6 s a pair are tracked at the dip and count as without the gate. The bounds were drawn
    /// looking at all of ../shared (docs/DETECTOR.md, "A slow stride's bounce is refused").
    public var isStrideBounce: Bool {
        Self.strideBounceLogPeriods.contains(logPeriod) && verticalHalf >= Self.strideBounceMinimumVerticalHalf
            && verticalShare >= Self.strideBounceMinimumVerticalShare
    }

    /// ln 1.3 ... ln 1.9: a slow stride's period (s), steps of 0.65–0.95 s.
    static let strideBounceLogPeriods = 0.26236426446749106...0.6418538861723947
    /// The slow stride's steps bounce alike: at least this correlation of the motion along gravity half a period back.
    static let strideBounceMinimumVerticalHalf = 0.85
    /// The slow stride's bounce holds at least this share of the energy.
    static let strideBounceMinimumVerticalShare = 0.5

    /// ln 0.8 ... ln 1.35: the stride swing's period (s), a walker's stride at 1.5–2.5 steps a second.
    static let strideSwingLogPeriods = -0.2231435513142097...0.30010459245033816
    /// The stride swing reverses across gravity: at most this correlation half a period back (−0.6 until 2026-12-03).
    static let strideSwingMaximumAcrossHalf = -0.4
    /// The stride swing's motion along gravity does not repeat half a period back: at most this correlation.
    static let strideSwingMaximumVerticalHalf = 0.0
    /// The stride swing is at least this periodic.
    static let strideSwingMinimumPeriodicity = 0.75
    /// The stride swing is at least this sharp (`logSharpness`; a sine is 0): the steps jolt the wrist.
    static let strideSwingMinimumLogSharpness = 0.1

    /// Gait's steps repeat along gravity: at least this correlation half a period back.
    static let gaitMinimumVerticalHalf = 0.4
    /// Gait's arm swing reverses across gravity: at most this correlation half a period back.
    static let gaitMaximumAcrossHalf = -0.6
    /// Gait bounces the body at every step: at least this share of the energy along gravity. A large swing across
    /// gravity alone (a 2 g sine at 1 Hz) also makes a rhythm along it at twice its rate, as its apparent gravity tilts
    /// to and fro, but with 0.5–3.1 % of the energy.
    static let gaitMinimumVerticalShare = 0.05
    /// Gait's steps make at least this rhythm along gravity (a clear step, not a faint one).
    static let gaitMinimumVerticalStepRhythm = 1.0

    /// The arm swing's (ln period)² is at most this: the tree's split on `log_period_sq` (e^±0.0802: 0.923–1.084 s).
    static let armSwingMaximumLogPeriodSquared = 0.00643499987
    /// The arm swing holds at most this step rhythm along gravity: the tree's first split.
    static let armSwingMaximumVerticalStepRhythm = 0.134920001
    /// The arm swing is more periodic than this: the tree's split.
    static let armSwingMinimumPeriodicity = 0.656980008
    /// The arm swing is at most this sharp (`logSharpness`): the tree's split.
    static let armSwingMaximumLogSharpness = 0.196230002
    /// The arm swing's share of its energy along gravity: neither level (push-ups) nor vertical (squats).
    static let armSwingVerticalShares = 0.15...0.6
    /// ln 0.15 ... ln 0.6: the arm swing's RMS (g), below rope skipping's (0.63 g and more in that leaf). The leaf
    /// itself ends at the tree's split of 0.92 g. (`isStrideSwing` ends at 0.5 g: `strideSwingLogRMS`.)
    static let armSwingLogRMS = -1.8971199848858813...(-0.5108256237659907)

    /// Vertical repetition holds at least this share of its energy along gravity. Of the judged moments of ../shared's
    /// recordings without exercise (WISDM's 26 people walking, jogging, climbing stairs…, the real walks, the rests)
    /// and of sit-walk-sit, none is vertical repetition; at 0.85, 9 moments of one stair climb (which the tree
    /// accepted already) would be, at 0.8 4 moments of gait the tree refused, at 0.75 71 of 5 WISDM walks.
    static let verticalRepetitionMinimumShare = 0.9
    /// Steady level repetition at any pace holds less than this share of its energy along gravity (no step rhythm is
    /// asked of it, so it keeps below every gait moment in ../shared: 0.027).
    static let levelMaximumVerticalShare = 0.02
    /// Level repetition holds less than this share of its energy along gravity: 90 % of the least share (0.033) of a
    /// moment without exercise in ../shared that the rule's other conditions let through (one WISDM person's walk and
    /// sit-walk-sit sequences, arm swinging across gravity, and another's sitting at 0.0335: leaving out any one
    /// person, the least is still 0.033). Of the judged moments between 0.02 and 0.05 along gravity (periodic, 0.05 g
    /// or more), the 197 without exercise (nearly all that walk) make a step rhythm along gravity of 0.40 or more in
    /// 90 % of cases, the 1091 of exercise (crunches, push-ups, pull-ups: a wrist that tilts) 0.24 or less in 90 %.
    /// Until 2026-11-29 (fifth session) it was 0.02, that of steady level repetition.
    static let levelRepetitionMaximumVerticalShare = 0.03
    /// ln 0.05: the least RMS (g) of level repetition.
    static let levelRepetitionLogRMS = -2.995732273553991
    /// ln 0.015: the least RMS (g) of steady level repetition at any pace and of vertical repetition, about a still
    /// wrist's noise; a 0.05 g sine measures 0.02–0.025 g after the detector's filters and passes.
    static let faintestRepetitionLogRMS = -4.199705077879927

    /// The most step rhythm along gravity that steady clean repetition (and level repetition) may hold. Of the
    /// moments that are otherwise steady clean repetition in ../shared's recordings, more than 0.5 hold it at 1 % of
    /// the clean sets', 2 % of the mixed recordings' and 45 % of those without exercise (walks with the arm
    /// swinging). From 0.3 to 0.8 every exercise and true-0 recording of the three manifests counts the same
    /// (docs/DETECTOR.md).
    static let steadyMaximumVerticalStepRhythm = 0.5

    /// ln 2: the shortest period (s) of slow, strong repetition.
    static let slowRepetitionLogPeriod = 0.6931471805599453
    /// ln 0.15: the least RMS (g) of slow, strong repetition. Of the judged moments of ../shared's recordings without
    /// exercise and of sit-walk-sit with a period of 2 s or more, a periodicity and a steadiness of 0.85 or more, 43
    /// hold 0.2 g or more and none lies between 0.15 and 0.2 g; below, one real walk's 3 reach 0.125 g and a seated
    /// wrist's 0.090 g. A heavy barbell squat seen from a wrist moves 0.165 g (until 2026-11-29 the floor was 0.2 g,
    /// and held out the tree refused such a set: docs/DETECTOR.md, "Slow, strong repetition from 0.15 g").
    static let strongRepetitionLogRMS = -1.8971199848858813
}
