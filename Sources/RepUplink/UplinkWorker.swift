import LinuxIIO
import Logging
import PlainText
import RepJournal
import RepProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// The uplink's thread: one loop that connects (with backoff), publishes from the journal within the in-flight
/// window, reads acknowledgements, stores the progress, and waits in `poll()` on the broker's socket and the wake
/// eventfd. Everything here belongs to that one thread.
final class UplinkWorker {
    private let settings: UplinkSession
    private let journalPath: String
    private let logger: Logger
    private let shared: Uplink.Shared
    private var journal: EventJournal?
    /// The files the daemon went over to while `journal` still had events to send
    /// (`Uplink.journalFileChanged(to:wentOver:)`), in order, each opened as soon as the daemon wrote it: sent once the
    /// broker has the one before whole. Held open so that a file deleted or replaced in turn before its events went
    /// out stays readable, and is sent all the same.
    private var queued: [EventJournal] = []
    /// The most files `queued` holds: each is an open connection to a file that may be deleted, whose disk space is
    /// freed only once it is closed. Past it, the oldest is let go unsent (`trimQueue()`).
    static let maxQueuedFiles = 8
    private var nextQueueAttempt = ContinuousClock.now
    private var nextJournalAttempt = ContinuousClock.now
    private var journalFailing = false
    private var window = InflightWindow(acked: 0)
    private var persisted: Int64 = 0
    private var connection: MQTTConnection?
    private var connected = false
    /// Whether the broker accepted a connection in this run (`MQTTConnection.answeredBefore`).
    private var brokerAnswered = false
    private var connectStarted = ContinuousClock.now
    private var connectedAt = ContinuousClock.now
    /// MQTT 5 until a broker refuses it (then 3.1.1 for as long as repd runs).
    private var protocolVersion = MQTTConnection.MQTTVersion.v5
    /// The event the broker refused (its PUBACK's reason, or over its packet size): until the broker has taken it,
    /// one event at a time is sent, so that what follows it is not sent again at each attempt.
    private var heldID: Int64?
    /// Whether the broker refused a status message (said once: the refusal of each event says the rest).
    private var statusRefused = false
    private var delay: Double
    private var nextAttempt = ContinuousClock.now
    private var lastError: String?
    private var published = 0
    private var connections = 0
    private var offlineMID: Int32?
    /// How long the last connection attempt's call took: the name lookup in it blocks (a broker's name with no DNS
    /// server answering takes the resolver's timeouts, 10 s and more).
    private var lastConnectCall = Duration.zero

    init(settings: UplinkSession, journalPath: String, logger: Logger, shared: Uplink.Shared) {
        self.settings = settings
        self.journalPath = journalPath
        self.logger = logger
        self.shared = shared
        delay = settings.reconnectMin
    }

    func run() {
        shared.handedFiles.withLock { $0.accepting = true }
        while !shared.stopping.load(ordering: .acquiring) {
            step()
        }
        shutdown()
    }

    // MARK: - The loop

