import Synchronization
import Testing

@testable import MotionCore

/// Keeps what reaches it, from whichever thread.
final class CollectingSink: MotionSampleSink {
    private let state = Mutex<(batches: [[MotionSample]], finished: Int)>(([], 0))
    var batches: [[MotionSample]] { state.withLock { $0.batches } }
    var finished: Int { state.withLock { $0.finished } }

    func receive(_ batch: UnsafeBufferPointer<MotionSample>) { state.withLock { $0.batches.append(Array(batch)) } }
    func finish() { state.withLock { $0.finished += 1 } }
}

private func batch(_ values: ClosedRange<Int>) -> [MotionSample] {
    values.map { MotionSample(timestamp: Double($0), ax: Double($0), ay: 0, az: 1) }
}

@Suite("MotionSampleOutlet")
struct MotionSampleOutletTests {
    @Test("every attached sink gets every batch and the end, once")
    func fanOut() {
        let outlet = MotionSampleOutlet()
        let first = CollectingSink()
        let second = CollectingSink()
        outlet.attach(first)
        outlet.attach(second)
        for values in [1...3, 4...4, 5...9] { batch(values).withUnsafeBufferPointer { outlet.receive($0) } }
        outlet.finish()
        for sink in [first, second] {
            #expect(sink.batches == [batch(1...3), batch(4...4), batch(5...9)])
            #expect(sink.finished == 1)
        }
    }

    @Test("an empty batch reaches no sink")
    func emptyBatch() {
        let outlet = MotionSampleOutlet()
        let sink = CollectingSink()
        outlet.attach(sink)
        [MotionSample]().withUnsafeBufferPointer { outlet.receive($0) }
        #expect(sink.batches.isEmpty)
    }

    @Test("a detached sink gets nothing more; a sink attached after the end is finished at once")
    func detachAndLateAttach() {
        let outlet = MotionSampleOutlet()
        let sink = CollectingSink()
        outlet.attach(sink)
        batch(1...2).withUnsafeBufferPointer { outlet.receive($0) }
        outlet.detach(sink)
        batch(3...4).withUnsafeBufferPointer { outlet.receive($0) }
        outlet.finish()
        #expect(sink.batches == [batch(1...2)])
        #expect(sink.finished == 0)
        let late = CollectingSink()
        outlet.attach(late)
        #expect(late.finished == 1)
        #expect(late.batches.isEmpty)
    }

    @Test("a sink may detach itself from inside receive")
    func detachFromReceive() {
        final class OneShot: MotionSampleSink {
            let outlet: MotionSampleOutlet
            let count = Atomic<Int>(0)
            init(_ outlet: MotionSampleOutlet) { self.outlet = outlet }
            func receive(_ batch: UnsafeBufferPointer<MotionSample>) {
                count.add(1, ordering: .relaxed)
                outlet.detach(self)
            }
        }
        let outlet = MotionSampleOutlet()
        let sink = OneShot(outlet)
        outlet.attach(sink)
        for values in [1...1, 2...2] { batch(values).withUnsafeBufferPointer { outlet.receive($0) } }
        #expect(sink.count.load(ordering: .relaxed) == 1)
    }

    @Test("the Combine publisher and the AsyncSequence carry the same batches as a sink, and end with the data")
    func adaptersSeeTheSamePath() async {
        let outlet = MotionSampleOutlet()
        let sink = CollectingSink()
        outlet.attach(sink)
        let published = Mutex<(batches: [[MotionSample]], completed: Bool)>(([], false))
        let subscription = outlet.publisher.sink(
            receiveCompletion: { _ in published.withLock { $0.completed = true } },
            receiveValue: { value in published.withLock { $0.batches.append(value) } })
        let stream = outlet.batches()
        for values in [1...3, 4...8] { batch(values).withUnsafeBufferPointer { outlet.receive($0) } }
        outlet.finish()
        var streamed: [[MotionSample]] = []
        for await value in stream { streamed.append(value) }
        subscription.cancel()
        #expect(sink.batches == [batch(1...3), batch(4...8)])
        #expect(published.withLock { $0.batches } == sink.batches)
        #expect(published.withLock { $0.completed })
        #expect(streamed == sink.batches)
    }

    @Test("an AsyncSequence whose consumer stops ends cleanly, is detached, and later batches are no trouble")
    func streamTerminationDetaches() async {
        let outlet = MotionSampleOutlet()
        let other = CollectingSink()
        outlet.attach(other)
        let consumer = Task {
            var count = 0
            // The stream lives only in this loop: when the loop breaks, nothing holds it and it terminates.
            for await _ in outlet.batches() {
                count += 1
                break
            }
            return count
        }
        // Wait for the consumer to subscribe, so that the first batch reaches it.
        let deadline = ContinuousClock.now + .seconds(10)
        while outlet.attachedSinkCount < 2, ContinuousClock.now < deadline { await Task.yield() }
        batch(1...1).withUnsafeBufferPointer { outlet.receive($0) }
        #expect(await consumer.value == 1)
        // The stream ended: its sink is detached (its termination handler runs as the stream goes), so later batches
        // are not buffered for it; the other sink gets them.
        while outlet.attachedSinkCount > 1, ContinuousClock.now < deadline { await Task.yield() }
        #expect(outlet.attachedSinkCount == 1, "the ended stream's sink is detached")
        batch(2...2).withUnsafeBufferPointer { outlet.receive($0) }
        #expect(other.batches.count == 2)
    }
}
