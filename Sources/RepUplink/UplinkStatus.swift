/// A snapshot of the uplink, for `status`.
public struct UplinkStatus: Sendable, Equatable {
    /// Where the uplink stands.
    public enum State: String, Sendable {
        /// `uplink.enabled` is false.
        case disabled
        /// A connection is being made.
        case connecting
        /// Connected: events flow.
        case connected
        /// The last attempt failed (`lastError` says why); the next comes after the backoff delay.
        case error
        /// Stopped (repd is shutting down).
        case stopped
    }

    /// The state.
    public var state: State
    /// The broker (`mqtt://host:port`), empty when disabled.
    public var broker = ""
    /// The last failure, nil once connected again.
    public var lastError: String?
    /// The newest id up to which the broker acknowledged every event (stored in the journal).
    public var ackedID: Int64 = 0
    /// The newest journaled id the uplink has seen (the backlog is this minus `ackedID`); while it still sends a file
    /// repd wrote before the one it writes now, at least one more, and the events of the files queued behind it
    /// added.
    public var newestID: Int64 = 0
    /// Events sent and not yet acknowledged.
    public var inFlight = 0
    /// Events published since repd started (resent ones counted again).
    public var published = 0
    /// Connections made since repd started.
    public var connections = 0

    /// Creates a snapshot.
    public init(state: State, broker: String = "", lastError: String? = nil, ackedID: Int64 = 0) {
        self.state = state
        self.broker = broker
        self.lastError = lastError
        self.ackedID = ackedID
    }
}
