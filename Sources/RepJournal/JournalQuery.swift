/// Which journaled events a history query wants: every condition that is set must hold.
public struct JournalQuery: Sendable, Equatable {
    /// Only events with an id above this (0: from the oldest).
    public var after: Int64
    /// Only events with an id below this.
    public var before: Int64?
    /// Only events published at or after this Unix time (seconds).
    public var from: Double?
    /// Only events published before this Unix time (seconds).
    public var to: Double?
    /// Only these message types (`set_start`, `rep`, `set_end`, `sensor`); nil: all.
    public var types: [String]?
    /// At most this many events.
    public var limit: Int
    /// The newest `limit` matching events instead of the oldest (they still come oldest first).
    public var latest: Bool

    /// Creates a query.
    public init(
        after: Int64 = 0, before: Int64? = nil, from: Double? = nil, to: Double? = nil, types: [String]? = nil,
        limit: Int, latest: Bool = false
    ) {
        self.after = after
        self.before = before
        self.from = from
        self.to = to
        self.types = types
        self.limit = limit
        self.latest = latest
    }
}
