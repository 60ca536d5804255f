import Logging
import NIOCore
import NIOEmbedded
import RepClient
import RepProtocol
import RepSettings
import Synchronization
import Testing

@testable import RepDaemon

/// Stands for the socket under a client's queue: holds every write (its bytes and its promise) until `release()`,
/// as a kernel buffer that the client does not read holds them.
private final class HeldWrites: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = ByteBuffer

    private let state = Mutex<(lines: [String], promises: [EventLoopPromise<Void>])>(([], []))

    /// The lines written so far, held or not.
    var lines: [String] { state.withLock { $0.lines } }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let text = String(buffer: unwrapOutboundIn(data))
        state.withLock { held in
            held.lines += text.split(separator: "\n").map(String.init)
            if let promise { held.promises.append(promise) }
        }
    }

    func flush(context: ChannelHandlerContext) {}

    /// The held writes left for the socket (on the channel's loop).
    func release() {
        for promise in state.withLock({ held in
            defer { held.promises = [] }; return held.promises
        }) {
            promise.succeed()
        }
    }
}

@Suite("a replay's end and the client's queue")
struct ReplayQueueTests {
    @Test(
        "a live event that finds the queue over its limit while the replay's last page is still in it does not disconnect the client; it gets every event once, in order"
    )
    func replayTailIsNotHeldToTheQueueLimit() async throws {
        // A replay writes pages while the queue is under its limit, so its last page may leave the queue just under
        // it, and the next live line push it over. repd dropped such a client as one that stopped reading (a CI run
        // dropped a reader taking 4 KiB every 10 ms that way), though the replay, not the reader, had filled its
        // queue. Here the queue is over its limit exactly then: the page is still held, the live line comes.
        let dir = scratchDirectory()
        let path = dir + "/events.db"
        try prepareJournal(path: path, count: 40)
        let logger = Logger(label: "replay-queue-test")
        let journal = try EventRecorder.open(
            JournalSettings(), path: path, fileLock: try JournalLock(path: path), logger: logger)
        defer { journal.close() }
        let channel = NIOAsyncTestingChannel()
        let socket = HeldWrites()
        try await channel.pipeline.addHandler(socket)
        try await channel.connect(to: try SocketAddress(unixDomainSocketPath: dir + "/client.sock"))
        let hub = EventHub(eventLoop: channel.eventLoop, logger: logger, journal: journal)
        let replayed = try await channel.testingEventLoop.executeInContext {
            _ = hub.add(channel)
            return hub.replay(channel, since: 0, kinds: EventKind.defaults)
        }
        // Three pages (16, 16, 8) are written and held: the queue holds the last one.
        let deadline = ContinuousClock.now + .seconds(30)
        while socket.lines.count < 40 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(socket.lines.count == 40, "the replay wrote every journaled event")

        channel.isWritable = false  // the queue is over its limit
        try await channel.testingEventLoop.executeInContext { hub.publish(.rep, #"{"type":"rep","n":1}"#) }
        let activeAfterLive = channel.isActive  // (not inside #expect: describing a closed channel traps in NIO)
        #expect(activeAfterLive, "not disconnected: the queue is the replay's doing")

        // The replay's lines leave the queue; the live line is still over the limit: the client is waited for
        // (under the stall limit) until the queue drains.
        try await channel.testingEventLoop.executeInContext { socket.release() }
        let activeAfterRelease = channel.isActive
        #expect(activeAfterRelease)
        channel.isWritable = true
        try await channel.testingEventLoop.executeInContext { hub.writabilityChanged(channel) }
        try await replayed.get()

        // Live from now on, held to the queue limit as any client: another live line goes out.
        try await channel.testingEventLoop.executeInContext { hub.publish(.rep, #"{"type":"rep","n":2}"#) }
        let ids = socket.lines.prefix(40).compactMap { try? ServerLine.parse(Array($0.utf8)).eventID }.map(Int.init)
        #expect(ids == Array(1...40), "every journaled event once, in order")
        #expect(socket.lines.suffix(2) == [#"{"type":"rep","n":1}"#, #"{"type":"rep","n":2}"#])
        let activeAtEnd = channel.isActive
        #expect(activeAtEnd)
        _ = try? await channel.finish()
    }
}
