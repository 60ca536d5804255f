/// The event socket: the `[socket]` keys, which the daemon's socket server takes as they are.
public struct SocketSettings: Sendable, Equatable {
    /// `socket.path`: empty means the default (`DefaultSocketPath.forDaemon()`).
    public var path = ""
    /// `socket.mode`: the socket file's permissions (default 0o660).
    public var mode: UInt32 = 0o660
    /// `socket.group`: the socket file's group; empty keeps the daemon's own.
    public var group = ""
    /// `socket.max_clients`: clients served at once (default 64).
    public var maxClients = 64
    /// `socket.client_queue_kib`: KiB a client may leave unread before it is disconnected (default 256).
    public var clientQueueKiB = 256
    /// `socket.allowed_uids`: if not empty, only these user ids may connect (root and the daemon's user always may).
    public var allowedUIDs: [UInt32] = []
    /// `socket.allowed_gids`: if not empty, only members of these primary groups may connect (with `allowedUIDs`:
    /// either list admits).
    public var allowedGIDs: [UInt32] = []

    /// The defaults.
    public init() {}

    /// `clientQueueKiB` in bytes.
    public var queueLimitBytes: Int { clientQueueKiB * 1024 }
}
