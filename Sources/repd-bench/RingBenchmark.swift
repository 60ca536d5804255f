import LinuxIIO
import MotionCore
import Synchronization

/// The baseline: the same bounded ring behind a mutex, copying in bulk as `SPSCRing` does (at most two contiguous
/// copies per push and per pop, power-of-two capacity), so that the ratio of the two measures the locking alone.
final class MutexRing: @unchecked Sendable {
    // @unchecked: `storage` is only read and written while `indices` is locked.
    private struct Indices {
        var head = 0
        var tail = 0
    }
    private let indices = Mutex(Indices())
    private let storage: UnsafeMutablePointer<MotionSample>
    private let mask: Int
    var capacity: Int { mask + 1 }

    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "capacity must be a power of two")
        mask = capacity - 1
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: MotionSample(timestamp: 0, ax: 0, ay: 0, az: 0), count: capacity)
    }

    deinit { storage.deallocate() }

    func push(_ batch: UnsafeBufferPointer<MotionSample>) -> Bool {
        indices.withLock { i in
            let n = batch.count
            guard n <= capacity - (i.tail - i.head) else { return false }
            let start = i.tail & mask
            let first = min(n, capacity - start)
            (storage + start).update(from: batch.baseAddress!, count: first)
            if first < n { storage.update(from: batch.baseAddress! + first, count: n - first) }
            i.tail += n
            return true
        }
    }

    func pop(into out: inout [MotionSample]) -> Int {
        indices.withLock { i in
            let n = i.tail - i.head
            guard n > 0 else { return 0 }
            let start = i.head & mask
            let first = min(n, capacity - start)
            out.append(contentsOf: UnsafeBufferPointer(start: storage + start, count: first))
            if first < n { out.append(contentsOf: UnsafeBufferPointer(start: storage, count: n - first)) }
            i.head += n
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

        func measure(
            push: @escaping (UnsafeBufferPointer<MotionSample>) -> Bool, pop: @escaping (inout [MotionSample]) -> Int
        ) -> Double {
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

        // Alternate the two, one pair per repeat; the figures are the medians, the spread is min–max.
        var lockFree: [Double] = []
        var locked: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<(quick ? 3 : 7) {
            let ends = Ends(capacity: capacity)
            lockFree.append(measure(push: { ends.producer.push($0) }, pop: { ends.consumer.pop(into: &$0) }))
            let ring = MutexRing(capacity: capacity)
            locked.append(measure(push: { ring.push($0) }, pop: { ring.pop(into: &$0) }))
            ratios.append(lockFree.last! / locked.last!)
        }
        return [
            Figure(
                key: "ring_mops", samples: lockFree, unit: "M samples/s", goal: "",
                note: "SPSC ring, 2 threads, batches of 64, capacity \(capacity)"),
            Figure(
                key: "mutex_ring_mops", samples: locked, unit: "M samples/s", goal: "",
                note: "the same ring behind a Mutex (bulk copies too), same run"),
            Figure(
                key: "ring_vs_mutex", samples: ratios, unit: "×", goal: "≥ 4", note: "ratio within each pair of runs"),
        ]
    }
}
