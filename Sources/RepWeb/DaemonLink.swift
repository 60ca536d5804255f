import Logging
import NIOCore
import NIOPosix
import RepClient
import RepProtocol
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// repd-web's connection to one repd, as an ordinary client of its socket: it subscribes to `rep`, `set` and
/// `sensor` events and feeds every line to the board. When repd goes away it retries (0.2 s, doubling up to 2 s) and
/// resumes after the last event id it applied, so no event is missed or applied twice across a restart of repd.
///
/// On its first connection it asks for the last `replayOnStart` journaled events, so a display started mid-workout
/// shows the set in progress and the sets before it.
public struct DaemonLink: Service {
    /// Journaled events replayed on the first connection.
    public static let replayOnStart: Int64 = 500
    /// The longest line accepted from repd (its lines are far shorter; anything longer means a wrong socket).
    public static let maximumLine = 1 << 20

    /// The station's index on the board.
    public let index: Int
    /// repd's socket; empty: repd's default for clients, looked up again at each attempt (`/run/repd/events.sock`
    /// once the system's repd has created it).
    public let socketPath: String
    private let board: StationBoard
    private let logger: Logger

    /// A link from `socketPath` to station `index` of `board`.
    public init(index: Int, socketPath: String, board: StationBoard, logger: Logger) {
        self.index = index
        self.socketPath = socketPath
        self.board = board
        var logger = logger
        logger[metadataKey: "repd.socket"] = "\(socketPath.isEmpty ? "default" : socketPath)"
        self.logger = logger
    }

    /// Connects, reads, reconnects, until shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var delay = Duration.milliseconds(200)
            var failing = false
            while !Task.isCancelled {
                var problem: String?
                let liveness = Liveness()
                do {
                    let end = try await session(reportErrors: !failing, liveness: liveness)
                    if end.subscribed {
                        logger.notice("repd closed the connection; reconnecting")
                        delay = .milliseconds(200)
                        failing = false
                    } else {
                        problem = end.refusal.map { "repd refused the connection: \($0)" }
                        if !failing {
                            logger.warning(
                                "repd closed the connection before subscribing; retrying (backing off to 2 s)")
                            failing = true
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    let path = socketPath.isEmpty ? DefaultSocketPath.forClient() : socketPath
                    problem = Self.problem(error, path: path)
                    // A connection that got as far as hello (and then hung) was a success until then: this failure
                    // is news, and the next attempt comes soon.
                    if liveness.greeted {
                        failing = false
                        delay = .milliseconds(200)
                    }
                    if !failing {
                        logger.warning(
                            "cannot read repd on \(path): \(problem ?? "\(error)"); retrying (every 0.2 s, backing off to 2 s)"
                        )
                    }
                    failing = true
                }
                await board.setLink(.down, problem: problem, of: index)
                do { try await Task.sleep(for: delay) } catch { break }
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    /// Why connecting to `path` failed, in words the page shows, when it is not that repd is not running (nil then:
    /// no such socket, or no one listening on it).
    static func problem(_ error: any Error, path: String) -> String? {
        if let error = error as? LinkError { return error.reason }
        var info = stat()
        if let code = (error as? IOError)?.errnoCode, code == EACCES || code == EPERM {
            // The socket's own group when it can be seen (repd's socket.group), else the packaged one.
            var group = "repd"
            if stat(path, &info) == 0, let entry = getgrgid(info.st_gid), let name = entry.pointee.gr_name {
                group = String(cString: name)
            }
            return "permission denied on \(path): add repd-web's user to the group '\(group)'"
        }
        if stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK { return "\(path) is not a socket" }
        return nil
    }

    /// One connection: hello, subscribe, then events until repd closes it. Returns whether it got as far as
    /// subscribing, and repd's reason when it did not (repd refuses a client beyond `socket.max_clients` with an
    /// `error` line, then closes).
    private func session(reportErrors: Bool, liveness: Liveness) async throws -> (subscribed: Bool, refusal: String?) {
        let path = socketPath.isEmpty ? DefaultSocketPath.forClient() : socketPath
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(2))
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let hung = LinkError(
            reason:
                "repd does not answer: nothing for \(Self.silenceLimit.components.seconds) s, not even to a ping (stopped or hung?)"
        )
        let end: (Bool, String?)
        do {
            end = try await session(on: channel, path: path, reportErrors: reportErrors, liveness: liveness)
        } catch {
            throw liveness.isHung ? hung : error
        }
        if liveness.isHung { throw hung }
        return end
    }

    /// Reads `channel` until repd closes it, with a ping now and then; a connection that stays silent is closed and
    /// marked in `liveness`.
    private func session(
        on channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>, path: String, reportErrors: Bool, liveness: Liveness
    ) async throws -> (Bool, String?) {
        let underlying = channel.channel
        return try await channel.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self, returning: (Bool, String?).self) { group in
                // A repd that stopped answering (SIGSTOP, hung) keeps the socket open and says nothing: ask it
                // something now and then, and give up on a connection that stays silent.
                group.addTask {
                    while true {
                        try await Task.sleep(for: Self.pingInterval)
                        if liveness.silence > Self.silenceLimit {
                            liveness.markHung()
                            underlying.close(promise: nil)
                            return
                        }
                        // A failed write ends the connection, which the reading side sees; keep watching till then.
                        try? await outbound.write(ByteBuffer(string: ClientCommand.ping.line + "\n"))
                    }
                }
                defer { group.cancelAll() }
                return try await read(inbound, outbound, path: path, reportErrors: reportErrors, liveness: liveness)
            }
        }
    }

