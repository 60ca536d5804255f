import Logging
import NIOCore
import RepJournal
import RepProtocol
import Synchronization

/// Fans events out to every connected client, on the socket server's event loop.
///
/// Each event is encoded once into a buffer that every subscribed client shares. A client's unread output is
/// bounded by the channel's high water mark (`client_queue_kib`): a write that leaves a client over it disconnects
/// that client, so one that stops reading never holds memory or delays anyone else.
final class EventHub: Sendable {
    struct Client {
        let id: Int
        let channel: Channel
        var subscriptions: Set<EventKind>
        /// The newest journaled event a replay sent this client: live lines up to it are not sent again.
        var replayedThrough: Int64 = 0
    }

    let eventLoop: EventLoop
    private let clients: NIOLoopBoundBox<[ObjectIdentifier: Client]>
    private let count = Atomic<Int>(0)
    private let samplesSubscribers = Atomic<Int>(0)
    private let nextID = Atomic<Int>(1)
    private let logger: Logger
    /// The event journal (nil when there is none or it cannot be opened).
    let journal: EventRecorder?
    /// What `status` says when the configured journal could not be opened (nil otherwise).
    let journalFailure: ServerMessage.JournalStatus?
    /// Called after each event was journaled (wakes the uplink); must not block.
    private let onJournaled: @Sendable () -> Void

    init(
        eventLoop: EventLoop, logger: Logger, journal: EventRecorder? = nil,
        journalFailure: ServerMessage.JournalStatus? = nil, onJournaled: @escaping @Sendable () -> Void = {}
    ) {
        self.eventLoop = eventLoop
        clients = .makeBoxSendingValue([:], eventLoop: eventLoop)
        self.logger = logger
        self.journal = journal
        self.journalFailure = journalFailure
        self.onJournaled = onJournaled
    }

    /// Connected clients (a snapshot).
    var clientCount: Int { count.load(ordering: .relaxed) }

    /// Whether anyone wants raw samples (so the pipeline can skip encoding them).
    var wantsSamples: Bool { samplesSubscribers.load(ordering: .relaxed) > 0 }

    /// Registers a connected client (on the event loop) and returns its id.
    func add(_ channel: Channel) -> Int {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        clients.value[ObjectIdentifier(channel)] = Client(id: id, channel: channel, subscriptions: EventKind.defaults)
        count.wrappingAdd(1, ordering: .relaxed)
        return id
    }

    /// Forgets a client (on the event loop).
    func remove(_ channel: Channel) {
        if let client = clients.value.removeValue(forKey: ObjectIdentifier(channel)) {
            count.wrappingSubtract(1, ordering: .relaxed)
            if client.subscriptions.contains(.samples) { samplesSubscribers.wrappingSubtract(1, ordering: .relaxed) }
        }
    }

    /// Changes what a client receives (on the event loop).
    func subscribe(_ channel: Channel, to kinds: Set<EventKind>) {
        guard var client = clients.value[ObjectIdentifier(channel)] else { return }
        let had = client.subscriptions.contains(.samples)
        client.subscriptions = kinds
        clients.value[ObjectIdentifier(channel)] = client
        let has = kinds.contains(.samples)
        if had != has { samplesSubscribers.wrappingAdd(has ? 1 : -1, ordering: .relaxed) }
    }

    /// Sends `line` to every client subscribed to `kind`; callable from any thread. Not journaled (`samples`).
    func publish(_ kind: EventKind, _ line: String) {
        publish(kind, line, id: nil)
    }

    /// Journals an event (message type `type`, its line `body`) and sends it, with its id, to every client
    /// subscribed to `kind`; callable from any thread. Without a working journal it goes out without an id.
    func publishJournaled(_ kind: EventKind, type: String, body: String, wall: Double) {
        guard let journal else { return publish(kind, body, id: nil) }
        journal.record(type: type, body: body, wall: wall) { line, id in publish(kind, line, id: id) }
        onJournaled()
    }

    private func publish(_ kind: EventKind, _ line: String, id: Int64?) {
        if eventLoop.inEventLoop {
            fanOut(kind, line, id: id)
        } else {
            eventLoop.execute { self.fanOut(kind, line, id: id) }
        }
    }

