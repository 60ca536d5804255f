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
    var description: String
    /// Worth retrying (the daemon may come back), as opposed to a permission problem.
    var transient: Bool
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