    private func step() {
        let now = ContinuousClock.now
        takeHandedFiles()
        if journal == nil, now >= nextJournalAttempt { openNextJournal() }
        if journal != nil, now >= nextQueueAttempt { queueDaemonFile() }
        if connection == nil, journal != nil, now >= nextAttempt { connect() }
        if connected { pump() }
        var timeout = 1000
        if connection == nil {
            var until = (journal == nil ? nextJournalAttempt : nextAttempt) - now
            if journal != nil, behindDaemon { until = min(until, nextQueueAttempt - now) }
            timeout = max(
                0,
                min(1000, Int(until.components.seconds * 1000 + until.components.attoseconds / 1_000_000_000_000_000)))
        }
        service(timeoutMilliseconds: timeout)
        // A broker that accepts the TCP connection but never answers (one shutting down, a black hole on the
        // way) must not hold the uplink: give up after `connectTimeout` and try again.
        if connection != nil, !connected,
            ContinuousClock.now - connectStarted > .milliseconds(Int(settings.connectTimeout * 1000))
        {
            failed(
                UplinkError(
                    .unreachable,
                    "no answer (CONNACK) from the broker at \(settings.host):\(settings.port) within \(formatSeconds(settings.connectTimeout)) s"
                ))
        }
        // A PUBACK the broker lost would hold the stored progress, and every event after it, until the connection
        // ended: after a keepalive period with later events acknowledged, or two without, the connection is made
        // again.
        if connected, let late = window.overdue(now: .now, limit: .seconds(settings.keepalive)) {
            let sent = "sent \(formatSeconds(late.waited)) s ago"
            failed(
                UplinkError(
                    .acknowledgementLost,
                    late.later > 0
                        ? "the broker at \(settings.host):\(settings.port) acknowledged \(late.later) later events but not event id \(late.id), \(sent) (over uplink.keepalive_s): its acknowledgement was lost; reconnecting to send it again"
                        : "the broker at \(settings.host):\(settings.port) has not acknowledged event id \(late.id), \(sent) (over twice uplink.keepalive_s), nor anything after it: its acknowledgement was lost; reconnecting to send it again"
                ))
        }
        persist()
        // The last acknowledgement of the old file may have come just now: go over before the status says that
        // nothing is left (a stop right after would not send the new file's events).
        if connected { followJournalFile() }
        updateStatus()
    }

    /// Waits up to `timeoutMilliseconds` for the socket or the wake eventfd, then lets libmosquitto read, write
    /// and keep the connection alive, and handles what happened.
    private func service(timeoutMilliseconds: Int) {
        var fds = [pollfd(fd: shared.wake.fd, events: Int16(POLLIN), revents: 0)]
        if let connection, connection.socket >= 0 {
            let events = Int16(POLLIN) | (connection.wantsWrite ? Int16(POLLOUT) : 0)
            fds.append(pollfd(fd: connection.socket, events: events, revents: 0))
        }
        // EINTR is retried (with the whole timeout again); a failure leaves every revents 0, like a timeout.
        let polled = retryingInterrupts { poll(&fds, nfds_t(fds.count), Int32(timeoutMilliseconds)) }
        if case .success(let ready) = polled, ready > 0, fds[0].revents & Int16(POLLIN) != 0 { shared.wake.reset() }
        guard let connection else { return }
        do throws(UplinkError) {
            // A connection refused before CONNACK: plain MQTT's read says so, but over TLS libmosquitto's read
            // returns as if the handshake only waited for more, and poll() would report the hang-up at once, again
            // and again (a busy loop, and "no CONNACK" 5 s later instead of the reason).
            if fds.count > 1, !connected, fds[1].revents & Int16(POLLHUP | POLLERR) != 0,
                let reason = socketError(connection.socket)
            {
                throw UplinkError(
                    .unreachable, "cannot reach the broker at \(settings.host):\(settings.port): \(reason)")
            }
            if fds.count > 1, fds[1].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { try connection.read() }
            if fds.count > 1, !connection.accepted, connection.socket >= 0, fds[1].revents & Int16(POLLHUP) != 0 {
                // The connect's own error may be gone (TLS's first write took it): whether a peer was ever
                // connected tells a refused connection from one the broker closed.
                guard peerConnected(connection.socket) else {
                    throw UplinkError(
                        .unreachable,
                        "cannot reach the broker at \(settings.host):\(settings.port): the TCP connection failed (nothing listens there, or it cannot be reached)"
                    )
                }
                throw UplinkError(
                    .connectionLost,
                    "the broker at \(settings.host):\(settings.port) closed the connection before its CONNACK"
                        + (settings.tls != nil ? " (does it speak TLS on this port? uplink.tls)" : ""))
            }
            if connection.socket >= 0, connection.wantsWrite, fds.count > 1, fds[1].revents & Int16(POLLOUT) != 0 {
                try connection.write()
            }
            if connection.socket >= 0 { try connection.misc() }
            try handle(connection.takeEvents(), on: connection)
            if connection.socket < 0 { throw connection.ended() }
        } catch {
            failed(error)
        }
    }

