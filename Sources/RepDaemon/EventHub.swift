import Logging
import NIOConcurrencyHelpers
import NIOCore
import PlainText
import RepJournal
import RepProtocol
import Synchronization

/// Fans events out to every connected client, on the socket server's event loop.
///
/// Each event is encoded once into a buffer that every subscribed client shares. A client's unread output is
/// bounded by the channel's high water mark (`client_queue_kib`): a live line that leaves a client over it
/// disconnects that client, so one that stops reading never holds memory or delays anyone else. Replies to its
/// commands (`send(_:to:)`) never disconnect it: `ClientHandler` answers no further command, and stops reading the
/// socket, while they hold its queue over half the mark, and waits for it to drain (`whenDrained(_:after:)`).
/// Replays and `history` replies are read from the journal (on its own thread) a page at a time, each page once the
/// client's queue drained under that mark: whatever the gap, a client holds at most one page plus its queue. Until
/// the last page (or the reply) has left the queue, live lines behind it are held to `stallLimit` instead of the
/// mark (`whenDrained(_:after:)`).
final class EventHub: Sendable {
    struct Client {
        let id: Int
        let channel: Channel
        var subscriptions: Set<EventKind>
        /// The newest journaled event a replay sent this client: live lines up to it are not sent again.
        var replayedThrough: Int64 = 0
        /// While a replay runs: live journaled events are not sent (the replay reads them from the journal).
        var replaying = false
        /// While a replay or a `history` reply waits for the client's queue to drain (or for its last write to
        /// leave the queue): completed by `writabilityChanged` or that write, or the client is closed by `stall`.
        /// Live lines are not held to the queue limit then (the page already went past it, or may leave the queue
        /// just under it); the stall limit bounds what they add.
        var drained: (promise: EventLoopPromise<Void>, stall: Scheduled<Void>)?
    }

    let eventLoop: EventLoop
    private let clients: NIOLoopBoundBox<[ObjectIdentifier: Client]>
    /// Set when `closeAll` said `bye`: replay pages and history replies still on their way are not sent after it.
    private let closing: NIOLoopBoundBox<Bool>
    private let count = Atomic<Int>(0)
    private let samplesSubscribers = Atomic<Int>(0)
    private let nextID = Atomic<Int>(1)
    private let logger: Logger
    /// The event journal and what `status` says while the configured one cannot be opened (`attachJournal`).
    private let journalState: NIOLockedValueBox<(recorder: EventRecorder?, failure: ServerMessage.JournalStatus?)>
    /// Called after each event was journaled (wakes the uplink); must not block.
    private let onJournaled: @Sendable () -> Void
    /// Called with the file the journal writes, at start and when it went over to another file at its path (the
    /// uplink reads only that file, and follows); must not block.
    private let onNewJournalFile: @Sendable (_ file: FileIdentity, _ wentOver: Bool) -> Void

    init(
        eventLoop: EventLoop, logger: Logger, journal: EventRecorder? = nil,
        journalFailure: ServerMessage.JournalStatus? = nil, onJournaled: @escaping @Sendable () -> Void = {},
        onNewJournalFile: @escaping @Sendable (_ file: FileIdentity, _ wentOver: Bool) -> Void = { _, _ in }
    ) {
        self.eventLoop = eventLoop
        clients = .makeBoxSendingValue([:], eventLoop: eventLoop)
        closing = .makeBoxSendingValue(false, eventLoop: eventLoop)
        self.logger = logger
        journalState = NIOLockedValueBox((journal, journalFailure))
        self.onJournaled = onJournaled
        self.onNewJournalFile = onNewJournalFile
        if let journal { follow(journal) }
    }

    /// How long a client told `bye` because the journal file changed has to read it before it is closed anyway.
    static let journalByeGrace = TimeAmount.seconds(2)

    /// Tells every client `bye` when `recorder` went over to another journal file (`EventRecorder.followPath()`):
    /// the ids they got came from the other file. The recorder calls this on its thread after the last line of the
    /// old file was handed to the loop and before the first of the new, so each client gets every event it was sent
    /// from the old file, then `bye`, and nothing after; on reconnecting, `hello` names the new file's identity.
    private func follow(_ recorder: EventRecorder) {
        recorder.onNewFile { [weak self] reason, file in
            guard let self else { return }
            disconnectAll(reason: reason, grace: Self.journalByeGrace)
            if let file { onNewJournalFile(file, true) }
        }
        // After the callback is set: a change in between is told by the callback, with the newer file.
        if let file = recorder.currentFile { onNewJournalFile(file, false) }
    }

