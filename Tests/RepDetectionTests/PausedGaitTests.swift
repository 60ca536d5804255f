import MotionCore
import MotionSimulation
import Testing

@testable import RepDetection

/// `PausedGait` on grid points (25 a second): a walk or confidently refused motion, a pause, and a run after it.
@Suite("Gait that paused and goes on at its pace starts no set")
struct PausedGaitTests {
    /// Points of a second.
    static let second = Int((1 / MotionGrid.spacing).rounded())

    /// A walk of `points` grid points at `lag` from point 0, then `pause` non-periodic points.
    static func walked(points: Int, lag: Int, pause: Int) -> PausedGait {
        var gait = PausedGait()
        for i in 0..<points { gait.noteWalking(at: i, lag: lag) }
        for _ in 0..<pause { gait.notePause() }
        return gait
    }

    @Test("a walk, a pause of a second and a run at the walk's period (±15 %) within 10 s is held back")
    func walkPauseWalkIsHeldBack() {
        let gait = Self.walked(points: 40, lag: 27, pause: Self.second)
        let now = 39 + 3 * Self.second
        #expect(gait.holdsBack(at: now, lag: 27))
        #expect(gait.holdsBack(at: now, lag: 27 * 1.14))
        #expect(gait.holdsBack(at: now, lag: 27 / 1.14))
        #expect(!gait.holdsBack(at: now, lag: 27 * 1.2), "another pace")
        #expect(!gait.holdsBack(at: now, lag: 54), "twice the period: a set at another pace")
        #expect(gait.holdsBack(at: 39 + 10 * Self.second, lag: 27), "10 s after the walk's last point")
        #expect(!gait.holdsBack(at: 39 + 10 * Self.second + 1, lag: 27), "more than 10 s after the walk")
    }

    @Test("without a pause, or after a flicker of the walking rule, a run at the same period is not held back")
    func noPauseOrFlickerIsNotHeldBack() {
        let now = 39 + 3 * Self.second
        #expect(!Self.walked(points: 40, lag: 27, pause: Self.second - 1).holdsBack(at: now, lag: 27))
        #expect(!Self.walked(points: 7, lag: 27, pause: 2 * Self.second).holdsBack(at: now, lag: 27))
        #expect(Self.walked(points: 8, lag: 27, pause: 2 * Self.second).holdsBack(at: now, lag: 27))
        #expect(!PausedGait().holdsBack(at: now, lag: 27), "no gait yet")
    }

