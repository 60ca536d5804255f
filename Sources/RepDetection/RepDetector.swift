import MotionCore

/// A streaming, causal rep counter. Feed it samples in time order; it appends events as they happen.
///
/// How it counts (all time constants in sample time, so the sample rate does not matter):
/// 1. **Motion signal.** Gravity is tracked by a slow low-pass filter and subtracted; two fast low-pass stages
///    smooth what is left. The 3-axis motion is projected onto its principal axis (the dominant eigenvector of its
///    recent covariance, followed by power iteration), so the sensor may sit in any orientation on any body part.
/// 2. **Swings.** The projected signal swings to one side and then the other. A swing counts when it passes a
///    threshold: `sensitivity` × the recent RMS level outside a set (each sample's share of that level is capped
///    at `levelOutlierLimit` × the level, so one big movement does not hide the reps after it), or
///    `setThresholdFraction` × the set's typical half swing inside a set; never less than `minimumAmplitude`. Two
///    opposite swings make one rep cycle, whichever side comes first.
/// 3. **Rhythm.** Rest and fidgets also swing, but not in rhythm. A set starts when `repsToStartSet` cycles in a
///    row have periods within `rhythmTolerance` of each other; those reps are counted then, with their own
///    timestamps, and the last `lookbackPeriods` periods of the signal are searched again, with a threshold of
///    `lookbackThresholdFraction` × the set's typical half swing, for earlier reps of the same rhythm. Inside a
///    set a cycle counts as a rep unless it comes too soon (`harmonicFactor`: a second bump of the same rep) or
///    after too long a pause (`maximumPauseFactor`). A tiring lifter's reps get slower and, at the same depth,
///    smaller (∝ 1/period²), so inside a set the threshold follows the last rep's half swing when it was smaller
///    than the typical one, and the pause limit the last rep's period when it was longer.
///    Walking is in rhythm too: an arm swings once per stride while the body bounces once per step, so a set
///    does not start when, for a rhythm as long as a stride, the vertical motion (along gravity) over its cycles
///    repeats every half period, or, for one as long as a step, the vertical motion repeats every period while the
///    motion across it reverses (`maximumStepSimilarity`; see `StepHistory`).
///    A longer pause breaks the rhythm but not the set: reps count again, in the same set, once three cycles are
///    in rhythm anew (and the look-back finds the ones since the pause).
/// 4. **Sets** end after `restToEndSet` seconds without a rep, or at `finish()` (a paused set waits for a cycle
///    that came within that time to establish its rhythm or fail to).
///
/// Delay: a rep inside a set is announced when its second swing passes the threshold (the smoothing adds about
/// 0.15 s); the first reps of a set are announced together when the set is established, at most
/// `repsToStartSet` rep periods after the first one. Every event carries the sample time it belongs to.
///
/// The detector reads no clock and allocates nothing per sample. Samples whose time does not advance are
/// ignored; a gap longer than `gapToReset` restarts the filters without ending the set.
public struct RepDetector: Sendable {
    /// The configuration in use.
    public let configuration: RepDetectorConfiguration

    /// The motion signal along the principal axis after the last sample, in g (for plots and diagnostics).
    public private(set) var signal = 0.0
    /// The swing threshold after the last sample, in g (for plots and diagnostics).
    public var threshold: Double {
        setActive
            ? setThreshold
            : max(configuration.minimumAmplitude, configuration.sensitivity * meanSquare.squareRoot())
    }
    /// Samples ignored because their time did not advance.
    public private(set) var ignoredSamples = 0
    /// Reps counted since the start or the last reset.
    public private(set) var totalReps = 0
    /// The number of the current or last set (0 before the first).
    public private(set) var setNumber = 0
    /// Whether a set is in progress.
    public var inSet: Bool { setOpen }
    /// How many times recent cycles were in rhythm outside a set (each one a `SetCandidate`).
    public private(set) var setCandidates = 0
    /// The latest of those moments, with its periodicity and whether a set started (for plots and diagnostics).
    public private(set) var lastSetCandidate: SetCandidate?

