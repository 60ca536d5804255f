import MotionCore

/// Generates a wrist sensor's view of walking, to check that walking between sets counts no reps.
///
/// A physical model in the body's sagittal plane: the arm (shoulder to wrist, `armLength`) swings as a pendulum
/// once per stride, `θ(t) = θ₀ sin φ + 0.1 θ₀ sin(2φ + 0.5)`, φ advancing at the stride frequency (which wanders
/// ±3 % over about 14 s); the shoulder bounces once per step, twice per stride: `bounce` g up and down, 0.4 ×
/// that forwards and back, and a heel strike (a pulse of `heelStrike` g lasting about 0.1 s). The accelerometer,
/// fixed to the forearm (bent `elbowDegrees` from the arm), measures the wrist's acceleration (the arm's tangential
/// θ̈ and centripetal θ̇² terms plus the shoulder's) minus gravity, in its own rotating frame. Walking ramps up and
/// down over a second, after `leadSeconds` of stillness and before as many.
public struct WalkingGenerator: Sendable {
    /// Strides per second (one arm swing forward and back, two steps).
    public var strideFrequency: Double = 0.95
    /// Peak arm swing either side of vertical, in degrees.
    public var swingDegrees: Double = 20
    /// Peak vertical bounce of the body at each step, in g.
    public var bounce: Double = 0.25
    /// Peak of the heel-strike pulse at each step, in g.
    public var heelStrike: Double = 0.5
    /// Forearm bend from the arm's line, in degrees.
    public var elbowDegrees: Double = 10
    /// Shoulder to wrist, in metres.
    public var armLength: Double = 0.65
    /// Seconds of walking (including the ramps up and down).
    public var walkSeconds: Double = 30
    /// Seconds of stillness before and after.
    public var leadSeconds: Double = 3
    /// The sensor axis that reads +1 g when the arm hangs still (normalized on use).
    public var upDirection: Vector3 = .z
    /// Standard deviation of white sensor noise, in g.
    public var noise: Double = 0.01
    /// Samples per second.
    public var sampleRate: Double = 50
    /// The random seed (noise only): the same seed gives the same samples.
    public var seed: UInt64 = 1

    /// A walk with the default parameters: 30 s at 0.95 strides/s with ±20° of arm swing.
    public init() {}

    /// Generates the samples, starting at `start` seconds.
    public func samples(start: Double = 0) -> [MotionSample] {
        precondition(sampleRate > 0 && strideFrequency > 0 && walkSeconds >= 0 && leadSeconds >= 0, "invalid walk")
        var random = SeededGenerator(seed: seed)
        let up = upDirection.normalized
        let forward = WorkoutGenerator.perpendicular(to: up)
        let g = 9.80665
        let theta0 = swingDegrees * Double.pi / 180
        let elbow = elbowDegrees * Double.pi / 180
        let total = walkSeconds + 2 * leadSeconds
        let count = Int((total * sampleRate).rounded(.down)) + 1
        var result: [MotionSample] = []
        result.reserveCapacity(count)
        var phase = 0.0
        for index in 0..<count {
            let t = Double(index) / sampleRate
            let walking = t - leadSeconds
            let ramp = max(0, min(1, walking, walkSeconds - walking))
            let omega = 2 * Double.pi * strideFrequency * (1 + 0.03 * _sin(2 * Double.pi * 0.07 * t))
            phase += omega / sampleRate
            let amplitude = theta0 * ramp
            let theta = amplitude * (_sin(phase) + 0.1 * _sin(2 * phase + 0.5))
            let thetaDot = amplitude * omega * (_cos(phase) + 0.2 * _cos(2 * phase + 0.5))
            let thetaDDot = -amplitude * omega * omega * (_sin(phase) + 0.4 * _sin(2 * phase + 0.5))
            // The wrist about the shoulder, r = L (sin θ, −cos θ): forward and up components of r̈.
            var forwardAcceleration = armLength * (thetaDDot * _cos(theta) - thetaDot * thetaDot * _sin(theta))
            var upAcceleration = armLength * (thetaDDot * _sin(theta) + thetaDot * thetaDot * _cos(theta))
            // The shoulder: one bounce and one heel strike per step.
            let stepPhase = 2 * phase
            upAcceleration += ramp * g * bounce * _cos(stepPhase + 0.3)
            forwardAcceleration += ramp * g * 0.4 * bounce * _sin(stepPhase)
            let sinceStrike = stepPhase.truncatingRemainder(dividingBy: 2 * Double.pi) - 0.2
            upAcceleration += ramp * g * heelStrike * _exp(-0.5 * (sinceStrike / 0.25) * (sinceStrike / 0.25))
            // Specific force in g, then into the forearm's frame (rotated by θ plus the elbow's bend).
            let fForward = forwardAcceleration / g
            let fUp = upAcceleration / g + 1
            let angle = theta + elbow
            let across = _cos(angle) * fForward + _sin(angle) * fUp
            let along = -_sin(angle) * fForward + _cos(angle) * fUp
            let a = up * along + forward * across
            result.append(
                MotionSample(
                    timestamp: start + t,
                    ax: a.x + random.nextGaussian(standardDeviation: noise),
                    ay: a.y + random.nextGaussian(standardDeviation: noise),
                    az: a.z + random.nextGaussian(standardDeviation: noise)))
        }
        return result
    }
}
