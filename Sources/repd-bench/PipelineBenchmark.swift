import LinuxIIO
import MotionCore
import MotionFixtures
import MotionSimulation
import RepDetection
import RepProtocol

/// Fixture provider → sink → ring → detector → event encoding (what the hub does once per event), at full speed on
/// two threads, as the daemon runs them.
enum PipelineBenchmark {
    static func run(quick: Bool) -> [Figure] {
        var generator = WorkoutGenerator()
        generator.sets = quick ? 20 : 60
        generator.repsPerSet = [10]
        generator.sampleRate = 100
        let samples = generator.generate().samples
        var best = 0.0
        var reps = 0
        for _ in 0..<3 {
            let ends = RingBenchmark.Ends(capacity: 16384)
            let provider = FixtureMotionProvider(samples: samples, batchSize: 32)
            let start = monotonicNow()
            provider.attach(WaitingRingSink(ends))
            let producer = BenchThread { provider.replayAll() }
            var counted = 0
            let consumer = BenchThread {
                var detector = RepDetector()
                var batch: [MotionSample] = []
                batch.reserveCapacity(4096)
                var events: [WorkoutEvent] = []
                var received = 0
                var bytes = 0
                while received < samples.count {
                    batch.removeAll(keepingCapacity: true)
                    let n = ends.consumer.pop(into: &batch, limit: 4096)
                    if n == 0 { continue }
                    received += n
                    detector.process(batch, into: &events)
                    for event in events { bytes += JournaledEvent.workout(event, wall: 0).line.utf8.count }
                    events.removeAll(keepingCapacity: true)
                }
                detector.finish(into: &events)
                for event in events { bytes += JournaledEvent.workout(event, wall: 0).line.utf8.count }
                counted = detector.totalReps
                blackHole(bytes)
            }
            producer.join()
            consumer.join()
            best = max(best, Double(samples.count) / (monotonicNow() - start) / 1e6)
            reps = counted
        }
        return [
            Figure(
                key: "pipeline_msamples_per_s", value: best, unit: "M samples/s", goal: "",
                note: "\(samples.count) samples, \(reps) reps, provider → ring → detector → event lines")
        ]
    }
}

/// The daemon's sink, except that it waits for room instead of dropping a batch.
private final class WaitingRingSink: MotionSampleSink {
    let ends: RingBenchmark.Ends
    init(_ ends: RingBenchmark.Ends) { self.ends = ends }
    func receive(_ batch: UnsafeBufferPointer<MotionSample>) {
        while !ends.producer.push(batch) {}
    }
}
