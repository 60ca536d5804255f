import MotionCore
import RepDetection

/// Generates a set of barbell reps as an accelerometer fixed to the bar sees it, and the truth about each rep.
///
/// Physics: each phase moves the bar vertically over the range of motion along a minimum-jerk profile
/// `10u³ − 15u⁴ + 6u⁵` on a warped clock `u = τ + α τ(1 − τ)` (α > 0: the bar accelerates hard and brakes longer, as
/// a concentric phase does; α < 0 the other way round), so position, velocity and acceleration are smooth and start
/// and end at rest. A squat or bench press starts at the top (eccentric, pause at the bottom, concentric, pause at
/// the top), a deadlift on the floor (concentric, pause at lockout, eccentric, pause on the floor). The mean
/// concentric velocity of rep k falls from `firstMeanVelocity` by `velocityLoss` at the last rep (a set to failure
/// slows down). Between reps the bar rests at the start position for `startPause` (0: touch-and-go, the next rep
/// begins the moment the last one stops), perfectly still unless `restMotion` moves it a little; it pauses
/// `turnaroundPause` at the far turnaround (a paused squat or bench press: 1–2 s). While the bar goes down it drifts horizontally by up to `horizontalTravel` (a bench press's J
/// curve) and tilts by up to `tiltDegrees` about a horizontal axis; the sensor, fixed to the bar in an arbitrary
/// orientation, turns with it. The accelerometer measures specific force (gravity included, in g) with a per-axis
/// scale error, bias and white noise.
///
/// The truth of each rep is measured by `RepKinematics` from the exact vertical velocity and position (on a 1 kHz
/// grid), with the same phase rules repd uses on its estimate.
public struct BarbellGenerator: Sendable {
    /// The lifts modelled.
    public enum Lift: String, Sendable, CaseIterable {
        /// Starts at the top; a squat's horizontal drift is small.
        case squat
        /// Starts at the top (arms locked out), with a J-curve of several centimetres.
        case bench
        /// Starts on the floor, concentric first.
        case deadlift
    }

    /// The lift.
    public var lift: Lift = .squat
    /// Reps in the set.
    public var reps = 6
    /// Planned mean concentric velocity of the first rep, m/s: range of motion / duration of the whole concentric
    /// movement, from standstill to standstill. The truth's mean (`RepKinematics`: the phase is where the bar moves
    /// faster than a tenth of its peak speed, leaving out the slow ends) is 1.22 times this, unless braking within
    /// gravity made the rep slower.
    public var firstMeanVelocity = 0.6
    /// The last rep's planned mean concentric velocity is this fraction slower than the first's (0.3: 30 % loss).
    public var velocityLoss = 0.3
    /// Vertical range of motion, m.
    public var rangeOfMotion = 0.5
    /// Mean eccentric (downward) velocity, m/s.
    public var eccentricMeanVelocity = 0.5
    /// Pause at the start position between reps, s (each varies by up to a third); 0: touch-and-go, no rest at all
    /// between reps (the bar stops for an instant and goes on).
    public var startPause = 0.8
    /// Pause at the far turnaround, s (a paused squat or bench press holds 1–2 s at the bottom, a deadlift can hold
    /// the lockout as long).
    public var turnaroundPause = 0.1
    /// How far the bar moves while it rests at the start position between reps, m (0: perfectly still). During each
    /// such rest it moves towards the turnaround and back once, smoothly (a squat or bench bar sinks as the lifter
    /// breathes and braces, a deadlift bar is lifted off the floor as the lifter takes the slack), by this times a
    /// factor drawn from 0.5 to 1 per rest, over the whole rest: the bar is never still between reps.
    public var restMotion = 0.0
    /// Peak tilt of the bar during a rep, degrees.
    public var tiltDegrees = 5.0
    /// Horizontal drift of the bar at the bottom of a rep, m (nil: the lift's own share of the range of motion:
    /// squat 6 %, bench 15 %, deadlift 8 %; a bench press's J curve moves the bar 5–10 cm over 40–50 cm).
    public var horizontalTravel: Double?
    /// White noise on each axis, g RMS.
    public var noise = 0.01
    /// Bias of each axis, g (each axis gets ± this, the sign at random).
    public var bias = 0.02
    /// Scale error of each axis (each axis gets 1 ± this, the sign at random).
    public var scaleError = 0.01
    /// Samples per second.
    public var sampleRate = 100.0
    /// Seconds of stillness before the first rep and after the last.
    public var leadSeconds = 3.0
    /// Whether the sensor is mounted in a random orientation (drawn from the seed); false: its z axis points up
    /// and x, y lie horizontal.
    public var randomOrientation = true
    /// The random seed (sensor orientation, tilt axis, sensor errors, noise, pauses).
    public var seed: UInt64 = 1