    // Signal chain state.
    private var lastTime = 0.0
    private var started = false
    private var gravity = (0.0, 0.0, 0.0)
    private var smooth1 = (0.0, 0.0, 0.0)
    private var smooth2 = (0.0, 0.0, 0.0)
    private var cxx = 1e-6, cyy = 1e-6, czz = 1e-6, cxy = 0.0, cxz = 0.0, cyz = 0.0
    private var axis = (0.57735026918962573, 0.57735026918962573, 0.57735026918962573)
    private var nextStepPoint = -Double.infinity
    private static let stepPointInterval = 0.04
    private var meanSquare = 0.0
    private var nextAxisUpdate = -Double.infinity
    private static let axisUpdateInterval = 0.02
    /// The step check judges rhythms as long as a walking step or stride, at a cadence of 80–170 steps a minute.
    /// (Outside them, a large slow motion across gravity tilts the gravity estimate with it, and the vertical part of
    /// the motion becomes its square, which repeats every half period like steps do.)
    static let stepPeriods = 0.35...0.75
    static let stridePeriods = 0.7...1.5
    private var cachedStep = -1.0
    private var alphaGravity = 0.0, alphaSmooth = 0.0, alphaAxis = 0.0, alphaLevel = 0.0

    // Swing state.
    private var side = 0  // +1, −1, or 0 before the first swing
    private var swings = 0
    private var lastSwingTime = -Double.infinity
    private var swingPeak = 0.0
    private var previousSwingPeak = 0.0

    // Rhythm and set state.
    private var pendingTimes: [Double] = []
    private var pendingAmplitudes: [Double] = []
    private var setActive = false  // counting reps in the set's rhythm
    private var setOpen = false  // announced and not yet ended; paused while open and not active
    private var repInSet = 0
    private var lastRepTime = 0.0
    private var gapTime = 0.0  // seconds of dropouts since the last rep or candidate
    private var periods = RecentValues()
    private var amplitudes = RecentValues()
    private var lastPeriod = 0.0  // of the set's latest rep, when measured
    private var lastAmplitude = 0.0  // of the set's latest rep
    private var setThreshold = 0.0
    private let sensitivitySquared: Double
    private let outlierLimitSquared: Double
    private let floorSquared: Double
    private var history: SignalHistory
    private var steps: StepHistory

    /// Creates a detector. The configuration must be valid (see `RepDetectorConfiguration.validate()`).
    public init(configuration: RepDetectorConfiguration = .init()) {
        precondition((try? configuration.validate()) != nil, "invalid RepDetectorConfiguration")
        self.configuration = configuration
        sensitivitySquared = configuration.sensitivity * configuration.sensitivity
        outlierLimitSquared = configuration.levelOutlierLimit * configuration.levelOutlierLimit
        floorSquared = configuration.minimumAmplitude * configuration.minimumAmplitude
        // The look-back for earlier reps and the periodicity check (one period and a quarter before the rhythm's
        // cycles) both read the history.
        let span = configuration.maximumRepPeriod
            * (Double(configuration.repsToStartSet) + max(configuration.lookbackPeriods, 1.25))
        history = SignalHistory(
            capacity: Int(span / 0.005) + 16, spacing: 0.005, periodicityPeriods: configuration.repsToStartSet)
        // The step check compares the rhythm's cycles and one more period, of a stride at most.
        steps = StepHistory(
            seconds: Self.stridePeriods.upperBound * Double(configuration.repsToStartSet + 1) + 1,
            spacing: Self.stepPointInterval, periods: configuration.repsToStartSet)
        pendingTimes.reserveCapacity(configuration.repsToStartSet + 1)
        pendingAmplitudes.reserveCapacity(configuration.repsToStartSet + 1)
    }

    /// Forgets everything: a new workout starts with set 1 and rep 1.
    public mutating func reset() {
        self = RepDetector(configuration: configuration)
    }