    private func handle(_ events: [MQTTConnection.Event], on connection: MQTTConnection) throws(UplinkError) {
        for event in events {
            switch event {
            case .connected:
                connected = true
                brokerAnswered = true
                connectedAt = ContinuousClock.now
                connections += 1
                if lastError != nil { logger.notice("uplink: connected again to \(settings.brokerURL)") }
                if heldID == nil { lastError = nil }  // a refused event's error stands until the broker takes it
                let newest = (try? journal?.newestID) ?? 0
                // Retention may have removed events the broker never acknowledged: they cannot be sent.
                let oldest = (try? journal?.oldestID) ?? nil
                var resumeAfter = window.watermark
                if let oldest, oldest - 1 > resumeAfter, resumeAfter < newest {
                    logger.warning(
                        "uplink: events \(resumeAfter + 1)–\(oldest - 1) were removed from the journal (journal.max_events, max_age_days or max_size_mb) before the broker acknowledged them: they cannot be sent"
                    )
                    resumeAfter = oldest - 1
                }
                logger.info(
                    "uplink: connected to \(settings.brokerURL) as \(settings.clientID) (\(connection.protocolVersion.name)); sending \(settings.eventsTopic) after event id \(window.watermark) (backlog \(max(0, newest - resumeAfter)))"
                )
                do {
                    _ = try connection.publish(
                        topic: settings.statusTopic, payload: statusPayload(.online), retain: true,
                        what: "the status message")
                } catch  where error.kind == .messageRefused {
                    statusRefusedOnce(error.message)
                }
            case .acknowledged(let mid, let reason) where reason >= 0x80:
                // MQTT 5: the broker refused the message. The event is not acknowledged: nothing after it goes out
                // until the broker takes it (the journal keeps it), and the connection is made again after the
                // backoff delay, which grows while the refusals go on.
                let words = MQTTConnection.describeReason(reason)
                if let id = window.eventID(mid: mid) {
                    heldID = id
                    throw UplinkError(
                        .messageRefused,
                        "the broker at \(settings.host):\(settings.port) refused event id \(id) on \(settings.eventsTopic): \(words)\(Self.refusalHint(reason, settings)); the uplink sends nothing after it until the broker takes it"
                    )
                }
                if mid == offlineMID { offlineMID = nil }
                statusRefusedOnce(
                    "the broker at \(settings.host):\(settings.port) refused the status message on \(settings.statusTopic): \(words)\(Self.refusalHint(reason, settings))"
                )
            case .acknowledged(let mid, _):
                if window.acknowledged(mid: mid) == nil, mid == offlineMID { offlineMID = nil }
                if let held = heldID, window.watermark >= held {
                    heldID = nil
                    lastError = nil
                    logger.notice("uplink: the broker took event id \(held); sending the rest")
                }
            case .refused, .disconnected:
                break  // read() reports it, with the reason
            }
        }
    }

    /// Publishes journaled events after the last one sent, while the window has room.
    private func pump() {
        guard let connection, connected, let journal else { return }
        // One event at a time while a refused one is held.
        let room = heldID.map { window.watermark < $0 } == true ? 1 : settings.maxInflight
        while window.count < room {
            let page: [JournalEntry]
            do { page = try journal.events(after: window.lastSent, limit: room - window.count) } catch {
                journalTrouble(error)
                return
            }
            journalRecovered()
            guard !page.isEmpty else {
                if window.count == 0 { followJournalFile() }
                return
            }
            for entry in page {
                let line = ServerMessage.journaled(
                    entry.json, id: entry.id, station: entry.station, journal: journalIdentity(journal),
                    type: entry.type)
                if line.hasPrefix("{\"type\":\"damaged\"") {
                    logger.error(
                        "uplink: event id \(entry.id) in the journal is damaged (not one JSON object): it goes out as {\"type\":\"damaged\"}"
                    )
                }
                do {
                    let mid = try connection.publish(
                        topic: settings.eventsTopic, payload: String(line.dropLast()), retain: false,
                        what: "event id \(entry.id)")
                    window.sent(id: entry.id, mid: mid)
                    published += 1
                } catch {
                    if error.kind == .messageRefused { heldID = entry.id }
                    failed(error)
                    return
                }
            }
        }
    }

