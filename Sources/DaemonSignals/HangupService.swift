import Logging
import ServiceLifecycle
import UnixSignals

/// Takes SIGHUP, which administrators send to daemons to make them reload, and which a closed terminal sends too.
/// repd and repd-web read their configuration only at start, so each SIGHUP is logged with how to apply a change,
/// and the program goes on. Without it, SIGHUP's default action ended the program at once: no `set_end` for the open
/// set, no `bye` to clients, the socket file left behind, and systemd counted it a clean exit, so
/// `Restart=on-failure` did not start it again.
public struct HangupService: Service {
    let program: String
    let logger: Logger

    /// A service for `program` ("repd", "repd-web": the name the log line gives) that logs to `logger`.
    public init(program: String, logger: Logger) {
        self.program = program
        self.logger = logger
    }

    /// Traps SIGHUP until the service group shuts down.
    public func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        for await _ in hangups.cancelOnGracefulShutdown() {
            logger.notice(
                "SIGHUP: \(program) reads its configuration only when it starts; to apply a change, restart it (systemctl restart \(program)); going on"
            )
        }
    }
}