    @Test("a flicker of walking after a walk leaves the walk held; a new walk of 8 points replaces it")
    func aFlickerLeavesTheWalk() {
        var gait = Self.walked(points: 40, lag: 27, pause: 2 * Self.second)
        for i in 100..<103 { gait.noteWalking(at: i, lag: 40) }
        for _ in 0..<(2 * Self.second) { gait.notePause() }
        let now = 103 + 3 * Self.second
        #expect(gait.holdsBack(at: now, lag: 27), "three walking points at another period are not gait")
        #expect(!gait.holdsBack(at: now, lag: 40))
        #expect(
            !gait.holdsBack(at: 39 + 10 * Self.second + 1, lag: 27), "the memory runs from the walk, not the flicker")
        for i in 200..<208 { gait.noteWalking(at: i, lag: 40) }
        for _ in 0..<Self.second { gait.notePause() }
        #expect(gait.holdsBack(at: 208 + 2 * Self.second, lag: 40))
        #expect(!gait.holdsBack(at: 208 + 2 * Self.second, lag: 27), "the new walk's period replaced the old one's")
    }

    @Test("two confident refusals outside a set are gait; one is not")
    func refusalsMakeGait() {
        var once = PausedGait()
        once.noteRefusal(at: 0, lag: 22)
        for _ in 0..<Self.second { once.notePause() }
        #expect(!once.holdsBack(at: 5 * Self.second, lag: 22))
        var apart = once
        apart.noteRefusal(at: 2 * Self.second, lag: 22)
        for _ in 0..<Self.second { apart.notePause() }
        #expect(!apart.holdsBack(at: 5 * Self.second, lag: 22), "two refusals a pause apart are two runs of one")
        var refused = PausedGait()
        refused.noteRefusal(at: 0, lag: 22)
        refused.noteRefusal(at: 4, lag: 22)
        for _ in 0..<Self.second { refused.notePause() }
        #expect(refused.holdsBack(at: 5 * Self.second, lag: 22))
        #expect(!refused.holdsBack(at: 5 * Self.second, lag: 30))
    }

    /// The detector's tracked period (s) at the last moment it judged `samples` walking, and that moment's time (0 and
    /// 0 if none).
    static func walking(_ samples: [MotionSample], configuration: RepDetectorConfiguration) -> (Double, Double) {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var last = (0.0, 0.0)
        for sample in samples {
            detector.process([sample], into: &events)
            if detector.isWalking { last = (detector.period, sample.timestamp) }
        }
        return last
    }

    /// `samples` followed by `seconds` of a still wrist (gravity along z) and then `count` reps of a 0.3 g sine across
    /// gravity at `period`, with 10 s of stillness after.
    static func then(_ samples: [MotionSample], still seconds: Double, reps count: Int, at period: Double)
        -> [MotionSample]
    {
        var all = samples
        var t = (samples.last?.timestamp ?? 0) + 0.02
        let end = t + seconds
        while t < end {
            all.append(MotionSample(timestamp: t, ax: 0, ay: 0, az: 1))
            t += 0.02
        }
        let set = sineSet(
            repCount: count, frequency: 1 / period, amplitude: 0.3, leadSeconds: 0, extraSeconds: 10, seed: 3)
        let offset = t - (set.first?.timestamp ?? 0)
        all += set.map { MotionSample(timestamp: $0.timestamp + offset, ax: $0.ax, ay: $0.ay, az: $0.az) }
        return all
    }

    /// When the detector, fed `samples` one by one, first has a set open (nil if never), and its final count.
    static func firstSet(_ samples: [MotionSample], configuration: RepDetectorConfiguration) -> (Double?, Int) {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var started: Double?
        for sample in samples {
            detector.process([sample], into: &events)
            if started == nil, detector.inSet { started = sample.timestamp }
        }
        detector.finish(into: &events)
        let count = events.reduce(0) { sum, event in
            if case .setEnded(let set) = event { sum + set.repCount } else { sum }
        }
        return (started, count)
    }

    @Test(
        """
        through the detector (gate off, the walking rule on): after a walk and a 2 s pause, a set at the walk's \
        period starts 10 s after the walk and counts every rep; after a 14 s pause, or at 1.6 times the period, it \
        starts seconds after its first rep
        """)
    func detectorHoldsBackTheWalksPaceAfterAPause() {
        var configuration = RepDetectorConfiguration()
        configuration.minimumExerciseLikelihood = 0
        var generator = WalkingGenerator()
        generator.walkSeconds = 20
        generator.upDirection = .z
        let walk = generator.samples()
        let end = walk.last?.timestamp ?? 0
        let (period, lastWalking) = Self.walking(walk, configuration: configuration)
        #expect(period > 0.3, "the premise: the detector judged the walk walking")
        #expect(repCount(walk, configuration: configuration) == 0, "the walk itself")
        let firstRep = end + 2.02
        let (held, heldCount) = Self.firstSet(
            Self.then(walk, still: 2, reps: 8, at: period), configuration: configuration)
        #expect((held ?? 0) >= lastWalking + PausedGait.memory - 0.1, "starts when the walk's memory ends")
        #expect(heldCount == 8, "the look-back finds the reps before the start")
        let (other, otherCount) = Self.firstSet(
            Self.then(walk, still: 2, reps: 8, at: 1.6 * period), configuration: configuration)
        #expect((other ?? .infinity) - firstRep <= 5, "another pace starts as soon as it repeats")
        #expect(otherCount == 8)
        let (rested, restedCount) = Self.firstSet(
            Self.then(walk, still: 14, reps: 8, at: period), configuration: configuration)
        #expect((rested ?? .infinity) - (firstRep + 12) <= 4, "the walk's pace after a rest past the memory")
        #expect(restedCount == 8)
    }
}
