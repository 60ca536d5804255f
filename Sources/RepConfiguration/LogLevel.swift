/// How much repd and repd-web log: `log.level` in the file, `--log-level` on the command line (which wins). The
/// names are swift-log's `Logger.Level` names, so each binary maps a `LogLevel` to its logger by `rawValue`.
public enum LogLevel: String, Sendable, Equatable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical

    /// "trace, debug, info, notice, warning, error, critical": what `log.level` and `--log-level` allow.
    public static let allowedNames = allCases.map(\.rawValue).joined(separator: ", ")

    /// Why `--log-level <name>` is refused (nil when `name` is a level).
    public static func commandLineProblem(_ name: String) -> String? {
        LogLevel(rawValue: name) == nil ? "--log-level must be one of \(allowedNames)." : nil
    }

    /// The level to log at: the command line's `flag` (already checked) when given, else the configuration's.
    public static func effective(flag: String?, configured: LogLevel) -> LogLevel {
        flag.flatMap(LogLevel.init(rawValue:)) ?? configured
    }
}
