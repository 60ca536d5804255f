import RepProtocol

/// What the socket server needs from the configuration.
struct ServerOptions: Sendable {
    var path: String
    var mode: UInt32
    var group: String
    var maxClients: Int
    var queueLimitBytes: Int
    var allowedUIDs: [UInt32]
    var allowedGIDs: [UInt32]
    /// The last-resort socket folder (`$TMPDIR/repd-UID`): used only if it is ours and mode 0700.
    var privateFolder: String = DefaultSocketPath.privateFolder()

    /// Whether a peer may connect: anyone when no allow-list is set; otherwise only a peer whose credentials could
    /// be read (`SO_PEERCRED`) and that `admits(uid:gid:)`.
    func admits(_ credentials: ClientHandler.PeerCredentials?) -> Bool {
        if allowedUIDs.isEmpty && allowedGIDs.isEmpty { return true }
        guard let credentials else { return false }
        return admits(uid: credentials.uid, gid: credentials.gid)
    }

    /// Root, the daemon's own user, and — when allow-lists are set — only the users and groups on them.
    func admits(uid: UInt32, gid: UInt32) -> Bool {
        if allowedUIDs.isEmpty && allowedGIDs.isEmpty { return true }
        if uid == 0 || uid == ownUID { return true }
        return allowedUIDs.contains(uid) || allowedGIDs.contains(gid)
    }

    let ownUID: UInt32
}
