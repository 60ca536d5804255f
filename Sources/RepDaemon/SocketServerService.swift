import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PlainText
import RepConfiguration
import RepProtocol
import ServiceLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// Why the socket could not be served.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, naming the path.
    public var description: String
}

/// The Unix stream socket clients connect to: binds it (or takes the one systemd passed), sets its mode and group,
/// and serves until shutdown, when every client gets `bye` and the socket file is removed.
///
/// Every `pathCheckInterval` it checks that the path still names the socket it bound: one removed (a cleaner, an
/// administrator's `rm -r` of its folder) is made again, with a log line; one replaced by another file (another
/// repd's socket) is logged once and left alone, and at stop only the socket this repd bound is removed.
final class SocketServerService: Service {
    private let options: ServerOptions
    private let hub: EventHub
    private let state: DaemonState
    private let control: PipelineControl
    private let readiness: Readiness
    private let activatedSocket: Int32?
    private let logger: Logger

    init(
        options: ServerOptions, hub: EventHub, state: DaemonState, control: PipelineControl, readiness: Readiness,
        activatedSocket: Int32?, logger: Logger
    ) {
        self.options = options
        self.hub = hub
        self.state = state
        self.control = control
        self.readiness = readiness
        self.activatedSocket = activatedSocket
        self.logger = logger
    }

    /// How long clients have to read their `bye` at shutdown before they are closed anyway.
    static let byeGrace = TimeAmount.seconds(2)
    /// How often the socket path is checked (see the type's comment).
    static let pathCheckInterval = TimeAmount.seconds(10)

    /// The socket file at a path: its device and inode, and when its inode last changed. The inode alone does not
    /// tell a socket made again from the one removed: a file system hands a freed inode number out again at once
    /// (seen in the test of a path another socket took over). The change time is the kernel's coarse clock (a tick
    /// of a few ms), so a socket made at the path within the same tick as the removal, with the same inode number,
    /// is still taken for repd's own. A chmod or chown of the socket changes the time too, and then it is taken for
    /// another file: logged, and left at the stop.
    struct SocketFile: Equatable {
        var identity: FileIdentity
        var changed: Int64

        /// What `path` names now (not following a link); nil when nothing (`errno` says why).
        init?(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
            changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        }
    }

    /// The socket file this repd bound last; nil with a socket passed by systemd.
    private let boundFile = NIOLockedValueBox<SocketFile?>(nil)
    /// Sockets bound again after the file was removed: closed at shutdown with the first.
    private let reboundChannels = NIOLockedValueBox<[Channel]>([])
    /// What the path check last logged as wrong (nil: nothing), so each problem is logged once; and whether a bind
    /// is under way.
    private let pathCheck = NIOLockedValueBox<(problem: String?, binding: Bool, stopping: Bool)>((nil, false, false))