    /// Processes one sample, appending any events it completes to `events`.
    public mutating func process(_ sample: MotionSample, into events: inout [WorkoutEvent]) {
        let t = sample.timestamp
        guard started else {
            started = true
            lastTime = t
            gravity = (sample.ax, sample.ay, sample.az)
            return
        }
        let dt = t - lastTime
        guard dt > 0 else {
            ignoredSamples += 1
            return
        }
        lastTime = t
        if setOpen, t - lastRepTime > configuration.restToEndSet, !pausedSetMayContinue(at: t) { endSet(into: &events) }
        if dt > configuration.gapToReset {
            // A dropout: the filters restart, but the time it hid is not a pause of the lifter's (the rhythm
            // checks leave it out) and the swing in progress before it may complete after it.
            gapTime += dt
            lastSwingTime += dt
            gravity = (sample.ax, sample.ay, sample.az)
            smooth1 = (0, 0, 0)
            smooth2 = (0, 0, 0)
            side = 0
            history.removeAll()
            steps.removeAll()
            return
        }
        // Timestamps like i / rate differ from sample to sample in their last bits; a step within a millionth of
        // the last one keeps its filter coefficients (four exp() calls saved on most samples).
        if abs(dt - cachedStep) > 1e-6 * cachedStep { updateAlphas(dt) }

        // 1. Gravity removal and smoothing, the same on every axis.
        gravity.0 += alphaGravity * (sample.ax - gravity.0)
        gravity.1 += alphaGravity * (sample.ay - gravity.1)
        gravity.2 += alphaGravity * (sample.az - gravity.2)
        smooth1.0 += alphaSmooth * ((sample.ax - gravity.0) - smooth1.0)
        smooth1.1 += alphaSmooth * ((sample.ay - gravity.1) - smooth1.1)
        smooth1.2 += alphaSmooth * ((sample.az - gravity.2) - smooth1.2)
        smooth2.0 += alphaSmooth * (smooth1.0 - smooth2.0)
        smooth2.1 += alphaSmooth * (smooth1.1 - smooth2.1)
        smooth2.2 += alphaSmooth * (smooth1.2 - smooth2.2)
        let (x, y, z) = smooth2

        // Principal axis: exponentially weighted covariance, one power-iteration step per sample.
        cxx += alphaAxis * (x * x - cxx)
        cyy += alphaAxis * (y * y - cyy)
        czz += alphaAxis * (z * z - czz)
        cxy += alphaAxis * (x * y - cxy)
        cxz += alphaAxis * (x * z - cxz)
        cyz += alphaAxis * (y * z - cyz)
        // The axis moves slowly (axisTimeConstant), so one power-iteration step every 20 ms of sample time is
        // plenty; at high sample rates this skips the square root and division on most samples.
        if t >= nextAxisUpdate {
            nextAxisUpdate = t + Self.axisUpdateInterval
            let wx = cxx * axis.0 + cxy * axis.1 + cxz * axis.2
            let wy = cxy * axis.0 + cyy * axis.1 + cyz * axis.2
            let wz = cxz * axis.0 + cyz * axis.1 + czz * axis.2
            let norm = (wx * wx + wy * wy + wz * wz).squareRoot()
            if norm > 0 {
                let inverse = 1 / norm
                axis = (wx * inverse, wy * inverse, wz * inverse)
            }
        }
        let value = axis.0 * x + axis.1 * y + axis.2 * z
        // The level is a clipped mean square: once it is above the noise floor, a sample counts at most
        // `levelOutlierLimit` times the level, so a single large movement cannot dominate it.
        let squared = value * value
        let limit = outlierLimitSquared * meanSquare
        meanSquare += alphaLevel * ((limit > floorSquared && squared > limit ? limit : squared) - meanSquare)
        signal = value

        // 2. Swings against the threshold (compared squared: no square root per sample).
        let squaredThreshold = setActive
            ? setThreshold * setThreshold
            : max(floorSquared, sensitivitySquared * meanSquare)
        history.append(time: t, value: value)
        if t >= nextStepPoint { addStepPoint(at: t, value: value) }
        let sign = value * value > squaredThreshold ? (value > 0 ? 1 : -1) : 0
        if sign == 0 {
            // Three quarters of the longest period without a swing (6 s by default): the next swing starts a new
            // cycle rather than completing one begun long ago, so a stray movement well before a set does not decide
            // where its reps fall. (Half the period, 4 s, cut slow cycles short: cara_mixed MAE 3.51 → 3.90.)
            if side != 0, t - lastSwingTime > configuration.maximumRepPeriod * 0.75 {
                side = 0
                swings = 0
            }
        } else if sign != side {
            side = sign
            swings += 1
            lastSwingTime = t
            previousSwingPeak = swingPeak
            swingPeak = abs(value)
            if swings % 2 == 0 { cycleCompleted(at: t, amplitude: previousSwingPeak + swingPeak, into: &events) }
        } else {
            swingPeak = max(swingPeak, abs(value))
            lastSwingTime = t
        }
    }

    /// Processes samples in order.
    public mutating func process(_ samples: some Sequence<MotionSample>, into events: inout [WorkoutEvent]) {
        for sample in samples { process(sample, into: &events) }
    }

    /// Ends the stream: an open set is closed and its `setEnded` appended.
    public mutating func finish(into events: inout [WorkoutEvent]) {
        if setOpen { endSet(into: &events) }
    }

    // MARK: - Rhythm and sets

