/// A buffered channel as the device describes it in `scan_elements/` (or `buffer0/`).
public struct ScanChannel: Sendable, Equatable {
    /// The channel's name without `in_` and the suffix, e.g. `accel_x`, `timestamp`, `voltage0`.
    public var name: String
    /// `_index`: the sort key of the record layout.
    public var index: Int
    /// `_type`.
    public var type: ScanType

    /// Creates a channel.
    public init(name: String, index: Int, type: ScanType) {
        self.name = name
        self.index = index
        self.type = type
    }
}

/// Where each enabled channel sits in a record, by the kernel's rule (`iio_compute_scan_bytes`): channels in index
/// order, each aligned to its own size (storage bytes × repeat), the record rounded up to the largest size.
public struct RecordLayout: Sendable, Equatable {
    /// An enabled channel and its byte offset in the record.
    public struct Slot: Sendable, Equatable {
        /// The channel.
        public var channel: ScanChannel
        /// Byte offset in the record.
        public var offset: Int
    }

    /// The enabled channels in record order.
    public var slots: [Slot]
    /// Bytes per record.
    public var recordSize: Int

    /// Lays out `channels` (in any order) as the kernel does.
    public init(channels: [ScanChannel]) {
        var offset = 0
        var largest = 1
        var slots: [Slot] = []
        for channel in channels.sorted(by: { $0.index < $1.index }) {
            let length = channel.type.totalBytes
            offset = Self.align(offset, length)
            slots.append(Slot(channel: channel, offset: offset))
            offset += length
            largest = max(largest, length)
        }
        self.slots = slots
        recordSize = Self.align(offset, largest)
    }

    /// The kernel's `ALIGN(x, a)`: `(x + a − 1) & ~(a − 1)` (a power of two in every layout that makes sense).
    static func align(_ x: Int, _ a: Int) -> Int { a <= 1 ? x : (x + a - 1) & ~(a - 1) }

    /// The slot of the channel named `name`.
    public func slot(named name: String) -> Slot? { slots.first { $0.channel.name == name } }
}
