import RepProtocol
import RepSettings

/// What the socket server runs with: the `[socket]` settings (read through, as in `options.maxClients`), the path
/// it listens on (`socket.path`, or the default when that is empty), and what is known only at start.
@dynamicMemberLookup
struct ServerOptions: Sendable {
    /// The `[socket]` settings.
    var socket: SocketSettings
    /// The socket file: `socket.path`, or `DefaultSocketPath.forDaemon()` when that is empty.
    var path: String
    /// The last-resort socket folder (`$TMPDIR/repd-UID`): used only if it is ours and mode 0700.
    var privateFolder: String = DefaultSocketPath.privateFolder()
    /// The daemon's own user id, always admitted.
    let ownUID: UInt32

    subscript<Value>(dynamicMember keyPath: KeyPath<SocketSettings, Value>) -> Value { socket[keyPath: keyPath] }

    /// Whether a peer may connect: anyone when no allow-list is set; otherwise only a peer whose credentials could
    /// be read (`SO_PEERCRED`) and that `admits(uid:gid:)`.
    func admits(_ credentials: ClientHandler.PeerCredentials?) -> Bool {
        if socket.allowedUIDs.isEmpty && socket.allowedGIDs.isEmpty { return true }
        guard let credentials else { return false }
        return admits(uid: credentials.uid, gid: credentials.gid)
    }

    /// Root, the daemon's own user, and — when allow-lists are set — only the users and groups on them.
    func admits(uid: UInt32, gid: UInt32) -> Bool {
        if socket.allowedUIDs.isEmpty && socket.allowedGIDs.isEmpty { return true }
        if uid == 0 || uid == ownUID { return true }
        return socket.allowedUIDs.contains(uid) || socket.allowedGIDs.contains(gid)
    }
}