    /// Sends a client the journaled events of `kinds` after `since`, then lets live ones through from the next id
    /// on (on the event loop). Lines already handed to the loop but not yet fanned out are in the journal, so they
    /// go out in the replay and are skipped live; lines handed over later carry higher ids: no gap, no duplicate.
    /// Events the client got live before it asked are sent again, so that from `subscribed` on ids only increase.
    /// Returns false (after telling the client) when the journal cannot be read.
    @discardableResult
    func replay(_ channel: Channel, since: Int64, kinds: Set<EventKind>) -> Bool {
        eventLoop.preconditionInEventLoop()
        guard let journal else {
            send(ServerMessage.error("no event journal (journal.path is empty or the file cannot be opened): nothing to replay"), to: channel)
            return false
        }
        var cursor = since
        var sent = 0
        while channel.isActive {
            let page: [JournalEntry]
            do { page = try journal.events(after: cursor, limit: 512) } catch {
                logger.error("replay for a client failed: \(error)")
                send(ServerMessage.error("cannot read the journal: \(error.message)"), to: channel)
                return false
            }
            guard let last = page.last else { break }
            for entry in page {
                guard let kind = ServerMessage.kind(ofType: entry.type), kinds.contains(kind) else { continue }
                send(ServerMessage.journaled(entry.json, id: entry.id, station: entry.station), to: channel)
                sent += 1
            }
            cursor = last.id
        }
        if var client = clients.value[ObjectIdentifier(channel)] {
            client.replayedThrough = max(client.replayedThrough, cursor)
            clients.value[ObjectIdentifier(channel)] = client
            logger.info("client \(client.id): replayed \(sent) events after id \(since) (through \(cursor))")
        }
        return true
    }

    /// Answers a `history` command with one `history` line (on the loop), or an `error` when there is no journal
    /// or it cannot be read.
    func answerHistory(_ request: HistoryRequest, to channel: Channel) {
        guard let journal else {
            return send(ServerMessage.error("no event journal (journal.path is empty or the file cannot be opened): no history"), to: channel)
        }
        let query = JournalQuery(
            after: request.after, before: request.before, from: request.from, to: request.to, types: request.types,
            limit: request.limit + 1, latest: request.latest)
        do {
            var entries = try journal.events(matching: query)
            let more = entries.count > request.limit
            if more { entries = request.latest ? Array(entries.dropFirst()) : Array(entries.dropLast()) }
            send(
                ServerMessage.history(entries.map { ($0.json, $0.id, $0.station) }, more: more, newestID: journal.newestID),
                to: channel)
        } catch {
            logger.error("history for a client failed: \(error)")
            send(ServerMessage.error("cannot read the journal: \(error.message)"), to: channel)
        }
    }

    /// Writes one line to one client and disconnects it if that leaves it over its queue limit (on the loop).
    func send(_ line: String, to channel: Channel) {
        var buffer = channel.allocator.buffer(capacity: line.utf8.count)
        buffer.writeString(line)
        write(buffer, to: channel)
    }

    /// Says `bye` to everyone and closes every connection; completes when all are closed. A client whose `bye`
    /// cannot be flushed within `grace` (it stopped reading, though under its queue limit) is closed then, and
    /// what it left unread is dropped: shutdown never waits on a client.
    func closeAll(reason: String, grace: TimeAmount) -> EventLoopFuture<Void> {
        eventLoop.flatSubmit {
            let line = ServerMessage.bye(reason: reason)
            let clients = Array(self.clients.value.values)
            let closing = clients.map { client -> EventLoopFuture<Void> in
                var buffer = client.channel.allocator.buffer(capacity: line.utf8.count)
                buffer.writeString(line)
                return client.channel.writeAndFlush(buffer).flatMap { client.channel.close() }
                    .recover { _ in }
            }
            let deadline = self.eventLoop.scheduleTask(in: grace) {
                for client in clients where client.channel.isActive {
                    self.logger.warning("client \(client.id) did not read its bye within \(grace.nanoseconds / 1_000_000) ms; closing it")
                    client.channel.close(promise: nil)
                }
            }
            return EventLoopFuture.andAllComplete(closing, on: self.eventLoop).always { _ in deadline.cancel() }
        }
    }

    private func fanOut(_ kind: EventKind, _ line: String, id: Int64?) {
        var buffer: ByteBuffer?
        for client in clients.value.values where client.subscriptions.contains(kind) {
            if let id, id <= client.replayedThrough { continue }  // the replay sent it
            if buffer == nil {
                var encoded = client.channel.allocator.buffer(capacity: line.utf8.count)
                encoded.writeString(line)
                buffer = encoded
            }
            write(buffer!, to: client.channel)
        }
    }

    private func write(_ buffer: ByteBuffer, to channel: Channel) {
        guard channel.isActive else { return }
        channel.writeAndFlush(buffer, promise: nil)
        if !channel.isWritable {
            let id = clients.value[ObjectIdentifier(channel)]?.id ?? 0
            logger.warning("client \(id) stopped reading: its queue passed the limit; disconnecting it")
            channel.close(promise: nil)
        }
    }
}
