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
}

extension DaemonConfiguration {
    /// The configuration from `ConfigurationSource.path(explicitPath:)`, or the defaults when there is no file.
    public static func load(explicitPath: String?) throws(ConfigError) -> DaemonConfiguration {
        guard let path = ConfigurationSource.path(explicitPath: explicitPath) else { return DaemonConfiguration() }
        return try load(path: path)
    }
}