    private mutating func cycleCompleted(at t: Double, amplitude: Double, into events: inout [WorkoutEvent]) {
        let c = configuration
        if setActive {
            let sinceLast = t - lastRepTime - gapTime  // time the sensor actually saw
            let typical = periods.median
            if sinceLast < c.harmonicFactor * typical { return }
            // A tiring lifter slows down: the pause is judged against the last period too, when it is longer.
            if sinceLast <= c.maximumPauseFactor * max(typical, lastPeriod), sinceLast <= c.maximumRepPeriod {
                // A period that spans a dropout is not a measured one: it does not join the typical period.
                if gapTime == 0 {
                    periods.append(sinceLast)
                    lastPeriod = sinceLast
                }
                gapTime = 0
                amplitudes.append(amplitude)
                lastAmplitude = amplitude
                updateSetThreshold()
                countRep(at: t, duration: t - lastRepTime, amplitude: amplitude, into: &events)
                return
            }
            // Too long a pause (a breather at the top, a re-grip): the rhythm is broken, and reps count again only
            // once it is established anew — in the same set, unless `restToEndSet` ends it first.
            setActive = false
            pendingTimes.removeAll(keepingCapacity: true)
            pendingAmplitudes.removeAll(keepingCapacity: true)
        }
        gapTime = 0
        // Outside a set: keep the recent cycles that could still form a rhythm with this one.
        let horizon = c.maximumRepPeriod * Double(c.repsToStartSet - 1)
        var keep = 0
        for index in pendingTimes.indices where t - pendingTimes[index] <= horizon {
            pendingTimes[keep] = pendingTimes[index]
            pendingAmplitudes[keep] = pendingAmplitudes[index]
            keep += 1
        }
        pendingTimes.removeLast(pendingTimes.count - keep)
        pendingAmplitudes.removeLast(pendingAmplitudes.count - keep)
        if pendingTimes.count == c.repsToStartSet {
            pendingTimes.removeFirst()
            pendingAmplitudes.removeFirst()
        }
        pendingTimes.append(t)
        pendingAmplitudes.append(amplitude)
        guard pendingTimes.count == c.repsToStartSet else { return }

        var shortest = Double.infinity
        var longest = 0.0
        for index in 1..<pendingTimes.count {
            let period = pendingTimes[index] - pendingTimes[index - 1]
            shortest = min(shortest, period)
            longest = max(longest, period)
        }
        guard shortest >= c.minimumRepPeriod, longest <= c.maximumRepPeriod, longest <= c.rhythmTolerance * shortest
        else { return }
        // Fidgets can fall into step for three swings; real reps also look alike: the signal must resemble
        // itself one period earlier.
        let period = (t - pendingTimes[0]) / Double(pendingTimes.count - 1)
        var periodicity: Double?
        if c.minimumPeriodicity > 0 {
            periodicity = history.periodicity(endingAt: t, period: period)
        }
        var starts = periodicity.map { $0 >= c.minimumPeriodicity } ?? true  // nil: too little signal to judge
        // Walking is in rhythm too: the body bounces once per step, and the arm swings once per stride.
        var walking: Double?
        let asStride = Self.stridePeriods.contains(period), asStep = Self.stepPeriods.contains(period)
        if starts, c.maximumStepSimilarity < 1, asStride || asStep,
            let measure = steps.measure(endingAt: t, period: period), measure.verticalShare >= c.minimumStepShare
        {
            let likeness = max(asStride ? measure.strideLikeness : -1, asStep ? measure.stepLikeness : -1)
            walking = likeness
            if likeness >= c.maximumStepSimilarity { starts = false }
        }
        lastSetCandidate = SetCandidate(
            timestamp: t, period: period, periodicity: periodicity, stepSimilarity: walking, started: starts)
        setCandidates += 1
        if starts { startSet(into: &events) }
    }

    private mutating func startSet(into events: inout [WorkoutEvent]) {
        periods.removeAll()
        amplitudes.removeAll()
        for index in 1..<pendingTimes.count { periods.append(pendingTimes[index] - pendingTimes[index - 1]) }
        for amplitude in pendingAmplitudes { amplitudes.append(amplitude) }
        lastPeriod = pendingTimes[pendingTimes.count - 1] - pendingTimes[pendingTimes.count - 2]
        lastAmplitude = pendingAmplitudes[pendingAmplitudes.count - 1]
        let typical = periods.median
        updateSetThreshold()
        let earlier = earlierReps(before: pendingTimes[0], period: typical)

        setActive = true
        let firstTime = earlier.first?.time ?? pendingTimes[0]
        if !setOpen {  // else a paused set goes on
            setOpen = true
            setNumber += 1
            repInSet = 0
            let count = earlier.count + pendingTimes.count
            events.append(.setStarted(SetEvent(setNumber: setNumber, timestamp: firstTime - typical, repCount: count)))
        }
        var previous = firstTime - typical
        for rep in earlier {
            countRep(at: rep.time, duration: rep.time - previous, amplitude: rep.amplitude, into: &events)
            previous = rep.time
        }
        for (time, amplitude) in zip(pendingTimes, pendingAmplitudes) {
            countRep(at: time, duration: time - previous, amplitude: amplitude, into: &events)
            previous = time
        }
        pendingTimes.removeAll(keepingCapacity: true)
        pendingAmplitudes.removeAll(keepingCapacity: true)
    }

