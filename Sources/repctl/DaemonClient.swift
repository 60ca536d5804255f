import RepProtocol
import Synchronization

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Set by SIGINT/SIGTERM so blocking loops can finish cleanly.
let interrupted = Atomic<Bool>(false)

/// Makes Ctrl-C (and SIGTERM) set `interrupted` instead of killing the process.
func catchInterrupts() {
    // A parent may start us with these signals blocked (some process launchers do); unblock them.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    sigprocmask(SIG_UNBLOCK, &set, nil)
    signal(SIGINT) { _ in interrupted.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in interrupted.store(true, ordering: .relaxed) }
    signal(SIGPIPE, SIG_IGN)
}

/// Why talking to the daemon failed, in words a user can act on.
struct ClientError: Error, CustomStringConvertible {
    var description: String
    /// Worth retrying (the daemon may come back), as opposed to a permission problem.
    var transient: Bool
}

/// A blocking connection to repd's socket that reads JSON lines.
final class DaemonConnection {
    let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(path: String) throws(ClientError) {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "cannot create a socket: \(String(cString: strerror(errno)))", transient: false) }
        guard let result = withUnixSocketAddress(path, { connect(fd, $0, $1) }) else {
            close(fd)
            throw ClientError(description: "socket path too long: \(path)", transient: false)
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case EACCES, EPERM:
                throw ClientError(
                    description: "permission denied on \(path): join group 'repd' (sudo usermod -aG repd $USER, then log in again)",
                    transient: false)
            case ENOENT, ECONNREFUSED:
                throw ClientError(
                    description: "no repd is listening on \(path) (start it: sudo systemctl start repd, or repd --demo; or give --socket PATH)",
                    transient: true)
            default:
                throw ClientError(description: "cannot connect to \(path): \(String(cString: strerror(code)))", transient: true)
            }
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends one command line.
    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    enum Next {
        case message(String, JSONValue)
        case timeout
        case closed
    }

    /// The next line, waiting at most `timeout` seconds (less if interrupted).
    func next(timeout: Double) -> Next {
        var waited = 0.0
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                if let value = try? JSONParser.parse(line) { return .message(line, value) }
                continue
            }
            if interrupted.load(ordering: .relaxed) || waited >= timeout { return .timeout }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let step = min(0.2, timeout - waited)
            let ready = poll(&pfd, 1, Int32(step * 1000) + 1)
            waited += step
            if ready <= 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &chunk, chunk.count)
            if n <= 0 { return .closed }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}

/// The socket path option shared by the client commands.
func socketPath(_ option: String?) -> String { option ?? DefaultSocketPath.forClient() }
