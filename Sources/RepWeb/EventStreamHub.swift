import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// The browsers' Server-Sent Events streams: every update goes to every stream, and no stream can hold up another
/// or grow without bound.
///
/// Each browser has a queue of at most `queueLimit` messages. A browser that stops reading first fills its socket,
/// then its queue; when the queue is full, or a write to it has not completed for `stallTimeout`, its connection is
/// closed (it reconnects by itself if it is alive). As a `Service` it sends a `ping` event every `pingInterval` (so a
/// page notices a dead connection and idle proxies keep it open) and, on shutdown, ends every stream.
public final class EventStreamHub: Service, Sendable {
    /// One browser's stream.
    public struct Client: Sendable {
        /// Its number (for the log).
        public let id: Int
        /// The messages to write, in order; ends when the hub drops the browser or stops.
        public let messages: AsyncStream<ByteBuffer>
    }

    private struct Entry {
        var continuation: AsyncStream<ByteBuffer>.Continuation
        var channel: any Channel
        /// When the write in progress began (nil when none is).
        var writingSince: ContinuousClock.Instant?
    }

    private struct State {
        var clients: [Int: Entry] = [:]
        var nextID = 1
        var closed = false
        var dropped = 0
    }

    /// Messages a browser may have waiting before it is disconnected.
    public let queueLimit: Int
    /// How long one write may wait for a browser to read before it is disconnected.
    public let stallTimeout: Duration
    /// How often a `ping` event goes out.
    public let pingInterval: Duration
    /// Behind NIO's lock (a pthread mutex) rather than `Synchronization.Mutex`, whose futex ThreadSanitizer does not
    /// see: under it, ThreadSanitizer reported accesses made under the `Mutex` as races.
    private let state = NIOLockedValueBox(State())
    private let logger: Logger

    /// A hub; see the type's description for the limits.
    public init(
        queueLimit: Int = 64, stallTimeout: Duration = .seconds(10), pingInterval: Duration = .seconds(10),
        logger: Logger
    ) {
        precondition(queueLimit > 0)
        self.queueLimit = queueLimit
        self.stallTimeout = stallTimeout
        self.pingInterval = pingInterval
        self.logger = logger
    }

    /// Browsers connected now.
    public var count: Int { state.withLockedValue { $0.clients.count } }
    /// Browsers disconnected so far because they fell behind.
    public var droppedCount: Int { state.withLockedValue { $0.dropped } }

    /// Adds a browser whose HTTP connection is `channel`; `first` are the messages it gets before any update (the
    /// current state). Nil once the hub has stopped.
    public func add(channel: any Channel, first: [ByteBuffer]) -> Client? {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(queueLimit))
        // Under the lock, so that no update can overtake the state it follows.
        let id: Int? = state.withLockedValue { state in
            guard !state.closed else { return nil }
            let id = state.nextID
            state.nextID += 1
            for message in first { continuation.yield(message) }
            state.clients[id] = Entry(continuation: continuation, channel: channel)
            return id
        }
        guard let id else {
            continuation.finish()
            return nil
        }
        logger.debug("browser connected", metadata: ["web.client": "\(id)"])
        return Client(id: id, messages: stream)
    }

    /// Forgets a browser whose stream has ended.
    public func remove(_ id: Int) {
        let entry = state.withLockedValue { $0.clients.removeValue(forKey: id) }
        entry?.continuation.finish()
        if entry != nil { logger.debug("browser disconnected", metadata: ["web.client": "\(id)"]) }
    }

    /// Notes that a write to browser `id` begins (nil `since`: it completed).
    public func writing(_ id: Int, since: ContinuousClock.Instant?) {
        state.withLockedValue { $0.clients[id]?.writingSince = since }
    }

    /// Sends `message` to every browser; drops those whose queue is full.
    public func broadcast(_ message: ByteBuffer) {
        let full: [(Int, Entry)] = state.withLockedValue { state in
            var full: [(Int, Entry)] = []
            for (id, entry) in state.clients {
                if case .dropped = entry.continuation.yield(message) { full.append((id, entry)) }
            }
            for (id, _) in full { state.clients.removeValue(forKey: id) }
            state.dropped += full.count
            return full
        }
        for (id, entry) in full { drop(id, entry, reason: "its queue of \(queueLimit) messages is full") }
    }

    /// One SSE event: `event: NAME` (unless it is `message`) and the data line.
    public static func event(_ name: String = "message", data: String) -> ByteBuffer {
        var text = name == "message" ? "" : "event: \(name)\n"
        text += "data: \(data)\n\n"
        return ByteBuffer(string: text)
    }

    /// Sends pings and drops stalled browsers until shutdown; then ends every stream.
    public func run() async throws {
        let ping = Self.event("ping", data: "{}")
        await cancelWhenGracefulShutdown {
            var lastPing = ContinuousClock.now
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(1)) } catch { break }
                self.dropStalled()
                guard ContinuousClock.now - lastPing >= self.pingInterval else { continue }
                lastPing = .now
                self.broadcast(ping)
            }
        }
        stop()
    }

    /// Ends every stream and refuses new browsers.
    public func stop() {
        let entries = state.withLockedValue { state in
            state.closed = true
            defer { state.clients = [:] }
            return Array(state.clients.values)
        }
        for entry in entries { entry.continuation.finish() }
    }

    /// Drops the browsers whose write has waited longer than `stallTimeout` at `now` (`run` asks every second).
    func dropStalled(now: ContinuousClock.Instant = .now) {
        let stalled: [(Int, Entry)] = state.withLockedValue { state in
            let stalled = state.clients.filter { _, entry in entry.writingSince.map { now - $0 > stallTimeout } ?? false
            }
            for id in stalled.keys { state.clients.removeValue(forKey: id) }
            state.dropped += stalled.count
            return stalled.map { ($0.key, $0.value) }
        }
        for (id, entry) in stalled { drop(id, entry, reason: "it has not read for \(stallTimeout)") }
    }

    private func drop(_ id: Int, _ entry: Entry, reason: String) {
        logger.notice("disconnecting a browser that stopped reading: \(reason)", metadata: ["web.client": "\(id)"])
        entry.continuation.finish()
        entry.channel.close(promise: nil)
    }
}
