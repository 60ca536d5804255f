import MotionCore

/// Builds sample arrays from functions of time: "mock the accelerometer with a function of time".
public enum SignalGenerator {
    /// Samples `signal` at `sampleRate` Hz for `duration` seconds, starting at `start`.
    ///
    /// The function receives the sample time and returns the sample; its `timestamp` is overwritten with that time.
    public static func samples(
        duration: Double,
        sampleRate: Double,
        start: Double = 0,
        _ signal: (Double) -> MotionSample
    ) -> [MotionSample] {
        precondition(sampleRate > 0 && duration >= 0, "sampleRate must be > 0 and duration ≥ 0")
        let count = Int((duration * sampleRate).rounded(.down)) + 1
        var result: [MotionSample] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            let t = start + Double(index) / sampleRate
            var sample = signal(t)
            sample.timestamp = t
            result.append(sample)
        }
        return result
    }

    /// Samples an acceleration function (g, sensor frame) at `sampleRate` Hz for `duration` seconds.
    public static func samples(
        duration: Double,
        sampleRate: Double,
        start: Double = 0,
        acceleration: (Double) -> Vector3
    ) -> [MotionSample] {
        samples(duration: duration, sampleRate: sampleRate, start: start) { t in
            let a = acceleration(t)
            return MotionSample(timestamp: t, ax: a.x, ay: a.y, az: a.z)
        }
    }

    /// The classic rep test signal: `repCount` cycles of a `frequency` Hz sine of `amplitude` g along y, sampled at
    /// `sampleRate` Hz, followed by `extraSeconds` of stillness, with 1 g of gravity on z.
    ///
    /// With the defaults this is the familiar `makeSamples(repCount: 10)`: 1.5 Hz on y, 50 Hz, 6 s extra.
    public static func makeSamples(
        repCount: Int,
        frequency: Double = 1.5,
        amplitude: Double = 0.5,
        sampleRate: Double = 50,
        extraSeconds: Double = 6
    ) -> [MotionSample] {
        let active = Double(repCount) / frequency
        let sine = SineMotion(frequency: frequency, amplitude: amplitude, direction: .y, gravity: .z)
        return samples(duration: active + extraSeconds, sampleRate: sampleRate) { t in
            t < active ? sine.sample(at: t) : MotionSample(timestamp: t, ax: 0, ay: 0, az: 1)
        }
    }

    /// A set of sine "reps" framed by stillness: `leadSeconds` still, `count` cycles of `motion`, `extraSeconds`
    /// still, with white noise of `noise` g (standard deviation) on every axis from a seeded generator.
    public static func repetitions(
        count: Int,
        of motion: SineMotion,
        sampleRate: Double = 50,
        noise: Double = 0,
        leadSeconds: Double = 2,
        extraSeconds: Double = 6,
        seed: UInt64 = 1
    ) -> [MotionSample] {
        var random = SeededGenerator(seed: seed)
        let active = Double(count) / motion.frequency
        let g = motion.gravity
        return samples(duration: leadSeconds + active + extraSeconds, sampleRate: sampleRate) { t in
            let local = t - leadSeconds
            var s =
                local >= 0 && local < active
                ? motion.sample(at: local) : MotionSample(timestamp: t, ax: g.x, ay: g.y, az: g.z)
            if noise > 0 {
                s.ax += random.nextGaussian(standardDeviation: noise)
                s.ay += random.nextGaussian(standardDeviation: noise)
                s.az += random.nextGaussian(standardDeviation: noise)
            }
            return s
        }
    }
}
