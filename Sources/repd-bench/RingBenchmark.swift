import LinuxIIO
import MotionCore
import Synchronization

/// The baseline: the same bounded ring protected by a mutex.
final class MutexRing: Sendable {
    private struct State {
        var buffer: [MotionSample]
        var head = 0
        var tail = 0
    }
    private let state: Mutex<State>
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        state = Mutex(State(buffer: Array(repeating: MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: capacity)))
    }

    func push(_ batch: UnsafeBufferPointer<MotionSample>) -> Bool {
        state.withLock { s in
            guard s.tail - s.head + batch.count <= capacity else { return false }
            for sample in batch {
                s.buffer[s.tail % capacity] = sample
                s.tail += 1
            }
            return true
        }
    }

    func pop(into out: inout [MotionSample]) -> Int {
        state.withLock { s in
            let n = s.tail - s.head
            for i in 0..<n { out.append(s.buffer[(s.head + i) % capacity]) }
            s.head += n
            return n
        }
    }
}

/// Moves `total` samples from one thread to another through the ring, batches of 64.
enum RingBenchmark {
    final class Ends: Sendable {
        let producer: SPSCRing<MotionSample>.Producer
        let consumer: SPSCRing<MotionSample>.Consumer
        init(capacity: Int) {
            let ends = SPSCRing<MotionSample>.make(capacity: capacity)
            producer = ends.producer
            consumer = ends.consumer
        }
    }

    static func run(quick: Bool) -> [Figure] {
        let total = quick ? 4_000_000 : 20_000_000
        let capacity = 4096
        let batch = (0..<64).map { MotionSample(timestamp: Double($0), ax: 0, ay: 0, az: 1) }

        func measure(push: @escaping (UnsafeBufferPointer<MotionSample>) -> Bool, pop: @escaping (inout [MotionSample]) -> Int) -> Double {
            let start = monotonicNow()
            let producer = BenchThread {
                batch.withUnsafeBufferPointer { buffer in
                    var sent = 0
                    while sent < total {
                        if push(buffer) { sent += buffer.count }
                    }
                }
            }
            let consumer = BenchThread {
                var out: [MotionSample] = []
                out.reserveCapacity(capacity)
                var received = 0
                while received < total {
                    out.removeAll(keepingCapacity: true)
                    received += pop(&out)
                }
            }
            producer.join()
            consumer.join()
            return Double(total) / (monotonicNow() - start) / 1e6
        }

        var lockFree = 0.0
        var locked = 0.0
        for _ in 0..<3 {  // alternate, keep the best of each (least disturbed)
            let ends = Ends(capacity: capacity)
            lockFree = max(lockFree, measure(push: { ends.producer.push($0) }, pop: { ends.consumer.pop(into: &$0) }))
            let ring = MutexRing(capacity: capacity)
            locked = max(locked, measure(push: { ring.push($0) }, pop: { ring.pop(into: &$0) }))
        }
        return [
            Figure(key: "ring_mops", value: lockFree, unit: "M samples/s", goal: "", note: "SPSC ring, 2 threads, batches of 64, capacity \(capacity)"),
            Figure(key: "mutex_ring_mops", value: locked, unit: "M samples/s", goal: "", note: "the same ring behind a Mutex, same run"),
            Figure(key: "ring_vs_mutex", value: lockFree / locked, unit: "×", goal: "≥ 4", note: "ratio of the two"),
        ]
    }
}
