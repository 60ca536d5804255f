import MotionCore
import MotionSimulation
import RepDetection
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A set whose reps turn the wrist for good is dismissed at its end with the gate on (`RepDetector`'s
/// `gateTurnedRepDegrees`, docs/DETECTOR.md, "Reps that turn the wrist for good"); reps that turn the wrist and bring
/// it back, however far, are not.
@Suite("Reps that turn the wrist for good")
struct TurnedRepTests {
    static let rate = 50.0

    /// 4 s still, then `count` reps of `period` s that each tilt the wrist `degrees` about x (gravity from z towards
    /// y) over a second, hold it, and tilt it back over a second half a period later; then 12 s still.
    static func tilts(degrees: Double, count: Int = 8, period: Double = 3) -> [MotionSample] {
        var random = SeededGenerator(seed: 7)
        let lead = 4.0
        let end = lead + Double(count) * period
        return SignalGenerator.samples(duration: end + 12, sampleRate: rate, start: 0) { t in
            var share = 0.0
            if t >= lead, t < end {
                let u = (t - lead).truncatingRemainder(dividingBy: period)
                if u < 1 {
                    share = 0.5 - 0.5 * cos(.pi * u)
                } else if u < period / 2 {
                    share = 1
                } else if u < period / 2 + 1 {
                    share = 0.5 + 0.5 * cos(.pi * (u - period / 2))
                }
            }
            let angle = degrees * .pi / 180 * share
            return MotionSample(
                timestamp: t, ax: random.nextGaussian(standardDeviation: 0.01),
                ay: sin(angle) + random.nextGaussian(standardDeviation: 0.01),
                az: cos(angle) + random.nextGaussian(standardDeviation: 0.01))
        }
    }

    @Test(
        "Reps that tilt the wrist up to 90° and back count every rep with the gate on", arguments: [20.0, 45, 60, 90])
    func tiltsThatComeBackCount(degrees: Double) {
        var gateOn = RepDetectorConfiguration()
        gateOn.exerciseGate = .constant(probability: 0.99)
        var gateOff = RepDetectorConfiguration()
        gateOff.minimumExerciseLikelihood = 0
        let samples = Self.tilts(degrees: degrees)
        #expect(repCount(samples, configuration: gateOff) == 8)
        #expect(repCount(samples, configuration: gateOn) == 8)
    }
}
