import Hummingbird
import Logging
import NIOCore
import RepConfiguration

/// What a request handler needs beyond Hummingbird's basic context: the connection, so that a browser that stops
/// reading its event stream can be disconnected.
public struct WebRequestContext: RequestContext {
    /// Hummingbird's own per-request state (`RequestContext` requires it).
    public var coreContext: CoreRequestContextStorage
    /// The browser's HTTP connection.
    public let channel: any Channel

    /// The context for a request that arrived on `source`'s connection.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The HTTP side: `/` the page, `/events` the Server-Sent Events stream of station states, `/api/status` JSON (the
/// first two also for HEAD, as uptime monitors ask); anything else is 404.
public enum WebServer {
    /// The default of how long a connection may sit without a request in progress (`--idle-timeout`).
    public static let defaultIdleTimeout: Double = 30

    /// The application serving `board` on `address`. A connection without a request in progress for `idleTimeout`
    /// (one that never finishes its request's head, or an idle keep-alive connection) is closed; an event stream, a
    /// request in progress, is not.
    public static func application(
        board: StationBoard, hub: EventStreamHub, address: ListenAddress, idleTimeout: Duration, logger: Logger,
        onServing: @escaping @Sendable () -> Void = {}
    ) -> some ApplicationProtocol {
        let router = Router(context: WebRequestContext.self)
        router.get("/") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: StationPage.html)))
        }
        for path in ["/", "/api/status"] {
            router.head(RouterPath(path)) { _, _ -> Response in
                Response(
                    status: .ok,
                    headers: [
                        .contentType: path == "/" ? "text/html; charset=utf-8" : "application/json",
                        .cacheControl: "no-store",
                    ])
            }
        }
        router.get("/api/status") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: await board.status())))
        }
        router.get("/events") { _, context -> Response in
            // Small buffers for an event stream, so a browser that stops reading holds little memory (about 64 KiB
            // in the kernel, 32 KiB in NIO) and is noticed soon (its writes stall; see EventStreamHub).
            try await context.channel.setOption(ChannelOptions.socketOption(.so_sndbuf), value: 32 * 1024).get()
            try await context.channel.setOption(
                ChannelOptions.writeBufferWaterMark, value: .init(low: 8 * 1024, high: 32 * 1024)
            ).get()
            guard let client = await board.subscribe(channel: context.channel) else {
                throw HTTPError(.serviceUnavailable, message: "repd-web is stopping")
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: "text/event-stream", .cacheControl: "no-store",
                    .init("X-Accel-Buffering")!: "no",
                ],
                body: ResponseBody { writer in
                    defer { hub.remove(client.id) }
                    // A browser retries 1 s after a lost connection (the page also watches for silence itself).
                    try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                    for await message in client.messages {
                        hub.writing(client.id, since: .now)
                        try await writer.write(message)
                        hub.writing(client.id, since: nil)
                    }
                    try await writer.finish(nil)
                })
        }
        return Application(
            router: router, server: .http1(configuration: .init(idleTimeout: TimeAmount(idleTimeout))),
            configuration: .init(address: .hostname(address.host, port: address.port), serverName: "repd-web"),
            onServerRunning: { _ in onServing() }, logger: logger)
    }
}