    /// A set with the defaults (6 squats from 0.6 m/s, 30 % loss, 0.5 m, 100 Hz).
    public init() {}

    /// One rep's truth.
    public struct RepTruth: Sendable, Equatable {
        /// When the rep began and stopped moving (planned), s.
        public var movementStart: Double
        /// See `movementStart`.
        public var movementEnd: Double
        /// The rep measured from the exact kinematics (with `RepKinematics`, as repd measures its estimate).
        public var quality: RepQuality
    }

    /// What the generator produced.
    public struct BarbellSet: Sendable {
        /// The accelerometer's samples (g, gravity included), in time order.
        public var samples: [MotionSample]
        /// Each rep's truth, in order.
        public var reps: [RepTruth]
        /// The set's velocity loss (last rep against the fastest), percent, from the true mean velocities.
        public var velocityLoss: Double
    }

    /// One planned phase: vertical motion from `from` to `to` (m) between `start` and `start + duration`.
    private struct Phase {
        var start: Double
        var duration: Double
        var from: Double
        var to: Double
        var warp: Double

        /// Position, velocity and acceleration at `t` (clamped to the phase).
        func kinematics(_ t: Double) -> (p: Double, v: Double, a: Double) {
            let tau = min(max((t - start) / duration, 0), 1)
            let u = tau + warp * tau * (1 - tau)
            let du = 1 + warp * (1 - 2 * tau), ddu = -2 * warp
            let s = u * u * u * (10 - 15 * u + 6 * u * u)
            let s1 = 30 * u * u * (1 - u) * (1 - u)
            let s2 = 60 * u * (1 - u) * (1 - 2 * u)
            let d = to - from
            let inside = t > start && t < start + duration
            return (
                from + d * s, inside ? d * s1 * du / duration : 0,
                inside ? d * (s2 * du * du + s1 * ddu) / (duration * duration) : 0
            )
        }
    }

    /// A load cannot brake harder than gravity pulls it (the lifter does not pull a bar down): a fast concentric
    /// phase gets a longer braking part (a larger warp), and when even that is not enough, a longer duration (its
    /// mean velocity is then lower than planned; the truth says what it was).
    private static func brakingWithinGravity(_ phase: Phase) -> Phase {
        let limit = -0.9 * MotionSample.standardGravity
        func lowest(_ p: Phase) -> Double {
            var low = 0.0
            for i in 1..<200 { low = min(low, p.kinematics(p.duration * Double(i) / 200).a) }
            return low
        }
        var p = phase
        while lowest(p) < limit, p.warp < 0.9 { p.warp += 0.05 }
        let low = lowest(p)
        if low < limit { p.duration *= (low / limit).squareRoot() * 1.01 }
        return p
    }

