import RepProtocol
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Why connecting to repd's socket, or sending to it, failed: the operation, the socket's path and the C error.
public struct RepConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was being done.
    public enum Operation: String, Sendable, Equatable {
        /// `socket(2)`.
        case socket
        /// `connect(2)`; a nil `errno` means the path does not fit in `sun_path`.
        case connect
        /// `send(2)`.
        case send
    }

    /// What was being done.
    public var operation: Operation
    /// The socket's path.
    public var path: String
    /// The C error (`Errno` names the constant); nil when the path is too long for a Unix socket.
    public var errno: Errno?

    /// Creates the error.
    public init(_ operation: Operation, path: String, errno: Errno?) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    /// The failure in words: the operation, the path and the C error's text.
    public var description: String {
        guard let errno else { return "socket path too long: \(path)" }
        switch operation {
        case .socket: return "cannot create a socket: \(errno)"
        case .connect: return "cannot connect to \(path): \(errno)"
        case .send: return "cannot send to \(path): \(errno)"
        }
    }
}

/// A blocking client of repd's socket: connect, send commands, read typed lines with a deadline. For one client in a
/// command-line tool, a benchmark or a test; repd-web reads through NIO and uses `ServerLine.parse` alone.
///
/// Signals: reads retry `EINTR` (swift-system's `FileDescriptor.read`); `send` uses `MSG_NOSIGNAL`, so a closed
/// socket is an error, not a `SIGPIPE`.
public final class RepConnection {
    /// What `next(timeout:)` found.
    public enum Received: Sendable, Equatable {
        /// A line and what it says.
        case message(ServerLine, text: String)
        /// A line that could not be read (what and where), with its text.
        case malformed(ServerLineError, text: String)
        /// Nothing whole came before the deadline.
        case timeout
        /// repd closed the connection (or reading it failed).
        case closed
    }

    /// The socket's path.
    public let path: String
    /// The connected socket (for `poll` over many connections; `receive()` reads it).
    public let fileDescriptor: FileDescriptor
    private var buffer = LineBuffer()
    private var chunk = [UInt8](repeating: 0, count: 65536)

    /// Connects to the socket at `path`; `receiveBuffer` sets `SO_RCVBUF` first (a client that reads slowly).
    public init(path: String, receiveBuffer: Int32? = nil) throws(RepConnectionError) {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RepConnectionError(.socket, path: path, errno: Errno(rawValue: errno)) }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // connect(2) is not restarted after a signal: EINTR leaves it connecting, so it is reported, not retried.
        guard let result = withUnixSocketAddress(path, { connect(fd, $0, $1) }) else {
            close(fd)
            throw RepConnectionError(.connect, path: path, errno: nil)
        }
        guard result == 0 else {
            let code = Errno(rawValue: errno)
            close(fd)
            throw RepConnectionError(.connect, path: path, errno: code)
        }
        fileDescriptor = FileDescriptor(rawValue: fd)
    }

    deinit { try? fileDescriptor.close() }

    /// Sends a command as its words form, one line.
    public func send(_ command: ClientCommand) throws(RepConnectionError) { try send(raw: command.line + "\n") }

    /// Sends `text` as it is, newline or not (tests send lines repd must refuse).
    public func send(raw text: String) throws(RepConnectionError) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes {
                Glibc.send(fileDescriptor.rawValue, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { throw RepConnectionError(.send, path: path, errno: Errno(rawValue: errno)) }
            sent += n
        }
    }

    /// The next line, waiting at most `timeout`; lines already received come first.
    public func next(timeout: Duration) -> Received {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let received = nextBuffered() { return received }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return .timeout }
            var pfd = pollfd(fd: fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
            let milliseconds = left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1
            // A signal (EINTR) or a timeout: look at the deadline again.
            guard poll(&pfd, 1, Int32(clamping: milliseconds)) > 0 else { continue }
            guard receive() else { return .closed }
        }
    }

    /// Reads once what the socket has (blocks when it has nothing: call it when `poll` says it is readable);
    /// false when repd closed the connection or the read failed.
    public func receive() -> Bool {
        let count = chunk.withUnsafeMutableBytes { try? fileDescriptor.read(into: $0) }
        guard let count, count > 0 else { return false }
        buffer.append(chunk[..<count])
        return true
    }

    /// The next whole line already received, read; nil when none is waiting.
    public func nextBuffered() -> Received? {
        guard let bytes = buffer.nextLine() else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        do { return .message(try ServerLine.parse(bytes), text: text) } catch { return .malformed(error, text: text) }
    }

    /// Bytes of a partial line waiting for its newline.
    public var pendingBytes: Int { buffer.pendingCount }
}
