import Foundation
import MotionCore
import Synchronization
import Testing

@Suite("SPSC ring")
struct SPSCRingTests {
    @Test("capacity rounds up to a power of two; an empty ring pops nothing")
    func capacity() {
        let ends = SPSCRing<MotionSample>.make(capacity: 1000)
        let consumer = ends.consumer
        let capacity = consumer.statistics.capacity
        #expect(capacity == 1024)
        var out: [MotionSample] = []
        let popped = consumer.pop(into: &out)
        let empty = consumer.isEmpty
        #expect(popped == 0)
        #expect(empty)
    }

    @Test("a full ring drops the newest batch whole and counts it; queued data stays and keeps its order")
    func dropsWhenFull() {
        let ends = SPSCRing<MotionSample>.make(capacity: 16)
        let producer = ends.producer
        let consumer = ends.consumer
        var pushed: [MotionSample] = []
        for batch in 0..<4 {
            let samples = rampSamples(count: 5, start: Double(batch * 5))
            if producer.push(samples) { pushed += samples }
        }
        #expect(pushed.count == 15)
        let statistics = producer.statistics
        #expect(statistics.droppedBatches == 1)
        #expect(statistics.droppedElements == 5)
        var out: [MotionSample] = []
        let popped = consumer.pop(into: &out)
        #expect(popped == 15)
        #expect(out == pushed)
        // Space is free again, and the indices wrap around the buffer correctly.
        for round in 0..<10 {
            let samples = rampSamples(count: 7, start: Double(100 + round * 7))
            let accepted = producer.push(samples)
            #expect(accepted)
            out.removeAll()
            let first = consumer.pop(into: &out, limit: 3)
            let rest = consumer.pop(into: &out)
            #expect(first == 3 && rest == 4)
            #expect(out == samples)
        }
    }

    final class Handles: Sendable {
        let producer: SPSCRing<MotionSample>.Producer
        let consumer: SPSCRing<MotionSample>.Consumer
        init(capacity: Int) {
            let ends = SPSCRing<MotionSample>.make(capacity: capacity)
            producer = ends.producer
            consumer = ends.consumer
        }
    }

    @Test(
        "two threads: every element arrives once, in order, when the producer waits for space",
        .timeLimit(.minutes(5)))
    func twoThreadStress() async {
        let total = 2_000_000
        let handles = Handles(capacity: 1024)
        // The consumer starts only once the producer has found the ring full, so that waiting for space is
        // exercised whatever the scheduler does (under ThreadSanitizer the consumer sometimes kept up throughout).
        let producerWaited = Atomic<Bool>(false)

        let producerThread = Thread {
            var batch: [MotionSample] = []
            var next = 0
            var size = 1
            while next < total {
                batch.removeAll(keepingCapacity: true)
                let n = min(size, total - next)
                for i in 0..<n { batch.append(MotionSample(timestamp: Double(next + i), ax: 0, ay: 0, az: 1)) }
                while !handles.producer.push(batch) {  // spin until the consumer frees space
                    producerWaited.store(true, ordering: .releasing)
                }
                next += n
                size = size % 37 + 1  // batch sizes 1...37
            }
        }
        _ = producerThread
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<(Int, Bool), Never>) in
            let consumerThread = Thread {
                var out: [MotionSample] = []
                out.reserveCapacity(1024)
                var expected = 0
                var inOrder = true
                while !producerWaited.load(ordering: .acquiring) { sched_yield() }
                while expected < total {
                    out.removeAll(keepingCapacity: true)
                    handles.consumer.pop(into: &out)
                    for sample in out {
                        if sample.timestamp != Double(expected) { inOrder = false }
                        expected += 1
                    }
                }
                continuation.resume(returning: (expected, inOrder))
            }
            consumerThread.start()
            producerThread.start()
        }
        #expect(result.0 == total)
        #expect(result.1)
        let statistics = handles.producer.statistics
        #expect(statistics.pushedElements == total)
        #expect(statistics.droppedBatches > 0, "the producer outran the consumer at times")
    }
}
