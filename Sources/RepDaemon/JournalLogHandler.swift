import Logging

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A swift-log handler that writes one line per message to stderr. Under systemd (`JOURNAL_STREAM` set) each line
/// starts with the journald priority (`<3>` error … `<7>` debug) so `journalctl -p` filters work, and the
/// timestamp is left to the journal; otherwise lines carry the level in words.
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let journal: Bool

    /// A handler for `label` at `level`; `journal` defaults to whether stderr goes to the journal.
    public init(label: String, level: Logger.Level, journal: Bool = getenv("JOURNAL_STREAM") != nil) {
        self.label = label
        self.logLevel = level
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let details = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line: String
        if journal {
            line = "<\(Self.priority(event.level))>\(event.message)\(details)\n"
        } else {
            line = "repd[\(event.level)]: \(event.message)\(details)\n"
        }
        fputs(line, stderr)
    }

    /// syslog priorities as journald reads them.
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
