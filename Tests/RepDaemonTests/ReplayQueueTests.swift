import Foundation
import Logging
import NIOCore
import NIOEmbedded
import RepClient
import RepProtocol
import RepSettings
import Testing

@testable import RepDaemon

/// Stands for the socket under a client's queue: holds every write (its bytes and its promise) until `release()`,
/// as a kernel buffer that the client does not read holds them.
///
/// Its state is behind an `NSLock` (a pthread mutex, which ThreadSanitizer sees) rather than `Synchronization.Mutex`:
/// a contended `Mutex` is handed over by the kernel (`FUTEX_LOCK_PI`), invisible to ThreadSanitizer, which reported
/// the test's read of `lines` against the loop's write as a race (CI, 2026-12-01), though both took the lock.
private final class HeldWrites: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = ByteBuffer

    private let lock = NSLock()
    // Read and written only under `lock`.
    private var heldLines: [String] = []
    private var promises: [EventLoopPromise<Void>] = []

    /// The lines written so far, held or not.
    var lines: [String] { lock.withLock { heldLines } }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let text = String(buffer: unwrapOutboundIn(data))
        lock.withLock {
            heldLines += text.split(separator: "\n").map(String.init)
            if let promise { promises.append(promise) }
        }
    }

    func flush(context: ChannelHandlerContext) {}

    /// Closing fails the writes still held, as a socket channel fails its pending writes.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        for held in takePromises() { held.fail(ChannelError.ioOnClosedChannel) }
        context.close(mode: mode, promise: promise)
    }

    /// The held writes left for the socket (on the channel's loop).
    func release() {
        for promise in takePromises() { promise.succeed() }
    }

    private func takePromises() -> [EventLoopPromise<Void>] {
        lock.withLock {
            defer { promises = [] }
            return promises
        }
    }
}

/// A hub whose client asked `since=0` over 36 journaled events, with every page written and held in `socket`: the
/// replay's last page is still in the client's queue.
private struct HeldReplay {
    let channel = NIOAsyncTestingChannel()
    let socket = HeldWrites()
    let hub: EventHub
    let journal: EventRecorder
    let replayed: EventLoopFuture<Void>

    init() async throws {
        let dir = scratchDirectory()
        let path = dir + "/events.db"
        // Three whole sets, as a repd that stopped leaves them (an open set would get its end journaled at open).
        try prepareJournal(path: path, count: 36)
        let logger = Logger(label: "replay-queue-test")
        journal = try EventRecorder.open(
            JournalSettings(), path: path, fileLock: try JournalLock(path: path), logger: logger)
        try await channel.pipeline.addHandler(socket)
        try await channel.connect(to: try SocketAddress(unixDomainSocketPath: dir + "/client.sock"))
        let (channel, hub) = (channel, EventHub(eventLoop: channel.eventLoop, logger: logger, journal: journal))
        self.hub = hub
        replayed = try await channel.testingEventLoop.executeInContext {
            _ = hub.add(channel)
            return hub.replay(channel, since: 0, kinds: EventKind.defaults)
        }
        // Three pages (16, 16, 4), read on the journal's thread, each written on the loop.
        let deadline = ContinuousClock.now + .seconds(30)
        while socket.lines.count < 36 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        // The loop finishes what it does with the last page (the replay's end) before the test goes on.
        try await channel.testingEventLoop.executeInContext {}
    }

    /// Whether the channel is open (read outside `#expect`: describing a closed channel traps in NIO).
    var isOpen: Bool { channel.isActive }

    func publish(_ line: String) async throws {
        try await channel.testingEventLoop.executeInContext { hub.publish(.rep, line) }
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
        let replay = try await HeldReplay()
        defer { replay.journal.close() }
        #expect(replay.socket.lines.count == 36, "the replay wrote every journaled event")

        replay.channel.isWritable = false  // the queue is over its limit
        try await replay.publish(#"{"type":"rep","n":1}"#)
        let openAfterLive = replay.isOpen
        #expect(openAfterLive, "not disconnected: the queue is the replay's doing")

        // The replay's lines leave the queue; the live line keeps it over the limit: the client is waited for
        // (under the stall limit) until the queue drains.
        try await replay.channel.testingEventLoop.executeInContext { replay.socket.release() }
        let openAfterRelease = replay.isOpen
        #expect(openAfterRelease)
        replay.channel.isWritable = true
        try await replay.channel.testingEventLoop.executeInContext { replay.hub.writabilityChanged(replay.channel) }
        try await replay.replayed.get()

        // Live from now on, held to the queue limit as any client: another live line goes out.
        try await replay.publish(#"{"type":"rep","n":2}"#)
        let lines = replay.socket.lines
        let ids = lines.prefix(36).compactMap { try? ServerLine.parse(Array($0.utf8)).eventID }.map(Int.init)
        #expect(ids == Array(1...36), "every journaled event once, in order")
        #expect(lines.suffix(2) == [#"{"type":"rep","n":1}"#, #"{"type":"rep","n":2}"#])
        let openAtEnd = replay.isOpen
        #expect(openAtEnd)
        _ = try? await replay.channel.finish()
    }

    @Test("a client that reads nothing of its replay's last page is disconnected after the stall limit (10 s)")
    func replayTailStallsOut() async throws {
        let replay = try await HeldReplay()
        defer { replay.journal.close() }
        await replay.channel.testingEventLoop.advanceTime(by: EventHub.stallLimit - .milliseconds(1))
        let openBefore = replay.isOpen
        #expect(openBefore, "waited for, up to the stall limit")
        await replay.channel.testingEventLoop.advanceTime(by: .milliseconds(1))
        let openAfter = replay.isOpen
        #expect(!openAfter, "disconnected at the stall limit")
        // The server's handler forgets a closed client (`channelInactive`); then the replay is over (it ends, not
        // fails, when the client goes).
        try await replay.channel.testingEventLoop.executeInContext { replay.hub.remove(replay.channel) }
        try await replay.replayed.get()
    }
}
