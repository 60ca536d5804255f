import Logging
import NIOCore
import RepProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One client connection: splits input into lines (at most 4 KiB each), answers commands, and registers the
/// client with the hub for events.
///
/// Commands are answered one at a time, in order: while a replay or a `history` reply is under way (read from the
/// journal's thread, sent as the client reads), and while the client's queue holds more than half its limit (the
/// replies of commands it sent in a row, `status` a thousand times in one write), later lines wait and the socket is
/// not read: the client's own sending stops on its full socket, as over TCP, and repd holds at most what one read
/// event brought (NIO reads up to four buffers of at most 64 KiB then), and a queue that replies pass by one line.
final class ClientHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let hub: EventHub
    private let state: DaemonState
    private let control: PipelineControl
    private let options: ServerOptions
    private let logger: Logger
    private var pending = ByteBuffer()
    /// Lines this client sent that are not commands: the first `loggedBadLines` are logged, the rest only counted
    /// (one client sending garbage in a loop wrote 100 000 log lines in 12 s, and journald's rate limit then dropped
    /// repd's other messages too).
    private var badLines = 0
    static let loggedBadLines = 5
    private var id = 0
    private var accepted = false
    /// A replay or `history` reply is under way, or the replies sent wait for the client's queue to drain: later
    /// lines wait in `pending`, and the socket is not read.
    private var busy = false
    /// `handlePendingLines` is running: a wait that ends at once (its future already complete, or completed by a
    /// write inside the loop) lets that loop go on rather than start another one inside it.
    private var answering = false
    /// Whether the socket is read (`autoRead`): not while `busy`.
    private var reading = true
    /// The write of the newest reply sent since the last wait: the queue has drained once it has left.
    private var lastReply: EventLoopFuture<Void>?
    /// The client shut down its sending side (`printf status | nc -U …`, `echo … | socat`), or closed: no more
    /// commands come.
    private var inputClosed = false

    init(hub: EventHub, state: DaemonState, control: PipelineControl, options: ServerOptions, logger: Logger) {
        self.hub = hub
        self.state = state
        self.control = control
        self.options = options
        self.logger = logger
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        guard hub.clientCount < options.maxClients else {
            logger.warning("refusing a client: \(options.maxClients) clients are connected (socket.max_clients)")
            var buffer = channel.allocator.buffer(capacity: 64)
            buffer.writeString(ServerMessage.error("too many clients (\(options.maxClients)); try again later"))
            context.writeAndFlush(NIOAny(buffer)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        peerCredentials(of: channel).whenComplete { result in
            let handler = loopBound.value
            let credentials = try? result.get()
            if !handler.options.admits(credentials) {
                if let credentials {
                    handler.logger.warning(
                        "refusing a client: uid \(credentials.uid) gid \(credentials.gid) (pid \(credentials.pid)) is not in socket.allowed_uids/allowed_gids"
                    )
                    handler.hub.send(
                        ServerMessage.error("permission denied: uid \(credentials.uid) is not allowed"), to: channel)
                } else {
                    handler.logger.warning(
                        "refusing a client: its credentials (SO_PEERCRED) cannot be read and socket.allowed_uids/allowed_gids are set"
                    )
                    handler.hub.send(
                        ServerMessage.error("permission denied: your credentials cannot be checked"), to: channel)
                }
                channel.close(promise: nil)
                return
            }
            handler.id = handler.hub.add(channel)
            handler.accepted = true
            if let credentials {
                handler.logger.info(
                    "client \(handler.id) connected: pid \(credentials.pid) uid \(credentials.uid) gid \(credentials.gid)"
                )
            } else {
                handler.logger.info("client \(handler.id) connected")
            }
            let journal = handler.hub.journal  // once: a journal opened later attaches in between
            handler.hub.send(
                ServerMessage.hello(
                    daemonVersion: repdVersion, sensor: handler.state.sensor, subscribed: EventKind.defaults,
                    newestID: journal?.newestID, journal: journal?.identity),
                to: channel)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if accepted {
            hub.remove(context.channel)
            if badLines > Self.loggedBadLines {
                logger.notice("client \(id) disconnected after \(badLines) bad lines")
            } else {
                logger.info("client \(id) disconnected")
            }
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        pending.writeBuffer(&incoming)
        handlePendingLines(context: context)
    }

    /// The end of the client's input (a half-close, `shutdown(SHUT_WR)`, which `allowRemoteHalfClosure` lets
    /// through; a close looks the same) ends its commands: a last line without a newline is a command too, every
    /// line is answered, a replay or `history` reply to its end, and then repd closes the connection. Before, the end
    /// of input closed it at once: the last line without a newline, and a replay still on its way (`echo 'subscribe
    /// since=41' | socat …` as docs/PROTOCOL.md shows it), were lost. Live events do not go on after it: a client
    /// that closed looks the same until a write fails, which on an idle station can take hours.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard case .inputClosed? = event as? ChannelEvent else {
            return context.fireUserInboundEventTriggered(event)
        }
        inputClosed = true
        if pending.readableBytes > 0, pending.getInteger(at: pending.writerIndex - 1, as: UInt8.self) != 0x0A {
            pending.writeInteger(UInt8(ascii: "\n"))
        }
        handlePendingLines(context: context)
    }

    /// After the end of the client's input, once every line is answered: closes the connection after what it was
    /// sent has left.
    private func closeIfAnswered(context: ChannelHandlerContext) {
        guard accepted, inputClosed, !busy, context.channel.isActive else { return }
        let channel = context.channel
        channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        hub.writabilityChanged(context.channel)
        context.fireChannelWritabilityChanged()
    }

    /// Answers the complete lines received, in order, until one starts a replay or a `history` reply, or the replies
    /// leave the client's queue over half its limit; then stops reading the socket until that is done or drained.
    ///
    /// Before, only replays and `history` replies waited: `status`, `ping` and `error` replies to lines sent in a row
    /// were all written at once, and the reply that passed the queue's limit disconnected the client as one that
    /// stopped reading (1000 `status` lines in one write: 168 replies, then a reset), although it read all the while.
    private func handlePendingLines(context: ChannelHandlerContext) {
        answering = true
        while !busy, context.channel.isActive,
            let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n"))
        {
            let length = newline - pending.readerIndex
            // A line too long is refused whole, whether its newline came in the same read or not yet.
            guard length <= ClientCommand.maximumLineLength else {
                answering = false
                return refuseLongLine(context: context)
            }
            let line = pending.readBytes(length: length)!
            pending.moveReaderIndex(forwardBy: 1)
            // Nothing after `bye` (the journal file changed: `EventHub.disconnectAll`), until the connection closes.
            guard accepted, hub.holds(context.channel) else { continue }
            if let answered = handle(line: line, context: context) {
                wait(for: answered, context: context)
            }
            // Also after a wait that ended at once (a reply the hub wrote itself, `history` without a journal):
            // whatever answered the line, the next one waits while the queue is loaded.
            if !busy, queueIsLoaded(context.channel) {
                // Live lines behind the replies are held to the stall limit, not to the queue's (the replies filled
                // it, not the client's reading), until the queue drained: then the next line is answered.
                wait(for: hub.whenDrained(context.channel, after: lastReply), context: context)
            }
        }
        answering = false
        setReading(!busy, context: context)
        if !busy { closeIfAnswered(context: context) }
        // What follows the last newline is a line still coming: it too is held to the limit.
        let lastNewline =
            pending.readableBytesView.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? pending.readerIndex
        guard pending.writerIndex - lastNewline <= ClientCommand.maximumLineLength else {
            return refuseLongLine(context: context)
        }
        if !busy { pending.discardReadBytes() }
    }

    /// Answers no further line until `answered` completes, then goes on with the lines waiting.
    private func wait(for answered: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        busy = true
        lastReply = nil
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        answered.whenComplete { _ in
            let (handler, context) = loopBound.value
            handler.busy = false
            // Completed inside `handlePendingLines` (at once, or by one of its writes): its loop goes on. A loop
            // started here instead would nest once per line (100 000 `history` lines without a journal).
            guard !handler.answering, context.channel.isActive else { return }
            handler.handlePendingLines(context: context)
        }
    }

    /// Whether the client's queue holds more than half its limit (the low water mark; not writable: more than all).
    private func queueIsLoaded(_ channel: Channel) -> Bool {
        guard channel.isWritable else { return true }
        guard let options = channel.syncOptions,
            let buffered = try? options.getOption(.bufferedWritableBytes),
            let marks = try? options.getOption(.writeBufferWaterMark)
        else { return false }
        return buffered > marks.low
    }

    private func setReading(_ on: Bool, context: ChannelHandlerContext) {
        guard on != reading, context.channel.isActive else { return }
        reading = on
        _ = context.channel.setOption(ChannelOptions.autoRead, value: on)
    }

    /// Sends one reply and keeps its write (`lastReply`).
    private func reply(_ line: String, context: ChannelHandlerContext) {
        lastReply = hub.send(line, to: context.channel)
    }

    /// Replies `error` and closes the connection; the rest of what the client sent is ignored.
    private func refuseLongLine(context: ChannelHandlerContext) {
        logger.warning(
            "client \(id) sent a line longer than \(ClientCommand.maximumLineLength) bytes; disconnecting it")
        hub.send(
            ServerMessage.error("line longer than \(ClientCommand.maximumLineLength) bytes; closing"),
            to: context.channel)
        pending.clear()
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        logger.debug("client \(id): \(error)")
        context.close(promise: nil)
    }

    /// Answers one command; returns a future when the answer goes on after this call (a replay, a `history` reply),
    /// which completes when it is done.
    private func handle(line: [UInt8], context: ChannelHandlerContext) -> EventLoopFuture<Void>? {
        let command: ClientCommand
        do {
            command = try ClientCommand.parse(line: line)
        } catch {
            badLines += 1
            if badLines <= Self.loggedBadLines {
                logger.notice("client \(id) sent a bad line: \(error.reason)")
                if badLines == Self.loggedBadLines {
                    logger.notice("client \(id): its further bad lines are not logged (each still gets its error)")
                }
            }
            reply(ServerMessage.error(error.reason), context: context)
            return nil
        }
        switch command {
        case .status:
            var status = state.status(clients: hub.clientCount)
            status.journal = hub.journalStatus
            reply(ServerMessage.status(status, daemonVersion: repdVersion), context: context)
        case .subscribe(let kinds, let since):
            hub.subscribe(context.channel, to: kinds)
            reply(ServerMessage.subscribed(kinds, since: since), context: context)
            if let since {
                logger.info("client \(id) asked for the events after id \(since)")
                return hub.replay(context.channel, since: since, kinds: kinds)
            }
        case .reset:
            control.requestReset()
            logger.info("client \(id) asked for a reset")
            reply(ServerMessage.resetDone(), context: context)
        case .ping:
            reply(ServerMessage.pong(), context: context)
        case .history(let request):
            return hub.answerHistory(request, to: context.channel)
        }
        return nil
    }

    /// `struct ucred` (pid, uid, gid: three 32-bit fields), which the Glibc module does not export.
    struct PeerCredentials: Sendable {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
    }

    private func peerCredentials(of channel: Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
    }
}
