#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the daemon's socket lives when no path is configured, and where clients look for it.
///
/// The daemon uses the first that applies:
/// 1. `$RUNTIME_DIRECTORY/events.sock` — under systemd (`RuntimeDirectory=repd` gives `/run/repd/events.sock`);
/// 2. `$XDG_RUNTIME_DIR/repd/events.sock` — started by hand in a login session;
/// 3. `$TMPDIR/repd-UID/events.sock` otherwise (`/tmp` without `TMPDIR`); the daemon accepts that folder only if
///    it is its own user's, mode 0700 (anyone can create folders in `/tmp`).
///
/// A client uses `/run/repd/events.sock` when that socket exists (the system service), and otherwise the path a
/// daemon started by the same user in the same session would use.
public enum DefaultSocketPath {
    /// Reads an environment variable.
    public typealias Environment = @Sendable (String) -> String?

    /// The process environment.
    public static let processEnvironment: Environment = { name in getenv(name).map { String(cString: $0) } }

    /// The system service's socket.
    public static let systemPath = "/run/repd/events.sock"

    /// The path the daemon binds by default.
    public static func forDaemon(environment: Environment = processEnvironment) -> String {
        if let runtime = environment("RUNTIME_DIRECTORY"), !runtime.isEmpty {
            // systemd may list several directories separated by ':'; the first is repd's.
            return String(runtime.split(separator: ":").first ?? Substring(runtime)) + "/events.sock"
        }
        return sessionPath(environment: environment)
    }

    /// The path a client connects to by default.
    public static func forClient(environment: Environment = processEnvironment) -> String {
        if access(systemPath, F_OK) == 0 { return systemPath }
        return forDaemon(environment: environment)
    }

    /// The last-resort folder, `$TMPDIR/repd-UID` (`/tmp/repd-UID`), which must be private to its user.
    public static func privateFolder(environment: Environment = processEnvironment) -> String {
        var base = environment("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        return base + "/repd-\(getuid())"
    }

    private static func sessionPath(environment: Environment) -> String {
        if let xdg = environment("XDG_RUNTIME_DIR"), !xdg.isEmpty { return xdg + "/repd/events.sock" }
        return privateFolder(environment: environment) + "/events.sock"
    }
}