    /// How often repd-web asks repd something (`ping`) to know it still answers.
    static let pingInterval = Duration.seconds(5)
    /// How long repd may say nothing at all (`pong` included) before repd-web takes it as not answering.
    static let silenceLimit = Duration.seconds(15)

    /// Reads one connection's lines until repd closes it: hello, subscribe, events. Returns whether it got as far as
    /// subscribing, and repd's reason when it did not.
    private func read(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        path: String, reportErrors: Bool, liveness: Liveness
    ) async throws -> (Bool, String?) {
        var pending = ByteBuffer()
        var subscribed = false
        var refusal: String?
        var replayPending = false
        var unreadable = 0
        /// The `since` of a first connection's window (the last `replayOnStart` events), not a resume: nil otherwise.
        var window: Int64?
        for try await var chunk in inbound {
            liveness.heard()
            pending.writeBuffer(&chunk)
            var messages: [(line: ServerLine, json: JSONValue)] = []
            while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending.readSlice(length: newline - pending.readerIndex)!
                pending.moveReaderIndex(forwardBy: 1)
                let json: JSONValue
                let message: ServerLine
                do {
                    json = try JSONParser.parse(line.readableBytesView)
                    message = try ServerLine.read(json)
                } catch {
                    unreadable += 1
                    if unreadable == 1, reportErrors || subscribed {
                        logger.warning(
                            "ignoring a line from repd that cannot be read: \(error) (further ones on this connection are counted, not logged)"
                        )
                    }
                    continue
                }
                switch message {
                case .hello(let hello) where !subscribed:
                    liveness.greet()
                    logger.info("connected to repd \(hello.version) on \(path)")
                    let (since, resuming) = await resumePoint(hello)
                    window = resuming ? nil : since
                    let command = ClientCommand.subscribe([.rep, .set, .sensor], since: since).line + "\n"
                    try await outbound.write(ByteBuffer(string: command))
                    subscribed = true
                    replayPending = since != nil
                case .subscribed:
                    replayPending = false
                case _ where replayPending && message.eventID != nil:
                    // Live before `subscribed`: the replay that follows it sends it again, in order.
                    continue
                case .error(let reason) where !subscribed:
                    refusal = reason
                    if reportErrors { logger.warning("repd says: \(reason)") }
                case .error(let reason) where window.map({ reason.hasPrefix("since=\($0): ") }) == true:
                    // The window reached below what the journal holds (retention, or ids skipped after a power
                    // cut): expected, not worth a warning at every start (repd-web asked for ids it never saw).
                    logger.debug("repd says: \(reason)")
                case .error(let reason):
                    logger.warning("repd says: \(reason)")
                default: break
                }
                messages.append((message, json))
            }
            if !messages.isEmpty { await board.apply(messages, to: index) }
            guard pending.readableBytes <= Self.maximumLine else {
                throw LinkError(reason: "a line longer than \(Self.maximumLine) bytes: is \(path) repd's socket?")
            }
            pending.discardReadBytes()
        }
        if unreadable > 1 { logger.warning("\(unreadable) lines from repd could not be read on that connection") }
        return (subscribed, refusal)
    }

    /// The `since` to subscribe with: after the last id applied; on the first connection (or when repd's journal is
    /// another file: another identity, or ids below the last one shown) the last `replayOnStart` events; nil without
    /// a journal. `resuming`: the `since` is the last id applied, not a window.
    private func resumePoint(_ hello: ServerLine.Hello) async -> (since: Int64?, resuming: Bool) {
        guard let newest = hello.newestID else { return (nil, false) }
        let (last, journal) = await board.resumePoint(of: index)
        await board.setJournal(hello.journal, of: index)
        if let last {
            if !hello.startsOver(fromJournal: journal, lastID: last) { return (last, true) }
            logger.notice("repd's journal is not the one the last event shown (id \(last)) came from: a new journal")
            await board.forgetIDs(of: index)
        }
        return (max(0, newest - Self.replayOnStart), false)
    }
}

/// Why the link to repd failed, in words.
struct LinkError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// When repd last said anything on a connection, whether it said hello, and whether the connection was given up as
/// not answering.
final class Liveness: Sendable {
    private let state = Mutex((heard: ContinuousClock.now, hung: false, greeted: false))

    /// Notes that repd said hello.
    func greet() { state.withLock { $0.greeted = true } }

    /// Whether repd said hello on this connection.
    var greeted: Bool { state.withLock { $0.greeted } }

    /// Notes that repd said something now.
    func heard() { state.withLock { $0.heard = .now } }

    /// How long repd has said nothing.
    var silence: Duration { state.withLock { .now - $0.heard } }

    /// Marks the connection as given up.
    func markHung() { state.withLock { $0.hung = true } }

    /// Whether the connection was given up.
    var isHung: Bool { state.withLock { $0.hung } }
}