    /// Generates the set.
    public func generate() -> BarbellSet {
        precondition(
            reps > 0 && sampleRate > 0 && rangeOfMotion > 0 && firstMeanVelocity > 0 && startPause >= 0
                && turnaroundPause >= 0 && restMotion >= 0 && restMotion < rangeOfMotion,
            "invalid barbell set")
        var random = SeededGenerator(seed: seed)
        let rom = rangeOfMotion
        let topStart = lift != .deadlift
        // The plan: per rep, two phases.
        var phases: [Phase] = []
        var movements: [(Double, Double)] = []
        // The rests at the start position that move: start, duration, signed height. Drawn from their own sequence,
        // so that a set with rest motion has the same sensor, pauses and noise as the same seed without.
        var rests: [(start: Double, duration: Double, height: Double)] = []
        var restRandom = SeededGenerator(seed: seed ^ 0x5245_5354)
        var t = leadSeconds
        for k in 0..<reps {
            let place = reps > 1 ? Double(k) / Double(reps - 1) : 0
            let mean = firstMeanVelocity * (1 - velocityLoss * place)
            let concentric = Self.brakingWithinGravity(
                Phase(start: 0, duration: rom / mean, from: 0, to: rom, warp: 0.25))
            let eccentric = Phase(start: 0, duration: rom / eccentricMeanVelocity, from: 0, to: 0, warp: -0.2)
            let first = topStart ? eccentric : concentric
            let second = topStart ? concentric : eccentric
            let low = topStart ? -rom : 0.0, high = topStart ? 0.0 : rom
            let start = t
            phases.append(
                Phase(
                    start: t, duration: first.duration, from: topStart ? high : low, to: topStart ? low : high,
                    warp: first.warp))
            t += first.duration + turnaroundPause
            phases.append(
                Phase(
                    start: t, duration: second.duration, from: topStart ? low : high, to: topStart ? high : low,
                    warp: second.warp))
            t += second.duration
            movements.append((start, t))
            if k < reps - 1 {
                let pause = startPause * (1 + Double.random(in: -1.0 / 3...1.0 / 3, using: &random))
                if restMotion > 0, pause > 0 {
                    let height = restMotion * Double.random(in: 0.5...1, using: &restRandom)
                    rests.append((t, pause, topStart ? -height : height))
                }
                t += pause
            }
        }
        let duration = t + leadSeconds
        let base = topStart ? 0.0 : 0.0

        // Exact kinematics at any time: vertical position relative to the start, velocity, acceleration.
        func vertical(_ time: Double) -> (p: Double, v: Double, a: Double) {
            // The phase in progress, else the last one finished (holding its end position).
            var current: Phase?
            for phase in phases where phase.start <= time { current = phase }
            guard let phase = current else { return (base, 0, 0) }
            var (p, v, a) = phase.kinematics(time)
            // A moving rest: height × sin⁴(πτ), smooth in position, velocity and acceleration at both ends.
            for rest in rests where time > rest.start && time < rest.start + rest.duration {
                let w = Double.pi / rest.duration
                let x = w * (time - rest.start)
                let s = _sin(x), c = _cos(x)
                p += rest.height * s * s * s * s
                v += rest.height * 4 * w * s * s * s * c
                a += rest.height * 4 * w * w * s * s * (3 * c * c - s * s)
            }
            return (p, v, a)
        }

        // Sensor: an arbitrary mounting, a horizontal tilt axis, per-axis scale error and bias.
        let drawn = Rotation.random(using: &random)
        let mount = randomOrientation ? drawn : Rotation(axis: .z, angle: 0)
        let azimuth = Double.random(in: 0..<(2 * Double.pi), using: &random)
        let tiltAxis = Vector3(_cos(azimuth), _sin(azimuth), 0)
        let driftAzimuth = Double.random(in: 0..<(2 * Double.pi), using: &random)
        let drift = Vector3(_cos(driftAzimuth), _sin(driftAzimuth), 0)
        let travel = horizontalTravel ?? rom * (lift == .squat ? 0.06 : lift == .bench ? 0.15 : 0.08)
        func sign() -> Double { Bool.random(using: &random) ? 1 : -1 }
        let scale = Vector3(1 + sign() * scaleError, 1 + sign() * scaleError, 1 + sign() * scaleError)
        let offset = Vector3(sign() * bias, sign() * bias, sign() * bias)
        let tilt = tiltDegrees * Double.pi / 180
        let g = MotionSample.standardGravity

        let count = Int((duration * sampleRate).rounded(.down)) + 1
        var samples: [MotionSample] = []
        samples.reserveCapacity(count)
        for index in 0..<count {
            let time = Double(index) / sampleRate
            let (p, _, a) = vertical(time)
            // Depth below (or height above) the start, 0…1: the bar drifts and tilts with it.
            let depth = abs(p - base) / rom
            let depthAcceleration = (topStart ? -a : a) / rom  // d²(depth)/dt²
            let horizontal = drift * (travel * depthAcceleration)
            // Specific force in the world (z up), m/s², then in the tilted bar's frame, then the sensor's.
            let world = Vector3(horizontal.x, horizontal.y, g + a)
            let bar = Rotation(axis: tiltAxis, angle: tilt * depth).transposed.apply(world)
            let sensor = mount.apply(bar) * (1 / g)
            samples.append(
                MotionSample(
                    timestamp: time,
                    ax: sensor.x * scale.x + offset.x + random.nextGaussian(standardDeviation: noise),
                    ay: sensor.y * scale.y + offset.y + random.nextGaussian(standardDeviation: noise),
                    az: sensor.z * scale.z + offset.z + random.nextGaussian(standardDeviation: noise)))
        }

        // The truth, measured from the exact kinematics on a 1 kHz grid.
        var truths: [RepTruth] = []
        var previous: RepKinematics.Measure?
        for (k, movement) in movements.enumerated() {
            let before = k > 0 ? (movement.0 - movements[k - 1].1) / 2 : 0.2
            let after = k < movements.count - 1 ? (movements[k + 1].0 - movement.1) / 2 : 0.2
            let from = movement.0 - before, to = movement.1 + after
            var times: [Double] = [], velocity: [Double] = [], position: [Double] = []
            var time = from
            while time <= to {
                let (p, v, _) = vertical(time)
                times.append(time)
                velocity.append(v)
                position.append(p)
                time += 0.001
            }
            guard let measure = RepKinematics.measure(times: times, velocity: velocity, position: position) else {
                continue
            }
            truths.append(
                RepTruth(
                    movementStart: movement.0, movementEnd: movement.1,
                    quality: measure.quality(start: from, end: to, previous: previous, velocities: true)))
            previous = measure
        }
        let set = SetQuality(reps: truths.map(\.quality))
        for index in truths.indices { truths[index].quality = set.reps[index] }
        return BarbellSet(samples: samples, reps: truths, velocityLoss: set.velocityLoss ?? 0)
    }
}