    /// The listening socket's setup, for the first bind and for one made again.
    private func makeBootstrap() -> ServerBootstrap {
        ServerBootstrap(group: hub.eventLoop)
            .serverChannelOption(ChannelOptions.backlog, value: Self.backlog)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)  // ClientHandler: a half-close
            .childChannelOption(
                ChannelOptions.writeBufferWaterMark,
                value: .init(low: options.queueLimitBytes / 2, high: options.queueLimitBytes)
            )
            .childChannelInitializer { [hub, state, control, options, logger] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        ClientHandler(hub: hub, state: state, control: control, options: options, logger: logger))
                }
            }
    }

    func run() async throws {
        let bootstrap = makeBootstrap()
        let channel: Channel
        if let activatedSocket {
            channel = try await bootstrap.withBoundSocket(activatedSocket).get()
            logger.info("serving the socket passed by systemd (fd \(activatedSocket))")
        } else {
            try prepareSocketPath()
            channel = try await serve(on: bootstrap).get()
            boundFile.withLockedValue { $0 = SocketFile(options.path) }
            logger.info("listening on \(options.path)")
        }
        readiness.socketListening()
        let check =
            activatedSocket == nil
            ? hub.eventLoop.scheduleRepeatedTask(initialDelay: Self.pathCheckInterval, delay: Self.pathCheckInterval) {
                [self] _ in checkPath()
            } : nil

        try await withGracefulShutdownHandler {
            try await channel.closeFuture.get()
        } onGracefulShutdown: { [reboundChannels, pathCheck] in
            // A socket being made again now closes itself when it is ready (see checkPath).
            pathCheck.withLockedValue { $0.stopping = true }
            channel.close(promise: nil)  // no new clients from here on
            for other in reboundChannels.withLockedValue({ $0 }) { other.close(promise: nil) }
        }
        pathCheck.withLockedValue { $0.stopping = true }
        let cancelled = hub.eventLoop.makePromise(of: Void.self)
        if let check { check.cancel(promise: cancelled) } else { cancelled.succeed() }
        try? await cancelled.futureResult.get()
        for other in reboundChannels.withLockedValue({ $0 }) { try? await other.close() }
        logger.info("saying bye to \(hub.clientCount) clients")
        try? await hub.closeAll(reason: "shutdown", grace: Self.byeGrace).get()
        // Only the socket this repd bound: the path may name another repd's by now.
        if activatedSocket == nil, let bound = boundFile.withLockedValue({ $0 }),
            SocketFile(options.path) == bound
        {
            unlink(options.path)
        }
    }

    /// The path check (every `pathCheckInterval`, on the event loop): makes a removed socket again, logs a path
    /// that names another file once, and says when all is well again.
    private func checkPath() {
        let now = SocketFile(options.path)
        let code = errno  // lstat's, when `now` is nil: taken before the locks below
        let gone = now == nil && code == ENOENT
        let bound = boundFile.withLockedValue { $0 }
        if now != nil, now == bound {
            if pathCheck.withLockedValue({ $0.problem }) != nil {
                pathCheck.withLockedValue { $0.problem = nil }
                logger.notice("\(options.path) is this repd's socket again")
            }
            return
        }
        guard gone else {
            report(
                now == nil
                    ? "cannot check \(options.path): \(String(cString: strerror(code)))"
                    : "\(options.path) now names another file than the socket this repd made (another repd's socket?): "
                        + "new clients reach that, not this repd (those connected stay served); repd leaves it alone, "
                        + "also at its stop; restart repd or give it another --socket")
            return
        }
        let busy = pathCheck.withLockedValue { state in
            let busy = state.binding || state.stopping
            if !busy { state.binding = true }
            return busy
        }
        guard !busy else { return }
        let cannot = "the socket file \(options.path) was removed while repd ran, and cannot be made again"
        do { try prepareSocketPath() } catch {
            pathCheck.withLockedValue { $0.binding = false }
            report("\(cannot): \(error)")
            return
        }
        serve(on: makeBootstrap()).whenComplete { [self] result in
            let stopping = pathCheck.withLockedValue { state in
                state.binding = false
                return state.stopping
            }
            switch result {
            case .success(let channel):
                guard !stopping else {
                    // The stop began while it was made: no new clients, and no socket file left behind.
                    channel.close(promise: nil)
                    unlink(options.path)
                    return
                }
                // The socket made before (if any) is unreachable now: close it, and keep one.
                let previous = reboundChannels.withLockedValue { channels in
                    defer { channels = [channel] }
                    return channels
                }
                for old in previous { old.close(promise: nil) }
                boundFile.withLockedValue { $0 = SocketFile(options.path) }
                pathCheck.withLockedValue { $0.problem = nil }
                logger.warning(
                    "the socket file \(options.path) was removed while repd ran; made it again: new clients connect as before"
                )
            case .failure(let error):
                report("\(cannot): \(error)")
            }
        }
    }

    /// A listening socket at the path, served by SwiftNIO. The socket is made here (`listeningSocket`) and handed to
    /// NIO, which owns it from then on: it closes it itself when it fails after taking it, so it is never closed here
    /// (no descriptor closed twice). NIO listens again with its own backlog, so the backlog is set once more
    /// afterwards. On failure the socket file is removed.
    private func serve(on bootstrap: ServerBootstrap) -> EventLoopFuture<Channel> {
        let fd: Int32
        do { fd = try listeningSocket() } catch { return hub.eventLoop.makeFailedFuture(error) }
        return bootstrap.withBoundSocket(fd).map { channel in
            _ = listen(fd, Self.backlog)
            return channel
        }.flatMapErrorThrowing { [options] error in
            unlink(options.path)
            throw SocketError(description: "cannot listen on \(options.path): \(error)")
        }
    }

    /// How many connections may wait to be accepted.
    static let backlog: Int32 = 256

    /// A socket bound to the path and listening, made here rather than by SwiftNIO's `bind(unixDomainSocketPath:)`,
    /// whose channel removes whatever socket the path names when it closes: at a stop that was another repd's, if
    /// it had taken the path over meanwhile. Throws with the system's words.
    private func listeningSocket() throws(SocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw SocketError(description: "cannot make a socket: \(String(cString: strerror(errno))) (errno \(errno))")
        }
        guard withUnixSocketAddress(options.path, { bind(fd, $0, $1) }) == 0 else {
            let code = errno
            close(fd)
            throw SocketError(
                description: "cannot listen on \(options.path): \(String(cString: strerror(code))) (errno \(code))")
        }
        // Its mode and group before it listens: no client can connect while the umask's permissions hold, and
        // nobody can remove it between (a test saw chmod find no file once the socket was connectable).
        do { try applyOwnership() } catch {
            close(fd)
            unlink(options.path)
            throw error
        }
        guard listen(fd, Self.backlog) == 0 else {
            let code = errno
            close(fd)
            unlink(options.path)
            throw SocketError(
                description: "cannot listen on \(options.path): \(String(cString: strerror(code))) (errno \(code))")
        }
        return fd
    }

    /// Logs `problem` as an error unless it is the one logged last.
    private func report(_ problem: String) {
        let new = pathCheck.withLockedValue { state in
            guard state.problem != problem else { return false }
            state.problem = problem
            return true
        }
        if new { logger.error("\(problem)") }
    }

    /// Makes the folder, and replaces a stale socket file only after a connect shows nobody listens on it.
    private func prepareSocketPath() throws {
        let bytes = options.path.utf8.count
        guard bytes <= DaemonConfiguration.longestSocketPath else {
            throw SocketError(
                description:
                    "cannot listen on \(options.path): \(bytes) bytes; a Unix socket's path holds at most "
                    + "\(DaemonConfiguration.longestSocketPath): give a shorter --socket or socket.path")
        }
        let folder = String(options.path[..<(options.path.lastIndex(of: "/") ?? options.path.startIndex)])
        let isPrivate = folder == options.privateFolder
        if !folder.isEmpty, access(folder, F_OK) != 0 {
            guard mkdir(folder, isPrivate ? 0o700 : 0o755) == 0 || errno == EEXIST else {
                throw SocketError(
                    description: "cannot create the socket folder \(folder): \(String(cString: strerror(errno)))")
            }
        }
        if isPrivate { try checkPrivate(folder) }
        var info = stat()
        guard lstat(options.path, &info) == 0 else { return }
        // Only a socket is ever removed: a typo in --socket or socket.path must not delete a file, a folder's entry
        // or a symbolic link that happens to sit there.
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SocketError(
                description:
                    "\(options.path) exists and is not a socket (\(DaemonConfiguration.kind(of: info.st_mode))); repd removes only a "
                    + "stale socket there: give another --socket or socket.path, or remove it")
        }
        try Self.refuseIfServed(options.path)
        logger.notice("removing a stale socket file at \(options.path) (nobody listens on it)")
        guard unlink(options.path) == 0 else {
            throw SocketError(
                description: "cannot remove the stale socket \(options.path): \(String(cString: strerror(errno)))")
        }
    }

    /// The last-resort folder sits where anyone may create folders: someone else's, or one others can enter or
    /// write, could hand our clients to another listener. It must be a real directory, ours, mode 0700.
    private func checkPrivate(_ folder: String) throws {
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            throw SocketError(
                description: "cannot inspect the socket folder \(folder): \(String(cString: strerror(errno)))")
        }
        let fix = "remove it, or give repd --socket PATH"
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw SocketError(description: "the socket folder \(folder) is not a directory (a symbolic link?); \(fix)")
        }
        guard info.st_uid == getuid() else {
            throw SocketError(
                description:
                    "the socket folder \(folder) belongs to uid \(info.st_uid), not to repd's uid \(getuid()); \(fix)")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw SocketError(
                description:
                    "the socket folder \(folder) has mode \(String(info.st_mode & 0o7777, radix: 8)); it must be 700 (only its owner); \(fix)"
            )
        }
    }

    private func applyOwnership() throws(SocketError) {
        if !options.group.isEmpty {
            guard let group = getgrnam(options.group) else {
                throw SocketError(description: "socket.group '\(options.group)' does not exist on this system")
            }
            guard chown(options.path, uid_t(bitPattern: -1), group.pointee.gr_gid) == 0 else {
                throw SocketError(
                    description:
                        "cannot give \(options.path) to group '\(options.group)': \(String(cString: strerror(errno)))")
            }
        }
        guard chmod(options.path, mode_t(options.mode)) == 0 else {
            throw SocketError(
                description:
                    "cannot set mode \(String(options.mode, radix: 8)) on \(options.path): \(String(cString: strerror(errno)))"
            )
        }
    }

    /// Throws when a process accepts connections on the socket at `path` (another repd): the daemon checks this
    /// before it opens the journal, and again before it binds.
    static func refuseIfServed(_ path: String) throws(SocketError) {
        if someoneListens(on: path) {
            throw SocketError(
                description: "another repd is already serving \(path); stop it first, or give this one --socket PATH")
        }
    }

    /// Whether a process accepts connections on the socket at `path`.
    static func someoneListens(on path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return withUnixSocketAddress(path, { connect(fd, $0, $1) }) == 0
    }
}
