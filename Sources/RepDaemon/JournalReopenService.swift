import Logging
import NIOPosix
import RepJournal
import RepProtocol
import RepSettings
import ServiceLifecycle

/// Opens the configured journal again when it could not be opened at start (a full disk, a folder not mounted yet,
/// a damaged file), after pauses of 1 s doubling up to a minute, and once it opens hands it to the hub and the
/// uplink: events from then on are journaled and go out with ids, with no restart. Counting never waits for it.
final class JournalReopenService: Service {
    /// The first pause before trying again; each failure doubles it, up to `longestPause`.
    static let firstPause = Duration.seconds(1)
    /// The longest pause between tries.
    static let longestPause = Duration.seconds(60)

    private let settings: JournalSettings
    private let path: String
    private let hub: EventHub
    private let uplink: UplinkService?
    private let logger: Logger
    /// The reason the open at start failed: a try that fails the same way is not logged again.
    private let firstFailure: String

    init(
        settings: JournalSettings, path: String, firstFailure: String, hub: EventHub, uplink: UplinkService?,
        logger: Logger
    ) {
        self.settings = settings
        self.path = path
        self.firstFailure = firstFailure
        self.hub = hub
        self.uplink = uplink
        self.logger = logger
    }

    func run() async throws {
        var pause = Self.firstPause
        var logged = firstFailure
        var tries = 0
        while true {
            let wait = pause
            do { try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) } } catch { return }
            tries += 1
            let (settings, path, logger) = (settings, path, logger)
            let tried = try? await NIOThreadPool.singleton.runIfActive {
                Self.open(settings, path: path, logger: logger)
            }
            guard let outcome = tried else { return }  // the thread pool is shutting down
            switch outcome {
            case .success(let recorder):
                hub.attachJournal(recorder)
                // Not while repd stops: the uplink would start only to be stopped (its grace added to the stop).
                if !Task.isShuttingDownGracefully { uplink?.journalOpened() }
                logger.notice(
                    "journal: \(path) opened after \(tries) \(tries == 1 ? "try" : "tries"); events are journaled, with ids, from here on"
                )
                return
            case .failure(let failure):
                let status = failure.status(path: path)
                hub.journalStillFails(status)
                let reason = status.error ?? ""
                if reason != logged {
                    logger.error("journal: still cannot open \(path): \(failure.message)")
                    logged = reason
                }
            }
            pause = min(pause * 2, Self.longestPause)
        }
    }

    /// Takes the journal's lock and opens it (blocking: on a thread pool's thread).
    private static func open(_ settings: JournalSettings, path: String, logger: Logger) -> Result<
        EventRecorder, OpenFailure
    > {
        let fileLock: JournalLock
        do throws(JournalInUse) { fileLock = try JournalLock(path: path) } catch { return .failure(.inUse(error)) }
        do throws(JournalError) {
            return .success(try EventRecorder.open(settings, path: path, fileLock: fileLock, logger: logger))
        } catch { return .failure(.journal(error)) }
    }

    /// Why the journal could not be opened.
    enum OpenFailure: Error, Sendable {
        case journal(JournalError)
        case inUse(JournalInUse)

        var message: String {
            switch self {
            case .journal(let error): error.message
            case .inUse(let error): error.description
            }
        }

        /// What `status` says about the journal while it cannot be opened.
        func status(path: String) -> ServerMessage.JournalStatus {
            let reason =
                switch self {
                case .journal(let error):
                    "cannot open: \(error.message) (SQLite code \(error.code)); "
                        + (EventJournal.fullFileSystem(path) != nil
                            ? "repd opens it once there is space" : "repd opens it once that is fixed")
                        + " (it tries again every minute)"
                case .inUse(let error): "cannot open: \(error.description); repd tries again every minute"
                }
            return ServerMessage.JournalStatus(path: path, newestID: 0, writing: false, error: reason)
        }
    }
}