/// A rotation as a 3×3 matrix (rows).
struct Rotation: Sendable {
    var r0: Vector3, r1: Vector3, r2: Vector3

    /// Rotation by `angle` (radians) about the unit vector `axis` (Rodrigues).
    init(axis: Vector3, angle: Double) {
        let c = _cos(angle), s = _sin(angle), t = 1 - c
        let x = axis.x, y = axis.y, z = axis.z
        r0 = Vector3(t * x * x + c, t * x * y - s * z, t * x * z + s * y)
        r1 = Vector3(t * x * y + s * z, t * y * y + c, t * y * z - s * x)
        r2 = Vector3(t * x * z - s * y, t * y * z + s * x, t * z * z + c)
    }

    init(r0: Vector3, r1: Vector3, r2: Vector3) {
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
    }

    /// A rotation drawn uniformly (a random unit quaternion).
    static func random(using random: inout SeededGenerator) -> Rotation {
        var q = (0.0, 0.0, 0.0, 0.0)
        var norm = 0.0
        repeat {
            q = (random.nextGaussian(), random.nextGaussian(), random.nextGaussian(), random.nextGaussian())
            norm = (q.0 * q.0 + q.1 * q.1 + q.2 * q.2 + q.3 * q.3).squareRoot()
        } while norm < 1e-6
        let (w, x, y, z) = (q.0 / norm, q.1 / norm, q.2 / norm, q.3 / norm)
        return Rotation(
            r0: Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
            r1: Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
            r2: Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
    }

    var transposed: Rotation {
        Rotation(
            r0: Vector3(r0.x, r1.x, r2.x), r1: Vector3(r0.y, r1.y, r2.y), r2: Vector3(r0.z, r1.z, r2.z))
    }

    func apply(_ v: Vector3) -> Vector3 { Vector3(r0.dot(v), r1.dot(v), r2.dot(v)) }
}
