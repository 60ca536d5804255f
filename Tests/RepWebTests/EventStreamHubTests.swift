import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import RepWeb

@Suite("the browsers' event streams")
struct EventStreamHubTests {
    private func text(_ buffer: ByteBuffer) -> String { String(buffer: buffer) }

    /// Whether `channel` is closed within 5 s (the hub's close goes through the channel's event loop).
    private func closes(_ channel: NIOAsyncTestingChannel) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while channel.isActive, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return !channel.isActive
    }

    @Test("a new browser gets the current state first, then every update, in order")
    func order() async throws {
        let hub = EventStreamHub(queueLimit: 8, logger: Logger(label: "test"))
        let client = try #require(
            hub.add(channel: NIOAsyncTestingChannel(), first: [EventStreamHub.event(data: "{\"n\":0}")]))
        hub.broadcast(EventStreamHub.event(data: "{\"n\":1}"))
        hub.broadcast(EventStreamHub.event("ping", data: "{}"))
        hub.stop()
        var received: [String] = []
        for await message in client.messages { received.append(text(message)) }
        #expect(received == ["data: {\"n\":0}\n\n", "data: {\"n\":1}\n\n", "event: ping\ndata: {}\n\n"])
    }

    @Test("a browser whose queue is full is disconnected (its connection closed); the others get every update")
    func fullQueueDrops() async throws {
        let hub = EventStreamHub(queueLimit: 4, logger: Logger(label: "test"))
        let slowChannel = NIOAsyncTestingChannel()
        try await slowChannel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        let slow = try #require(hub.add(channel: slowChannel, first: []))
        let fast = try #require(hub.add(channel: NIOAsyncTestingChannel(), first: []))
        var fastReceived = 0
        var fastIterator = fast.messages.makeAsyncIterator()
        for n in 1...10 {
            hub.broadcast(EventStreamHub.event(data: "{\"n\":\(n)}"))
            if await fastIterator.next() != nil { fastReceived += 1 }
        }
        #expect(fastReceived == 10)
        #expect(hub.count == 1)
        #expect(hub.droppedCount == 1)
        #expect(try await closes(slowChannel), "the slow browser's connection is closed")
        var slowReceived = 0
        for await _ in slow.messages { slowReceived += 1 }
        #expect(slowReceived == 4, "what was queued before the queue filled, then the end of the stream")
    }

    @Test(
        "a browser whose write has waited longer than the stall timeout is disconnected (its connection closed), not before"
    )
    func stalledWriteDrops() async throws {
        // The hub's service checks every second; the check is called here with the time it would see, so a busy
        // machine cannot make the test wait for the service's turn.
        let hub = EventStreamHub(queueLimit: 8, stallTimeout: .milliseconds(100), logger: Logger(label: "test"))
        let channel = NIOAsyncTestingChannel()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        let client = try #require(hub.add(channel: channel, first: []))
        let since = ContinuousClock.now
        hub.writing(client.id, since: since)
        hub.dropStalled(now: since + .milliseconds(90))
        #expect(hub.count == 1 && hub.droppedCount == 0, "within the stall timeout the browser stays")
        hub.dropStalled(now: since + .milliseconds(150))
        #expect(hub.count == 0 && hub.droppedCount == 1)
        #expect(try await closes(channel))
    }

    @Test("a browser whose write completed is not dropped however long ago it began")
    func completedWriteStays() async throws {
        let hub = EventStreamHub(queueLimit: 8, stallTimeout: .milliseconds(100), logger: Logger(label: "test"))
        let client = try #require(hub.add(channel: NIOAsyncTestingChannel(), first: []))
        let since = ContinuousClock.now
        hub.writing(client.id, since: since)
        hub.writing(client.id, since: nil)
        hub.dropStalled(now: since + .seconds(60))
        #expect(hub.count == 1 && hub.droppedCount == 0)
    }

    @Test("after stop, streams end and new browsers are refused")
    func stopEndsStreams() async throws {
        let hub = EventStreamHub(logger: Logger(label: "test"))
        let client = try #require(hub.add(channel: NIOAsyncTestingChannel(), first: []))
        hub.stop()
        var received = 0
        for await _ in client.messages { received += 1 }
        #expect(received == 0)
        #expect(hub.add(channel: NIOAsyncTestingChannel(), first: []) == nil)
    }
}