    /// Searches the recent signal, with the new set's own threshold, for reps of its rhythm before `first`.
    private func earlierReps(before first: Double, period: Double) -> [(time: Double, amplitude: Double)] {
        let c = configuration
        var from = first - c.lookbackPeriods * period
        if totalReps > 0 { from = max(from, lastRepTime + c.harmonicFactor * period) }
        guard from < first else { return [] }
        let h = max(c.minimumAmplitude, c.lookbackThresholdFraction * amplitudes.median / 2)
        var swingTimes: [Double] = []
        var swingPeaks: [Double] = []
        var side = 0
        history.forEach(in: from..<first) { time, value in
            let sign = value > h ? 1 : (value < -h ? -1 : 0)
            if sign != 0, sign != side {
                side = sign
                swingTimes.append(time)
                swingPeaks.append(abs(value))
            } else if sign != 0, let last = swingPeaks.indices.last {
                swingPeaks[last] = max(swingPeaks[last], abs(value))
            }
        }
        // The last swing found is the first half of `first`'s cycle; reps complete every second swing before it.
        var found: [(time: Double, amplitude: Double)] = []
        var next = first
        var index = swingTimes.count - 3
        while index >= 0 {
            let gap = next - swingTimes[index]
            if gap > 1.6 * period { break }
            if gap >= c.harmonicFactor * period {
                let amplitude = swingPeaks[index] + (index > 0 ? swingPeaks[index - 1] : swingPeaks[index])
                found.append((swingTimes[index], amplitude))
                next = swingTimes[index]
            }
            index -= 2
        }
        return found.reversed()
    }

    private mutating func countRep(at t: Double, duration: Double, amplitude: Double, into events: inout [WorkoutEvent]) {
        repInSet += 1
        totalReps += 1
        lastRepTime = t
        events.append(
            .rep(
                RepEvent(
                    setNumber: setNumber, repInSet: repInSet, totalReps: totalReps, timestamp: t,
                    duration: duration, amplitude: amplitude)))
    }

    /// Ends the open set. Cycles waiting for a rhythm stay: they may begin the next set.
    private mutating func endSet(into events: inout [WorkoutEvent]) {
        setActive = false
        setOpen = false
        events.append(.setEnded(SetEvent(setNumber: setNumber, timestamp: lastRepTime, repCount: repInSet)))
    }

    /// Whether a paused set must stay open past `restToEndSet`: a cycle that came within that time of its last rep
    /// may still be the first of a rhythm that continues it, until the rhythm's other cycles could no longer come.
    private func pausedSetMayContinue(at t: Double) -> Bool {
        guard !setActive, let first = pendingTimes.first else { return false }
        let c = configuration
        return first - lastRepTime <= c.restToEndSet && t - first <= c.maximumRepPeriod * Double(c.repsToStartSet - 1)
    }

    /// The set's threshold follows its typical half swing, or the last rep's when that was smaller: slower reps of
    /// the same depth accelerate less (∝ 1/period²), so a tiring lifter's next rep is likely smaller still.
    private mutating func updateSetThreshold() {
        let reference = min(amplitudes.median, lastAmplitude)
        setThreshold = max(configuration.minimumAmplitude, configuration.setThresholdFraction * reference / 2)
    }

    /// Adds a point to the step check's history, split along gravity and across it (every 40 ms of sample time; out
    /// of line, so that the per-sample path stays short).
    @inline(never)
    private mutating func addStepPoint(at t: Double, value: Double) {
        nextStepPoint = t + Self.stepPointInterval
        let g = (gravity.0 * gravity.0 + gravity.1 * gravity.1 + gravity.2 * gravity.2).squareRoot()
        guard g > 0 else { return }
        let inverse = 1 / g
        let down = (gravity.0 * inverse, gravity.1 * inverse, gravity.2 * inverse)
        steps.append(time: t, value: value, motion: smooth2, down: down)
    }

    private mutating func updateAlphas(_ dt: Double) {
        cachedStep = dt
        alphaGravity = 1 - exponential(-dt / configuration.gravityTimeConstant)
        alphaSmooth = 1 - exponential(-dt / configuration.smoothingTimeConstant)
        alphaAxis = 1 - exponential(-dt / configuration.axisTimeConstant)
        alphaLevel = 1 - exponential(-dt / configuration.levelTimeConstant)
    }
}
