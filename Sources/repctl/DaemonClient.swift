import ArgumentParser
import RepClient
import RepProtocol
import SystemPackage
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Set by SIGINT, SIGTERM or SIGHUP so blocking loops can finish cleanly (and put a sensor back as they found it).
let interrupted = Atomic<Bool>(false)

/// Makes Ctrl-C, SIGTERM and SIGHUP (the terminal closed) set `interrupted` instead of killing the process. A SIGHUP
/// that `nohup` (or a parent) set to be ignored stays ignored.
func catchInterrupts() {
    var hangup = sigaction()
    let hangupIgnored =
        sigaction(SIGHUP, nil, &hangup) == 0
        && unsafeBitCast(hangup.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    // A parent may start us with these signals blocked (some process launchers do); unblock them.
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    if !hangupIgnored { sigaddset(&set, SIGHUP) }
    sigprocmask(SIG_UNBLOCK, &set, nil)
    signal(SIGINT) { _ in interrupted.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in interrupted.store(true, ordering: .relaxed) }
    if !hangupIgnored { signal(SIGHUP) { _ in interrupted.store(true, ordering: .relaxed) } }
    signal(SIGPIPE, SIG_IGN)
}

/// Why talking to the daemon failed, in words a user can act on.
struct ClientError: Error, CustomStringConvertible {
    /// What went wrong, for a caller that handles some failures its own way (`repctl subscribe` retries some).
    enum Kind {
        /// connect(2) failed.
        case connect
        /// repd answered the connection with an `error` before its `hello` (too many clients, a uid not allowed).
        case refused
        /// The peer closed the connection before any `hello`.
        case closed
        /// No `hello` within `helloTimeout`, or lines that are not repd's before it: not repd's socket, or a repd
        /// that does not answer.
        case noHello
        /// A `hello` of another protocol version, or one that cannot be read; or a refusal that stays (permission
        /// denied): not worth retrying.
        case incompatible
    }

    var description: String
    /// Worth retrying (the daemon may come back), as opposed to a permission problem.
    var transient: Bool
    var kind = Kind.connect
}

/// How long a client waits for repd's `hello` after connecting, in seconds (repd sends it at once).
let helloTimeout = 10.0

/// What `--help` of the commands that talk to repd says about its `hello` and the socket's path.
let connectingHelp = """
    On connecting it waits up to 10 s for repd's hello: when none comes (or lines that are not repd's come \
    instead), it says "no hello from PATH …: is it repd's socket?" and exits 1; a hello of another protocol \
    version than 1 exits 1 too. A --socket path that is a regular file, a folder or a FIFO is named as such.
    """

/// What is at `path` when it is there but not a socket ("a regular file", "a folder"…); nil for a socket, or when
/// nothing is there.
func nonSocketKind(at path: String) -> String? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    switch info.st_mode & S_IFMT {
    case S_IFSOCK: return nil
    case S_IFREG: return "a regular file"
    case S_IFDIR: return "a folder"
    case S_IFIFO: return "a FIFO (named pipe)"
    case S_IFCHR: return "a character device"
    case S_IFBLK: return "a block device"
    default: return "not a socket"
    }
}

/// Connects to repd's socket at `path`, with the failure in words a user can act on.
func connectToDaemon(path: String) throws(ClientError) -> RepConnection {
    do { return try RepConnection(path: path) } catch {
        switch error.errno {
        case .permissionDenied?, .notPermitted?:
            throw ClientError(
                description:
                    "permission denied on \(path): join group 'repd' (sudo usermod -aG repd $USER, then log in again)",
                transient: false)
        case .connectionRefused? where nonSocketKind(at: path) != nil:
            // A file, a FIFO or a folder refuses connections as a stale socket does: say what is there instead.
            throw ClientError(
                description: "\(path) is \(nonSocketKind(at: path)!), not repd's socket",
                transient: false)
        case .noSuchFileOrDirectory?, .connectionRefused?:
            throw ClientError(
                description:
                    "no repd is listening on \(path) (start it: sudo systemctl start repd, or repd --demo; or give --socket PATH)",
                transient: true)
        default:
            throw ClientError(
                description: error.description, transient: error.errno != nil && error.operation != .socket)
        }
    }
}