    /// Logs a refused status message, once: the refusal of each event says the rest.
    private func statusRefusedOnce(_ message: String) {
        guard !statusRefused else { return }
        statusRefused = true
        logger.warning("uplink: \(message)")
    }

    // MARK: - Connecting

    private func connect() {
        var settings = settings
        do throws(UplinkError) {
            if let file = settings.passwordFile { settings.password = try PasswordFile.read(file) }
            if let tls = settings.tls, let problem = UplinkFiles.problem(tls) {
                throw UplinkError(.setup, problem.description)
            }
            let connection = try MQTTConnection(
                settings: settings, will: statusPayload(.will), protocol: protocolVersion,
                answeredBefore: brokerAnswered)
            self.connection = connection
            connectStarted = ContinuousClock.now
            window = InflightWindow(acked: window.watermark)
            defer { lastConnectCall = ContinuousClock.now - connectStarted }
            try connection.connect()
        } catch {
            failed(error)
        }
    }

    /// Ends the connection after `error`, logs why, and schedules the next attempt (the delay doubles each time,
    /// from `reconnectMin` to `reconnectMax`, and starts again from `reconnectMin` once a connection has lasted
    /// `stableConnection`: a broker that accepts each connection and soon drops it, or refuses what it is sent, is
    /// not asked every `reconnectMin`). Whatever was in flight is sent again on the next connection.
    private func failed(_ error: UplinkError) {
        let wasConnected = connected
        let resentAfter = window.watermark
        let unacknowledged = window.count
        let refusedVersion = connection.map { $0.protocolVersion == .v5 && [1, 0x84].contains($0.refusal) } ?? false
        connection = nil
        connected = false
        window.reset()
        if refusedVersion {
            // A broker that speaks only MQTT 3.1.1 refuses an MQTT 5 CONNECT: speak 3.1.1 to it at once.
            protocolVersion = .v311
            nextAttempt = ContinuousClock.now
            logger.notice(
                "uplink: the broker at \(settings.host):\(settings.port) does not speak MQTT 5; connecting with MQTT 3.1.1, in which a broker cannot say that it refused an event (an ACL, a size limit): such an event would count as delivered"
            )
            return
        }
        let lasted = ContinuousClock.now - connectedAt
        if wasConnected, lasted >= Self.stableConnection { delay = settings.reconnectMin }
        var error = error
        if wasConnected, lasted < Self.stableConnection, error.kind == .connectionLost,
            !error.message.contains("client id")
        {
            // The broker's own reason (MQTT 5's DISCONNECT) is not always sent: mosquitto 2.0 closes a taken-over
            // session without it.
            error.message +=
                " after \(formatSeconds(lasted)) s (if this repeats: another client may use the client id \(settings.clientID); each station needs its own journal.station or uplink.client_id)"
        }
        let wait = delay
        delay = min(settings.reconnectMax, delay * 2)
        nextAttempt = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        let retry = "retrying in \(formatSeconds(wait)) s"
        switch error.kind {
        case .connectionLost where wasConnected, .acknowledgementLost:
            let again =
                unacknowledged > 0
                ? "; what was sent after event id \(resentAfter) goes out again (\(unacknowledged) not acknowledged)"
                : ""
            logger.warning("uplink: \(error.message)\(again); \(retry)")
        case .unreachable, .connectionLost:
            logger.warning("uplink: \(error.message); \(retry)")
        default:
            logger.error("uplink: \(error.message); \(retry)")
        }
        lastError = error.message
    }

