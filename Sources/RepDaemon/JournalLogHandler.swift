import Logging
import PlainText

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A swift-log handler that writes one line per message to stderr. Under systemd (`JOURNAL_STREAM` set) each line
/// starts with the journald priority (`<3>` error … `<7>` debug) so `journalctl -p` filters work, and the
/// timestamp is left to the journal; otherwise lines carry the level in words.
public struct JournalLogHandler: LogHandler {
    /// Messages below this level are not written.
    public var logLevel: Logger.Level
    /// Metadata added to every message (a message's own metadata wins on a clash), written as sorted `key=value`.
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let journal: Bool

    /// A handler for `label` at `level`; `journal` defaults to whether stderr goes to the journal.
    public init(label: String, level: Logger.Level, journal: Bool = getenv("JOURNAL_STREAM") != nil) {
        self.label = label
        self.logLevel = level
        self.journal = journal
    }

    /// One entry of `metadata`.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes the message and its metadata, escaped, as one line to stderr.
    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        let details =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        // Messages quote what clients, sysfs and files said: escaped, so no newline in them can start a line of
        // its own (a forged `<0>` priority) and no escape sequence reaches a terminal.
        let text = LogText.escaped("\(event.message)\(details)")
        let line: String
        if journal {
            line = "<\(Self.priority(event.level))>\(text)\n"
        } else {
            line = "repd[\(event.level)]: \(text)\n"
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