/// Waits at most `timeout` seconds for repd's `hello`, the first line it sends on a connection, and checks its
/// protocol version; nil when interrupted (Ctrl-C) meanwhile. Anything else first (silence, a line that is not
/// repd's, a partial line longer than any `hello`) means the socket is not repd's, or repd does not answer.
func awaitHello(_ connection: RepConnection, timeout: Double = helloTimeout) throws(ClientError) -> (
    hello: ServerLine.Hello, text: String
)? {
    let path = connection.path
    let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
    func notRepd(_ why: String) -> ClientError {
        ClientError(description: "no hello from \(path) \(why): is it repd's socket?", transient: true, kind: .noHello)
    }
    while true {
        if interrupted.load(ordering: .relaxed) { return nil }
        let left = deadline - ContinuousClock.now
        guard left > .zero else { throw notRepd("within \(format(timeout, decimals: 0)) s") }
        switch connection.next(timeout: min(left, .milliseconds(200))) {
        case .message(.hello(let hello), let text):
            guard hello.protocolVersion == ServerMessage.protocolVersion else {
                throw incompatible(path, version: String(hello.protocolVersion))
            }
            return (hello, text)
        case .message(.error(let message), _):
            // "permission denied" (socket.allowed_uids) stays so: only a full house frees up.
            let permanent = message.hasPrefix("permission denied")
            throw ClientError(
                description: "repd answered: \(message)", transient: !permanent,
                kind: permanent ? .incompatible : .refused)
        case .message(let message, _):
            throw notRepd("(its first line is a '\(message.type)' line, not a hello)")
        case .malformed(let error, let text):
            // A hello of another protocol version may lack what protocol 1's has: its version is what to say.
            if let line = try? JSONParser.parse(text), line["type"]?.stringValue == "hello" {
                if let version = line["protocol"]?.double, version != Double(ServerMessage.protocolVersion) {
                    throw incompatible(path, version: Int(exactly: version).map(String.init) ?? "\(version)")
                }
                throw ClientError(
                    description: "\(path)'s hello cannot be read: \(error)", transient: false, kind: .incompatible)
            }
            throw notRepd("(its first line is not a repd message: \(error))")
        case .timeout:
            // A hello is a few hundred bytes: a longer partial line is something else.
            if connection.pendingBytes > 65536 {
                throw notRepd("(it sent \(connection.pendingBytes) bytes without a line end)")
            }
        case .closed:
            throw ClientError(
                description: "\(path) closed the connection before repd's hello", transient: true, kind: .closed)
        }
    }
}

private func incompatible(_ path: String, version: String) -> ClientError {
    ClientError(
        description: "\(path) speaks protocol \(version); this repctl speaks \(ServerMessage.protocolVersion)",
        transient: false, kind: .incompatible)
}

/// Connects to repd's socket at `path` and waits for its `hello` (`awaitHello`), for a command that asks one
/// thing: a failure is said on stderr and exits 1 (130 when interrupted meanwhile).
func openDaemonSession(path: String) throws -> RepConnection {
    do {
        let connection = try connectToDaemon(path: path)
        guard try awaitHello(connection) != nil else { throw ExitCode(130) }
        return connection
    } catch let error as ClientError {
        printError("repctl: \(error)")
        throw ExitCode(1)
    }
}

extension RepConnection {
    /// What `next(timeout:)` gave, for a command-line client: lines that cannot be read are skipped.
    enum Next {
        case message(ServerLine, text: String)
        case timeout
        case closed
    }

    /// The next line repd sent, waiting at most `timeout` seconds (less if interrupted: Ctrl-C is looked at every
    /// 0.2 s).
    func next(timeout: Double) -> Next {
        var waited = 0.0
        while true {
            if interrupted.load(ordering: .relaxed) || waited >= timeout { return .timeout }
            let step = min(0.2, timeout - waited)
            switch next(timeout: .milliseconds(Int64(step * 1000) + 1)) {
            case .message(let message, let text): return .message(message, text: text)
            case .malformed: continue
            case .closed: return .closed
            case .timeout: waited += step
            }
        }
    }

    /// Sends a command; a failure shows as the connection closing on the next read.
    func sendCommand(_ command: ClientCommand) { try? send(command) }
}

/// The socket path option shared by the client commands.
func socketPath(_ option: String?) -> String { option ?? DefaultSocketPath.forClient() }
