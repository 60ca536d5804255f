import Logging
import NIOCore
import NIOEmbedded
import RepProtocol
import RepSettings
import Testing

@testable import RepDaemon

/// Stands for a socket whose client has gone: every write fails at once and closes the channel (EPIPE), and the
/// channel's end removes the client from the hub, as `ClientHandler.channelInactive` does.
private final class GoneClient: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    // Set before the channel is used, read on its loop only.
    var hub: EventHub?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        promise?.fail(ChannelError.ioOnClosedChannel)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        hub?.remove(context.channel)
        context.fireChannelInactive()
    }
}

@Suite("a replay to a client that has gone")
struct ReplayClosedClientTests {
    @Test("a client that leaves while its replay is written is forgotten: the hub keeps no closed channel")
    func replayToAClosedClientForgetsIt() async throws {
        // The page's write failed at once (the client had closed), which closed the channel and removed the client;
        // the replay then stored its client back, and with it the closed channel, for good: each client resuming and
        // leaving mid-replay kept about 100 bytes (a soak: 108 then 49 bytes a connection, without end).
        let dir = scratchDirectory()
        let path = dir + "/events.db"
        try prepareJournal(path: path, count: 10)
        let logger = Logger(label: "replay-closed-test")
        let journal = try EventRecorder.open(
            JournalSettings(), path: path, fileLock: try JournalLock(path: path), logger: logger)
        defer { journal.close() }
        let channel = NIOAsyncTestingChannel()
        let gone = GoneClient()
        try await channel.pipeline.addHandler(gone)
        try await channel.connect(to: try SocketAddress(unixDomainSocketPath: dir + "/client.sock"))
        let hub = EventHub(eventLoop: channel.eventLoop, logger: logger, journal: journal)
        gone.hub = hub
        let replayed = try await channel.testingEventLoop.executeInContext {
            _ = hub.add(channel)
            return hub.replay(channel, since: 0, kinds: EventKind.defaults)
        }
        // The page is read on the journal's thread, then written (and refused) on the loop.
        let deadline = ContinuousClock.now + .seconds(30)
        while channel.isActive && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        // The loop finishes the task that wrote the page (and stored the client back, before the fix). The replay's
        // future is not awaited: awaiting a testing loop's future from the test's task is what ThreadSanitizer once
        // reported inside NIOEmbedded (executeInContext against get()'s continuation).
        try await channel.testingEventLoop.executeInContext {}
        _ = replayed
        let held = try await channel.testingEventLoop.executeInContext { hub.registeredClients }
        #expect(held == 0, "the hub holds \(held) clients after the only one left")
        #expect(hub.clientCount == 0)
    }
}