    /// How long a connection must last for the next failure to be retried after `reconnectMin` again.
    static let stableConnection = Duration.seconds(10)

    /// The pending error on `socket` (`SO_ERROR`: a connect that failed), in the system's words; nil when none.
    private func socketError(_ socket: Int32) -> String? {
        guard socket >= 0 else { return nil }
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_ERROR, &code, &length) == 0, code != 0 else { return nil }
        return String(cString: strerror(code))
    }

    /// Whether `socket` was ever connected to a peer (a connect that failed leaves none).
    private func peerConnected(_ socket: Int32) -> Bool {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(socket, $0, &length) == 0 }
        }
    }

    /// What to check when the broker refuses a message with `reason`.
    private static func refusalHint(_ reason: Int32, _ settings: UplinkSession) -> String {
        let who = settings.username.map { "user \($0)" } ?? "anonymous clients"
        switch reason {
        case 0x87, 0x90:
            return " (check that the broker's ACL lets \(who) publish to \(settings.topicPrefix)/\(settings.station)/#)"
        case 0x95, 0x97:
            return " (the broker's limit on message size or count: mosquitto's message_size_limit or max_packet_size)"
        default:
            return ""
        }
    }

    // MARK: - The journal

    /// Opens the next file to send from: the first of `queued`, or else the daemon's.
    private func openNextJournal() {
        if let next = queued.first {
            if use(next) { queued.removeFirst() }
            return
        }
        switch openDaemonFile(shared.journalFile.withLock { $0 }) {
        case .success(let opened): if !use(opened) { opened.close() }
        case .failure(.notAtPath): nextJournalAttempt = ContinuousClock.now + .milliseconds(200)
        case .failure(.error(let error)):
            nextJournalAttempt = ContinuousClock.now + .seconds(5)
            journalTrouble(error)
        }
    }

    /// Why `openDaemonFile(_:)` opened nothing.
    private enum DaemonFileUnopened: Error {
        /// The journal's path names another file (or none) just now.
        case notAtPath
        /// SQLite could not open it, or it is no journal.
        case error(JournalError)
    }

    /// Opens the file at the journal's path when it is `expected` (the daemon's,
    /// `Uplink.journalFileChanged(to:wentOver:)`; nil: whatever is there, before the daemon said). Another file at the
    /// path (moved there while repd runs, before the daemon went over to it) would be opened beside the daemon's
    /// write-ahead log and shared memory of its own file, still at the path, and read as if they were its own.
    private func openDaemonFile(_ expected: FileIdentity?) -> Result<EventJournal, DaemonFileUnopened> {
        if let expected, FileIdentity(journalPath) != expected { return .failure(.notAtPath) }
        do {
            let opened = try EventJournal(path: journalPath, station: settings.station, handsOutIDs: false)
            if let expected, opened.openedFile != expected {
                opened.close()  // the file changed in between
                return .failure(.notAtPath)
            }
            return .success(opened)
        } catch {
            return .failure(.error(error))
        }
    }

    /// Sends from `opened` on, after what the broker acknowledged of it; false when that cannot be read (tried again
    /// after 5 s).
    private func use(_ opened: EventJournal) -> Bool {
        do {
            let acked = try opened.ackedID(broker: settings.brokerURL)
            journal = opened
            window = InflightWindow(acked: acked)
            persisted = acked
            let newest = (try? opened.newestID) ?? 0
            logger.info(
                "uplink: \(settings.brokerURL), station \(settings.station): the broker has acknowledged events up to id \(acked) (newest \(newest))"
            )
            return true
        } catch {
            nextJournalAttempt = ContinuousClock.now + .seconds(5)
            journalTrouble(error)
            return false
        }
    }

    /// Takes the connections the daemon's journal thread opened to each file it went over to
    /// (`Uplink.journalFileChanged(to:wentOver:)`) into `queued`, in order; one to a file read or queued already is
    /// closed.
    private func takeHandedFiles() {
        for file in handedSinceLastTake() {
            if file.openedFile == journal?.openedFile || queued.contains(where: { $0.openedFile == file.openedFile }) {
                file.close()
            } else {
                queued.append(file)
            }
        }
        trimQueue()
    }

    /// The connections handed since the last take (`Uplink.journalFileChanged(to:wentOver:)`); with `stopAccepting`,
    /// none is handed from then on.
    private func handedSinceLastTake(stopAccepting: Bool = false) -> [EventJournal] {
        shared.handedFiles.withLock { handed in
            if stopAccepting { handed.accepting = false }
            defer { handed.files = [] }
            return handed.files.map(\.journal)
        }
    }

    /// Lets the oldest queued files go while more than `maxQueuedFiles` wait (a journal deleted again and again while
    /// the broker is away), each with a warning that names its unsent events: the file read now and the newest go
    /// out, and the disk holds no more than that many deleted files for the broker. Until 2026-12-07 the queue had no
    /// bound.
    private func trimQueue() {
        while queued.count > Self.maxQueuedFiles {
            let dropped = queued.removeFirst()
            let left = eventsLeft(in: dropped)
            dropped.close()
            logger.warning(
                "uplink: \(left) events of a journal file repd wrote before (deleted or replaced while repd ran) were not sent to the broker, and will not be: \(Self.maxQueuedFiles) newer files wait to be sent after it, the most the uplink keeps open; the oldest of them is let go (its disk space is freed)"
            )
        }
    }

    /// While the events of an older file are still to go (`behindDaemon`) and the daemon's journal thread could not
    /// open the file it writes now for the uplink (`takeHandedFiles()`): opens it here, once, and queues it behind
    /// the others. Until 2026-12-07 the uplink opened the daemon's file only when it went over to it: a second change
    /// before then (the broker away, `rm events.db` twice) lost the events of the file between.
    private func queueDaemonFile() {
        guard behindDaemon, let target = shared.journalFile.withLock({ $0 }),
            !queued.contains(where: { $0.openedFile == target })
        else { return }
        switch openDaemonFile(target) {
        case .success(let opened):
            queued.append(opened)
            trimQueue()
        case .failure(.notAtPath): nextQueueAttempt = ContinuousClock.now + .milliseconds(200)
        case .failure(.error(let error)):
            nextQueueAttempt = ContinuousClock.now + .seconds(5)
            journalTrouble(error)
        }
    }

    /// Goes over to the next file the daemon wrote (`queued`, or else the one it writes now at the journal's path:
    /// `Uplink.journalFileChanged(to:wentOver:)`, the old one was deleted or replaced while repd runs), once the broker
    /// has acknowledged every event of the file read so far (called when nothing is left to send and nothing is in
    /// flight): nothing journaled in the old file is lost to the broker. The progress stored in the next file counts
    /// from there (0 in a new file: all of it goes out; a backup put back: from what it had stored, so some events go
    /// out again, with their ids). When nothing is queued and the path names another file than the daemon's (the one
    /// read here, moved away and back: the daemon does not open it again while this connection has it open), the
    /// connection is closed all the same, and `openNextJournal()` waits for the daemon to go over to the file there.
    private func followJournalFile() {
        // A query that fails (the file busy) does not say that nothing is left: wait for the next step.
        guard let journal, behindDaemon, window.count == 0,
            let next = try? journal.events(after: window.lastSent, limit: 1), next.isEmpty
        else { return }
        persist()
        journal.close()
        self.journal = nil
        logger.notice(
            "uplink: the broker has every event of the journal file repd wrote before (up to id \(window.watermark)); reading \(queued.isEmpty ? "the file repd writes now at \(journalPath)" : "the next file repd wrote")"
        )
        openNextJournal()
    }

    /// Whether the daemon writes another file than the one read (`Uplink.journalFileChanged(to:wentOver:)`): once
    /// everything of this one is acknowledged, the uplink goes over to it.
    private var behindDaemon: Bool {
        guard let journal, let target = shared.journalFile.withLock({ $0 }) else { return false }
        return journal.openedFile != target
    }

    /// Whether the uplink is behind the daemon and can go over to its file, which is at the journal's path.
    private var canFollow: Bool {
        behindDaemon && FileIdentity(journalPath) == shared.journalFile.withLock({ $0 })
    }

    /// Stores the progress when it moved.
    private func persist() {
        guard let journal else { return }
        let mark = window.watermark
        guard mark > persisted else { return }
        do {
            try journal.setAckedID(mark, broker: settings.brokerURL, wall: wallClock())
            persisted = mark
            journalRecovered()
        } catch {
            journalTrouble(error)
        }
    }

    private func journalTrouble(_ error: JournalError) {
        if !journalFailing {
            logger.error("uplink: \(error); the uplink waits for the journal")
            journalFailing = true
        }
        lastError = "journal: \(error.message)"
    }

    private func journalRecovered() {
        guard journalFailing else { return }
        journalFailing = false
        logger.notice("uplink: the journal can be used again")
        if connected { lastError = nil }
    }

    // MARK: - Status

    private func updateStatus() {
        let state: UplinkStatus.State = connected ? .connected : (lastError == nil ? .connecting : .error)
        // Read on this thread's own connection: `status` never touches the daemon's journal lock.
        var newest = (try? journal?.newestID).flatMap { $0 } ?? persisted
        // Still on the old file of a daemon that went over to another, or waiting to open the daemon's file: what
        // that file holds is still to go, as far as the uplink knows.
        if behindDaemon || journal == nil { newest = max(newest, persisted + 1) }
        // And the files queued behind it: the backlog (`newestID - ackedID`) counts their events too.
        newest += queued.reduce(0) { $0 + eventsLeft(in: $1) }
        shared.status.withLock { status in
            status.newestID = newest
            status.state = state
            status.lastError = lastError
            status.ackedID = persisted
            status.inFlight = window.count
            status.published = published
            status.connections = connections
        }
    }

    /// What the retained status message says.
    private enum StatusKind {
        /// At each connection: who and what, and the id the uplink resumes after.
        case online
        /// At a clean stop, published by repd itself: when.
        case stopped
        /// The last will, published by the broker when the connection dies: no `wall`, since that moment is
        /// unknown here (the will is set when the connection is made).
        case will
    }

    /// The journal file's identity for the messages (nil for a file without one: only a file no repd has written
    /// yet). The daemon's own connection made it before the uplink started.
    private func journalIdentity(_ journal: EventJournal?) -> String? {
        guard let identity = journal?.identity, !identity.isEmpty else { return nil }
        return identity
    }

    /// The retained status message:
    /// `{"state":"online","station","wall","client_id","version","journal","acked_id"}`,
    /// `{"state":"offline","station","wall"}` at a clean stop, `{"state":"offline","station"}` as the last will.
    private func statusPayload(_ kind: StatusKind) -> String {
        var members: [(String, JSONWriter.Value)] = [
            ("state", .string(kind == .online ? "online" : "offline")), ("station", .string(settings.station)),
        ]
        if kind != .will { members.append(("wall", .number(wallClock()))) }
        if kind == .online {
            members += [
                ("client_id", .string(settings.clientID)), ("version", .string(settings.softwareVersion)),
            ]
            if let identity = journalIdentity(journal) { members.append(("journal", .string(identity))) }
            members.append(("acked_id", .integer(Int(window.watermark))))
        }
        return JSONWriter.Value.object(members).text
    }

    // MARK: - Stopping

    /// Gives the backlog up to `stopGrace` seconds to be acknowledged, says `offline` (retained; a clean
    /// DISCONNECT does not fire the last will), disconnects, and stores the progress.
    private func shutdown() {
        let deadline = ContinuousClock.now + .milliseconds(Int(settings.stopGrace * 1000))
        // Between two journal files (`followJournalFile()`): the daemon's new one, with what it journaled at its stop.
        takeHandedFiles()
        if journal == nil { openNextJournal() }
        // One more try: the broker may be back. Not when the last attempt's call took over a second: its name lookup
        // blocks, and would hold the stop past `stopGrace` (DNS unreachable: the resolver's timeouts).
        let mayConnect = connection != nil || lastConnectCall < .seconds(1)
        if connection == nil, mayConnect { nextAttempt = ContinuousClock.now }
        if !mayConnect, journal != nil, hasBacklog() {
            logger.info(
                "uplink: not trying the broker again at stop: the last attempt spent \(formatSeconds(lastConnectCall)) s looking up \(settings.host)"
            )
        }
        while ContinuousClock.now < deadline, journal != nil,
            window.count > 0 || hasBacklog() || canFollow || !queued.isEmpty
        {
            if connection == nil {
                guard mayConnect, ContinuousClock.now >= nextAttempt else { break }
                connect()
            }
            pump()
            service(timeoutMilliseconds: 50)
            persist()
        }
        if connected, let connection {
            do {
                offlineMID = try connection.publish(
                    topic: settings.statusTopic, payload: statusPayload(.stopped), retain: true,
                    what: "the status message")
                let until = ContinuousClock.now + .milliseconds(500)
                while connected, offlineMID != nil, ContinuousClock.now < until { service(timeoutMilliseconds: 50) }
                connection.disconnect()
                let flushed = ContinuousClock.now + .milliseconds(200)
                while let c = self.connection, c.socket >= 0, c.wantsWrite, ContinuousClock.now < flushed {
                    service(timeoutMilliseconds: 20)
                }
            } catch {
                logger.debug("uplink: at shutdown: \(error)")
            }
        }
        persist()
        connection = nil
        connected = false
        // What is left: of the file repd writes, sent after a restart; of the files it wrote before (deleted or
        // replaced while the broker was away), never.
        takeHandedFiles()
        let daemonFile = shared.journalFile.withLock { $0 }
        var later: Int64 = 0
        var lost: (events: Int64, files: Int) = (0, 0)
        for (n, file) in ((journal.map { [$0] } ?? []) + queued).enumerated() {
            let left = eventsLeft(in: file, acked: n == 0 && journal != nil ? persisted : nil)
            if daemonFile == nil || file.openedFile == daemonFile {
                later += left
            } else if left > 0 {
                lost = (lost.events + left, lost.files + 1)
            }
        }
        logger.info(
            "uplink: stopped; the broker has acknowledged every event up to id \(persisted)\(later > 0 ? " (\(later) to send after a restart)" : "")"
        )
        if lost.events > 0 {
            logger.warning(
                "uplink: \(lost.events) events of \(lost.files) journal file\(lost.files == 1 ? "" : "s") repd wrote before the one it writes now (deleted or replaced while repd ran) were not sent to the broker, and will not be"
            )
        }
        journal?.close()
        journal = nil
        // No more connections handed from here on; any handed since the last take is closed.
        for file in queued + handedSinceLastTake(stopAccepting: true) { file.close() }
        queued = []
        shared.status.withLock { status in
            status.state = .stopped
            status.ackedID = persisted
            status.inFlight = 0
        }
    }

    /// The events of `file` after `acked` (default: what it stores as acknowledged by this broker); 0 when that
    /// cannot be read.
    private func eventsLeft(in file: EventJournal, acked: Int64? = nil) -> Int64 {
        guard let newest = try? file.newestID, let acked = acked ?? (try? file.ackedID(broker: settings.brokerURL))
        else { return 0 }
        return max(0, newest - acked)
    }

    private func hasBacklog() -> Bool {
        guard let journal, let next = try? journal.events(after: window.lastSent, limit: 1) else { return false }
        return !next.isEmpty
    }
}

/// Seconds as "0.5", "2", "60".
func formatSeconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(Double(Int(value * 10)) / 10)
}

/// A duration in seconds, as `formatSeconds(_:)` writes them.
func formatSeconds(_ duration: Duration) -> String {
    formatSeconds(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
}