    /// Says `bye` (`reason`) to every connected client and closes each connection once its `bye` was written, or
    /// after `grace`; unlike `closeAll`, the hub goes on serving (new connections, live events). Callable from any
    /// thread: runs on the loop after every line handed to it before.
    func disconnectAll(reason: String, grace: TimeAmount) {
        eventLoop.execute {
            let line = ServerMessage.bye(reason: reason)
            let clients = Array(self.clients.value.values)
            // Forgotten at once: no live line goes out to them after their bye.
            for client in clients { self.remove(client.channel) }
            for client in clients {
                var buffer = client.channel.allocator.buffer(capacity: line.utf8.count)
                buffer.writeString(line)
                let deadline = self.eventLoop.scheduleTask(in: grace) { client.channel.close(promise: nil) }
                client.channel.writeAndFlush(buffer).whenComplete { _ in
                    deadline.cancel()
                    client.channel.close(promise: nil)
                }
            }
            if !clients.isEmpty {
                self.logger.notice("told \(clients.count) client\(clients.count == 1 ? "" : "s") bye (\(reason))")
            }
        }
    }

    /// The event journal (nil when there is none, or until the configured one could be opened).
    var journal: EventRecorder? { journalState.withLockedValue { $0.recorder } }

    /// What `status` says while the configured journal cannot be opened (nil otherwise).
    var journalFailure: ServerMessage.JournalStatus? { journalState.withLockedValue { $0.failure } }

    /// What `status` says about the journal: the open journal's state, or why the configured one cannot be opened
    /// (one snapshot of both); nil without a journal.
    var journalStatus: ServerMessage.JournalStatus? {
        let (recorder, failure) = journalState.withLockedValue { ($0.recorder, $0.failure) }
        return recorder?.status ?? failure
    }

    /// Journals the events published from now on in `recorder`, a journal that could not be opened at start
    /// (`JournalReopenService`); events published before went out without ids.
    func attachJournal(_ recorder: EventRecorder) {
        journalState.withLockedValue { $0 = (recorder, nil) }
        follow(recorder)
    }

