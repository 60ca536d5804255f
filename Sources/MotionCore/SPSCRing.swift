import Synchronization

/// A lock-free single-producer, single-consumer ring of plain values (samples), for handing data from the sensor's
/// reader thread to the detector without locks or allocation.
///
/// `SPSCRing.make(capacity:)` returns the only producer handle and the only consumer handle; both are
/// non-copyable, so each can be owned by exactly one thread or task. The capacity is a power of two. The producer
/// never blocks: a batch that does not fit whole is dropped (the newest data goes, the oldest stays queued) and
/// counted in `droppedBatches` / `droppedElements`.
public enum SPSCRing<Element: BitwiseCopyable> {
    /// Creates a ring of at least `capacity` elements (rounded up to a power of two) and its two handles.
    ///
    /// Take the handles apart by consuming the fields: `let ends = SPSCRing<MotionSample>.make(capacity: 4096)`,
    /// then `let producer = ends.producer` and `let consumer = ends.consumer`.
    public static func make(capacity: Int) -> Ends {
        precondition(capacity > 0, "capacity must be positive")
        let storage = Storage(capacity: capacity)
        return Ends(producer: Producer(storage), consumer: Consumer(storage))
    }

    /// The two handles of a new ring.
    @frozen
    public struct Ends: ~Copyable, Sendable {
        /// The writing end.
        public var producer: Producer
        /// The reading end.
        public var consumer: Consumer
    }

    /// The writing end. Exactly one exists per ring.
    public struct Producer: ~Copyable, Sendable {
        @usableFromInline let storage: Storage
        init(_ storage: Storage) { self.storage = storage }

        /// Appends `elements` whole, or drops them all (and counts the drop) when they do not fit.
        /// - Returns: whether the batch was queued.
        @inlinable @discardableResult
        public func push(_ elements: UnsafeBufferPointer<Element>) -> Bool {
            storage.push(elements)
        }

        /// Appends an array's elements whole, or drops them all when they do not fit.
        @inlinable @discardableResult
        public func push(_ elements: [Element]) -> Bool {
            elements.withUnsafeBufferPointer { storage.push($0) }
        }

        /// Counters and capacity, readable from any thread.
        public var statistics: SPSCRingStatistics { storage.statistics }
    }

    /// The reading end. Exactly one exists per ring.
    public struct Consumer: ~Copyable, Sendable {
        @usableFromInline let storage: Storage
        init(_ storage: Storage) { self.storage = storage }

        /// Moves up to `limit` queued elements to the end of `destination`, oldest first; returns how many.
        @inlinable @discardableResult
        public func pop(into destination: inout [Element], limit: Int = .max) -> Int {
            storage.pop(into: &destination, limit: limit)
        }

        /// Whether anything is queued (a snapshot).
        @inlinable public var isEmpty: Bool { storage.count == 0 }

        /// Counters and capacity, readable from any thread.
        public var statistics: SPSCRingStatistics { storage.statistics }
    }

    /// The shared storage behind the two handles.
    ///
    /// This is the one `@unchecked Sendable` type in repd's core, and why it is safe:
    /// - `tail` is written only by the producer, `head` only by the consumer; each side reads the other's index.
    /// - The producer writes slots `tail..<tail+n`, then publishes them with a *releasing* store of `tail`; the
    ///   consumer's *acquiring* load of `tail` makes those slot writes visible before it reads them.
    /// - The consumer reads slots, then frees them with a *releasing* store of `head`; the producer's *acquiring*
    ///   load of `head` guarantees the consumer finished reading a slot before the producer overwrites it.
    /// - Indices grow without wrapping (Int, 2^63 pushes) and are masked into the buffer; `tail − head` is the
    ///   fill level. Padding keeps `head` and `tail` on separate cache lines so the two cores do not fight over one.
    ///
    /// push, pop and the counts are `@inlinable` so that callers in other modules get them specialized for their
    /// element type: unspecialized, every pop looked up generic metadata and witness tables at run time and copied
    /// element by element (about 5 % of repd's CPU at 1600 records/s, measured with perf).
    @usableFromInline
    final class Storage: @unchecked Sendable {
        @usableFromInline let mask: Int
        @usableFromInline let buffer: UnsafeMutablePointer<Element>
        @usableFromInline let head = Atomic<Int>(0)
        private let padding1: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        @usableFromInline let tail = Atomic<Int>(0)
        private let padding2: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
        @usableFromInline let droppedBatches = Atomic<Int>(0)
        @usableFromInline let droppedElements = Atomic<Int>(0)
        @usableFromInline let pushedElements = Atomic<Int>(0)

        init(capacity: Int) {
            var size = 1
            while size < capacity { size <<= 1 }
            mask = size - 1
            buffer = .allocate(capacity: size)
        }

        deinit { buffer.deallocate() }

        @inlinable var capacity: Int { mask + 1 }
        @inlinable var count: Int { tail.load(ordering: .acquiring) - head.load(ordering: .acquiring) }

        @inlinable func push(_ elements: UnsafeBufferPointer<Element>) -> Bool {
            let n = elements.count
            guard n > 0 else { return true }
            let t = tail.load(ordering: .relaxed)  // only this thread writes it
            let h = head.load(ordering: .acquiring)
            guard n <= capacity - (t - h) else {
                droppedBatches.wrappingAdd(1, ordering: .relaxed)
                droppedElements.wrappingAdd(n, ordering: .relaxed)
                return false
            }
            let start = t & mask
            let first = min(n, capacity - start)
            (buffer + start).update(from: elements.baseAddress!, count: first)
            if first < n { buffer.update(from: elements.baseAddress! + first, count: n - first) }
            tail.store(t + n, ordering: .releasing)
            pushedElements.wrappingAdd(n, ordering: .relaxed)
            return true
        }

        @inlinable func pop(into destination: inout [Element], limit: Int) -> Int {
            let h = head.load(ordering: .relaxed)  // only this thread writes it
            let t = tail.load(ordering: .acquiring)
            let n = min(t - h, limit)
            guard n > 0 else { return 0 }
            let start = h & mask
            let first = min(n, capacity - start)
            destination.append(contentsOf: UnsafeBufferPointer(start: buffer + start, count: first))
            if first < n { destination.append(contentsOf: UnsafeBufferPointer(start: buffer, count: n - first)) }
            head.store(h + n, ordering: .releasing)
            return n
        }

        var statistics: SPSCRingStatistics {
            SPSCRingStatistics(
                capacity: capacity, queued: count, pushedElements: pushedElements.load(ordering: .relaxed),
                droppedBatches: droppedBatches.load(ordering: .relaxed),
                droppedElements: droppedElements.load(ordering: .relaxed))
        }
    }
}

/// A snapshot of a ring's counters.
public struct SPSCRingStatistics: Sendable, Equatable {
    /// Elements the ring holds at most.
    public var capacity: Int
    /// Elements queued now.
    public var queued: Int
    /// Elements accepted since creation.
    public var pushedElements: Int
    /// Batches dropped because the ring was full.
    public var droppedBatches: Int
    /// Elements in those batches.
    public var droppedElements: Int
}
