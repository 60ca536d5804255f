#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which configuration file repd and repd-web read: `--config FILE`, else `/etc/repd/repd.toml` when it is
/// readable, else none (the built-in defaults).
public enum ConfigurationSource {
    /// The file read when `--config` is not given and it is readable.
    public static let defaultPath = "/etc/repd/repd.toml"

    /// The file to read: `explicitPath` (`--config`), else `defaultPath` if readable, else nil.
    public static func path(explicitPath: String?) -> String? {
        if let explicitPath { return explicitPath }
        return access(defaultPath, R_OK) == 0 ? defaultPath : nil
    }

    /// Why `defaultPath` was not read although it exists (this user may not read it), for a warning; nil when
    /// `--config` was given or there is nothing to say.
    public static func skippedDefault(explicitPath: String?) -> String? {
        guard explicitPath == nil, access(defaultPath, F_OK) == 0, access(defaultPath, R_OK) != 0 else { return nil }
        let reason = String(cString: strerror(errno))
        return "\(defaultPath) exists but this user cannot read it (\(reason)): the built-in "
            + "defaults are used; run as a user that may read it, or pass --config"
    }
}

extension DaemonConfiguration {
    /// The configuration from `ConfigurationSource.path(explicitPath:)`, or the defaults when there is no file.
    public static func load(explicitPath: String?) throws(ConfigError) -> DaemonConfiguration {
        guard let path = ConfigurationSource.path(explicitPath: explicitPath) else { return DaemonConfiguration() }
        return try load(path: path)
    }
}