    /// Says why the configured journal still cannot be opened (`status`).
    func journalStillFails(_ failure: ServerMessage.JournalStatus) {
        journalState.withLockedValue { state in
            if state.recorder == nil { state.failure = failure }
        }
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

    /// How many clients the hub holds (on the event loop): each holds its channel.
    var registeredClients: Int {
        eventLoop.preconditionInEventLoop()
        return clients.value.count
    }

    /// Whether the hub holds `channel`'s client (on the event loop): false once it was told `bye` by
    /// `disconnectAll`, after which its commands are not answered.
    func holds(_ channel: Channel) -> Bool { clients.value[ObjectIdentifier(channel)] != nil }

    /// Forgets a client (on the event loop).
    func remove(_ channel: Channel) {
        if let client = clients.value.removeValue(forKey: ObjectIdentifier(channel)) {
            if let drained = client.drained {
                drained.stall.cancel()
                drained.promise.fail(ChannelError.ioOnClosedChannel)
            }
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

    /// Journals an event and sends it, with its id, to every client subscribed to its kind; callable from any
    /// thread. Without a working journal it goes out without an id.
    func publishJournaled(_ event: JournaledEvent) {
        guard let journal else { return publish(event.kind, event.line, id: nil) }
        journal.record(event) { line, id in
            self.publish(event.kind, line, id: id)
            self.onJournaled()
        }
    }

    /// Returns when every event journaled before has been handed to the event loop (see `EventRecorder.flush`).
    func flushJournal() async {
        await journal?.flush()
    }

    private func publish(_ kind: EventKind, _ line: String, id: Int64?) {
        if eventLoop.inEventLoop {
            fanOut(kind, line, id: id)
        } else {
            eventLoop.execute { self.fanOut(kind, line, id: id) }
        }
    }

    /// How many journaled events one replay page holds: a client's memory is bounded by one page plus its queue.
    /// Small, so that writing one delays a live event waiting behind it on the loop as little as possible (timed in a
    /// debug build under load: median 1 ms for 64 events, 3-4.5 ms for 256; 16 was not timed on its own).
    static let pageSize = 16
    /// How long a client may keep a full queue without reading while a replay, a `history` reply or replies to its
    /// commands wait for it to drain, before it is disconnected as one that stopped reading.
    static let stallLimit = TimeAmount.seconds(10)

    /// Sends a client the journaled events of `kinds` after `since`, page by page as its socket drains, then lets
    /// live ones through from the next id on (on the event loop); the future completes when the client is live.
    ///
    /// From the call on, live journaled events are not sent to the client: each page is read on the journal's thread
    /// and arrives after the lines of every event appended before it (see `EventRecorder`), so after the last page
    /// the client joins the live stream with no gap and no duplicate. Events the client got live before it asked
    /// are sent again, so that from `subscribed` on ids only increase. A page is written when the client's queue is
    /// under its limit; a client that reads nothing for `stallLimit` while it waits is disconnected. When the
    /// journal cannot be read the client is told (`error`) and goes live.
    func replay(_ channel: Channel, since: Int64, kinds: Set<EventKind>) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        guard let journal else {
            // Done once the error left the queue, as any reply: a client that sends this again and again without
            // reading is held by `ClientHandler` like one that asks for `status`.
            let written = send(
                ServerMessage.error(
                    "no event journal (journal.path is empty or the file cannot be opened): nothing to replay"),
                to: channel)
            return whenDrained(channel, after: written)
        }
        guard var client = clients.value[ObjectIdentifier(channel)] else { return eventLoop.makeSucceededVoidFuture() }
        client.replaying = true
        clients.value[ObjectIdentifier(channel)] = client
        let promise = eventLoop.makePromise(of: Void.self)
        replayPage(
            channel, journal: journal, since: since, cursor: since, kinds: kinds, sent: 0, written: nil,
            promise: promise)
        return promise.futureResult
    }

    /// `written`: the write of the last page that held a line (nil before the first).
    private func replayPage(
        _ channel: Channel, journal: EventRecorder, since: Int64, cursor: Int64, kinds: Set<EventKind>, sent: Int,
        written: EventLoopFuture<Void>?, promise: EventLoopPromise<Void>
    ) {
        let pageSize = Self.pageSize
        journal.read(on: eventLoop) { journal throws(JournalError) in
            try journal.events(after: cursor, limit: pageSize)
        } deliver: { result, handedOver in
            let key = ObjectIdentifier(channel)
            guard channel.isActive, !self.closing.value, var client = self.clients.value[key] else {
                return promise.succeed()
            }
            let page: [JournalEntry]
            switch result {
            case .success(let entries): page = entries
            case .failure(let error):
                self.logger.error("replay for client \(client.id) failed: \(error)")
                self.send(ServerMessage.error("cannot read the journal: \(error.message)"), to: channel)
                page = []
            }
            if cursor == since, since > 0, let first = page.first?.id, first > since + 1 {
                // Retention removed what the client missed (or a crash skipped those ids): a replay that began
                // later without a word looked like an ordinary gap in ids. `first` is the oldest event held, of any
                // type: with a type filter the replay may start later (it said "the replay starts at" a set_start
                // that `subscribe rep` never sent).
                let missing = first == since + 2 ? "event \(since + 1) is" : "events \(since + 1)…\(first - 1) are"
                self.send(
                    ServerMessage.error(
                        "since=\(since): \(missing) not in the journal (removed by retention, or never written: ids skipped after a crash); the journal holds events from id \(first) on"
                    ), to: channel)
            }
            var buffer = channel.allocator.buffer(capacity: page.count * 256)
            var sent = sent
            var stations: (name: String, json: String)?
            for entry in page {
                guard let kind = ServerMessage.kind(ofType: entry.type), kinds.contains(kind) else { continue }
                if stations?.name != entry.station {
                    stations = (entry.station, JSONWriter.Value.string(entry.station).text)
                }
                Self.writeJournaled(entry, stationJSON: stations!.json, to: &buffer)
                sent += 1
            }
            // Written whatever the queue holds: the page was asked for when the queue was under its limit.
            var written = written
            if buffer.readableBytes > 0 { written = channel.writeAndFlush(buffer) }
            guard page.count == pageSize, let last = page.last else {
                // The end of the journal as it was when this page was read: every event appended since comes live.
                // The replay is done once its last line left the queue and the queue is under its limit (until
                // then live lines wait in the queue too, under the stall limit rather than the queue limit: the
                // replay filled the queue, not the client's reading).
                client.replaying = false
                if cursor == since, page.isEmpty, since > handedOver {
                    // No event of this journal ever had that id: the client's ids came from another file (the
                    // journal was replaced or deleted). Holding back live events up to it would hide this journal's
                    // next `since − newest` events without a word; say so, and go live after the newest.
                    self.send(
                        ServerMessage.error(
                            "since=\(since) is above this journal's newest event id, \(handedOver): those ids came from another journal file (replaced or deleted?); live events follow, from id \(handedOver + 1) (since=0 replays this journal)"
                        ), to: channel)
                    self.logger.notice(
                        "client \(client.id): since=\(since) is above the newest event id \(handedOver); sending it live events"
                    )
                    client.replayedThrough = max(client.replayedThrough, handedOver)
                } else {
                    client.replayedThrough = max(client.replayedThrough, page.last?.id ?? cursor, handedOver)
                }
                // The page's write can fail at once (the client closed: EPIPE) and close the channel, which removes
                // the client: storing it back then would keep the closed channel in `clients` for good (a client
                // resuming and leaving mid-replay leaked its channel, about 100 bytes of memory each, before).
                guard self.clients.value[key] != nil else { return promise.succeed() }
                self.clients.value[key] = client
                self.logger.info(
                    "client \(client.id): replayed \(sent) events after id \(since) (through \(client.replayedThrough))"
                )
                self.whenDrained(channel, after: written).whenComplete { _ in promise.succeed() }
                return
            }
            let (sentSoFar, writtenSoFar) = (sent, written)
            self.whenDrained(channel).whenComplete { drained in
                guard case .success = drained else { return promise.succeed() }
                self.replayPage(
                    channel, journal: journal, since: since, cursor: last.id, kinds: kinds, sent: sentSoFar,
                    written: writtenSoFar, promise: promise)
            }
        }
    }

    /// Writes a journaled event's line as it went out live (`ServerMessage.journaled`: the object with `id` and
    /// `station` added) straight into `buffer`, without building it as a string first: a replay writes thousands.
    static func writeJournaled(_ entry: JournalEntry, stationJSON: String, to buffer: inout ByteBuffer) {
        // A row damaged on the disk (or written by something else) is not passed on as invalid JSON.
        var json = Substring(entry.json)
        while json.last == "\n" { json = json.dropLast() }
        guard ServerMessage.isOneObject(json) else {
            buffer.writeString(ServerMessage.damaged(type: entry.type, id: entry.id, station: entry.station))
            return
        }
        buffer.writeString(entry.json)
        while let last = buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self),
            last == UInt8(ascii: "\n") || last == UInt8(ascii: "}")
        {
            buffer.moveWriterIndex(to: buffer.writerIndex - 1)
            if last == UInt8(ascii: "}") { break }
        }
        let empty = buffer.getInteger(at: buffer.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "{")
        buffer.writeStaticString(empty ? "\"id\":" : ",\"id\":")
        buffer.writeString(String(entry.id))
        buffer.writeStaticString(",\"station\":")
        buffer.writeString(stationJSON)
        buffer.writeStaticString("}\n")
    }

    /// Completes when the client's queue is under its limit (at once if it is) and, with `written` (the last write
    /// of a replay, of a `history` reply, or of replies to commands sent in a row), once that write has left the
    /// queue with the queue under its limit, or the queue fell under half its limit. Until then live lines are held
    /// to `stallLimit`, not to the queue limit: a replay stops writing pages only when the queue passed its limit, so
    /// its last page may leave the queue just under it, where the next live line would otherwise disconnect a client
    /// that reads all the while. A client whose wait lasts `stallLimit` is disconnected (the future then fails).
    func whenDrained(_ channel: Channel, after written: EventLoopFuture<Void>? = nil) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        let key = ObjectIdentifier(channel)
        guard channel.isActive, var client = clients.value[key] else {
            return eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
        }
        if channel.isWritable && written == nil { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        let id = client.id
        let stall = eventLoop.scheduleTask(in: Self.stallLimit) {
            guard self.clients.value[key]?.drained != nil else { return }
            self.logger.warning(
                "client \(id) stopped reading: its queue did not drain in \(Self.stallLimit.nanoseconds / 1_000_000_000) s while it was sent the journal or replies; disconnecting it"
            )
            channel.close(promise: nil)
        }
        client.drained = (promise, stall)
        clients.value[key] = client
        // Written with the queue under its limit: done; over it, `writabilityChanged` ends the wait.
        let waiting = promise.futureResult
        written?.whenComplete { _ in
            if channel.isWritable { self.endDrain(key, waiting: waiting) }
        }
        return waiting
    }

    /// The client's queue went under its limit, or over it (from `ClientHandler.channelWritabilityChanged`).
    func writabilityChanged(_ channel: Channel) {
        guard channel.isWritable else { return }
        endDrain(ObjectIdentifier(channel), waiting: nil)
    }

    /// Ends the client's wait for its queue to drain (only the wait whose future is `waiting`, when given).
    private func endDrain(_ key: ObjectIdentifier, waiting: EventLoopFuture<Void>?) {
        guard var client = clients.value[key], let drained = client.drained else { return }
        if let waiting, drained.promise.futureResult !== waiting { return }
        client.drained = nil
        clients.value[key] = client
        drained.stall.cancel()
        drained.promise.succeed()
    }

    /// Answers a `history` command with one `history` line (on the loop), or an `error` when there is no journal
    /// or it cannot be read. The query runs on the journal's thread; the future completes once the reply left the
    /// client's queue with the queue under its limit, or the queue fell under half its limit (as a replay's end).
    func answerHistory(_ request: HistoryRequest, to channel: Channel) -> EventLoopFuture<Void> {
        guard let journal else {
            let written = send(
                ServerMessage.error(
                    "no event journal (journal.path is empty or the file cannot be opened): no history"), to: channel)
            return whenDrained(channel, after: written)
        }
        let query = JournalQuery(
            after: request.after, before: request.before, from: request.from, to: request.to, types: request.types,
            limit: request.limit + 1, latest: request.latest)
        let promise = eventLoop.makePromise(of: Void.self)
        journal.read(on: eventLoop) { journal throws(JournalError) in
            (try journal.events(matching: query), try journal.newestID)
        } deliver: { result, _ in
            guard channel.isActive, !self.closing.value, self.clients.value[ObjectIdentifier(channel)] != nil else {
                return promise.succeed()
            }
            switch result {
            case .success((var entries, let newest)):
                let more = entries.count > request.limit
                if more { entries = request.latest ? Array(entries.dropFirst()) : Array(entries.dropLast()) }
                let line = ServerMessage.history(
                    entries.map { ($0.json, $0.id, $0.station, $0.type) }, more: more, newestID: newest)
                var buffer = channel.allocator.buffer(capacity: line.utf8.count)
                buffer.writeString(line)
                let written = channel.writeAndFlush(buffer)
                self.whenDrained(channel, after: written).whenComplete { _ in promise.succeed() }
            case .failure(let error):
                self.logger.error("history for a client failed: \(error)")
                let written = self.send(ServerMessage.error("cannot read the journal: \(error.message)"), to: channel)
                self.whenDrained(channel, after: written).whenComplete { _ in promise.succeed() }
            }
        }
        return promise.futureResult
    }

    /// Writes one reply (to a command, or `hello`, or an `error`) to one client (on the loop) and returns the write.
    /// Unlike a live line it never disconnects the client: the client asked for it, and `ClientHandler` sends the
    /// next one only once the queue holds at most half its limit, so replies pass the limit by one line at most.
    /// (Before, the reply that passed the limit disconnected a client that sent commands in a row while it read.)
    @discardableResult
    func send(_ line: String, to channel: Channel) -> EventLoopFuture<Void> {
        var buffer = channel.allocator.buffer(capacity: line.utf8.count)
        buffer.writeString(line)
        return channel.writeAndFlush(buffer)
    }

    /// Says `bye` to everyone and closes every connection; completes when all are closed. A client whose `bye`
    /// cannot be flushed within `grace` (it stopped reading, though under its queue limit) is closed then, and
    /// what it left unread is dropped: shutdown never waits on a client.
    func closeAll(reason: String, grace: TimeAmount) -> EventLoopFuture<Void> {
        eventLoop.flatSubmit {
            self.closing.value = true
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
                    self.logger.warning(
                        "client \(client.id) did not read its bye within \(grace.nanoseconds / 1_000_000) ms; closing it"
                    )
                    client.channel.close(promise: nil)
                }
            }
            return EventLoopFuture.andAllComplete(closing, on: self.eventLoop).always { _ in deadline.cancel() }
        }
    }

    private func fanOut(_ kind: EventKind, _ line: String, id: Int64?) {
        var buffer: ByteBuffer?
        for client in clients.value.values where client.subscriptions.contains(kind) {
            if let id, client.replaying || id <= client.replayedThrough { continue }  // the replay sends it
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
            let client = clients.value[ObjectIdentifier(channel)]
            // A replay (between its pages too) or a history reply is under way: the stall limit rules.
            if client?.drained != nil || client?.replaying == true { return }
            let id = client?.id ?? 0
            logger.warning("client \(id) stopped reading: its queue passed the limit; disconnecting it")
            channel.close(promise: nil)
        }
    }
}
