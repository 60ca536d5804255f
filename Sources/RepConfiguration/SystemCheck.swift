import PlainText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension DaemonConfiguration {
    /// The longest path a Unix socket can be bound to: `sun_path` less its terminating NUL (107 bytes on Linux).
    public static let longestSocketPath = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Checks what the configuration names on this system, which parsing alone cannot see (the file may be meant for
    /// another machine: `repctl eval --config` reads a board's file anywhere, and does not call this): that
    /// `socket.group` exists; that `socket.path` fits a Unix socket address, has a folder repd can make (the one
    /// above it exists) and names no file but a socket; that an explicit `journal.path` is no folder and its folder
    /// exists; that the fixture to replay is named and can be read (and, with `fixtureProblem`, replayed: it returns
    /// why not); and that an enabled uplink has a journal to publish after the flags changed `journal.path`. repd
    /// runs it before it starts anything, and `--check-config` too, so that both say the same. `file` is the file the
    /// configuration came from (nil: the defaults); `flags` names the keys the command line set, with the flag that
    /// set them (`["socket.path": "--socket"]`). A problem is a `ConfigError` naming the file and line, or the flag.
    public func checkAgainstSystem(
        file: String?, flags: [String: String] = [:], fixtureProblem: ((String) -> String?)? = nil
    ) throws(ConfigError) {
        func error(_ key: String, _ reason: String) -> ConfigError {
            if let flag = flags[key] { return ConfigError(file: "command line", line: 0, key: flag, reason: reason) }
            let place = file ?? "defaults"
            let line = file.map { Self.line(of: key, inFile: $0) } ?? 0
            return ConfigError(file: place, line: line, key: key, reason: reason)
        }
        if !socket.group.isEmpty, getgrnam(socket.group) == nil {
            throw error(
                "socket.group",
                "no group '\(socket.group)' on this system (create it, e.g. with systemd-sysusers, or set \"\" "
                    + "for repd's own)")
        }
        if let problem = Self.socketPathProblem(socket.path) { throw error("socket.path", problem) }
        if !journal.path.isEmpty, journal.path != "auto", let problem = Self.journalPathProblem(journal.path) {
            throw error("journal.path", problem)
        }
        if provider == .fixture, fixturePath.isEmpty {
            // `--fixture ''` is the flag's fault, not the file's.
            throw error(
                flags["fixture.path"] != nil ? "fixture.path" : "sensor.provider",
                "\"fixture\" replays a recording: set [fixture] path, or pass --fixture FILE.csv")
        }
        if uplink.enabled, journal.path.isEmpty {
            throw error(
                "journal.path",
                "the uplink is enabled (uplink.enabled) and publishes the journal's events: the journal must not be off"
            )
        }
        if provider == .fixture, !fixturePath.isEmpty {
            var info = stat()
            guard stat(fixturePath, &info) == 0 else {
                throw error("fixture.path", "cannot read '\(fixturePath)': \(String(cString: strerror(errno)))")
            }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw error(
                    "fixture.path",
                    "'\(fixturePath)' is \(Self.kind(of: info.st_mode)), not a regular file (a recording: CSV t,ax,ay,az)"
                )
            }
            guard access(fixturePath, R_OK) == 0 else {
                throw error("fixture.path", "cannot read '\(fixturePath)': \(String(cString: strerror(errno)))")
            }
            if let reason = fixtureProblem?(fixturePath) { throw error("fixture.path", "cannot replay it: \(reason)") }
        }
    }

    /// Why the socket cannot be made at `path` (nil when it can): too long for a Unix socket's address, under a file,
    /// two missing folders (repd makes only its own), or a file there that is not a socket.
    static func socketPathProblem(_ path: String) -> String? {
        let bytes = path.utf8.count
        if bytes > longestSocketPath {
            return "\(bytes) bytes; a Unix socket's path holds at most \(longestSocketPath): choose a shorter one"
        }
        if let (folder, mode) = nearestExisting(folderOf: path) {
            guard mode & S_IFMT == S_IFDIR else {
                return "'\(folder)' is \(kind(of: mode)), not a folder: the socket cannot be made under it"
            }
            if let own = Self.folder(of: path), folder != own, Self.folder(of: own) != folder {
                return "'\(own)' does not exist, nor the folder above it: repd makes only the socket's own folder; "
                    + "create the folders above it, or choose another path"
            }
        }
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFSOCK {
            return "'\(path)' exists and is \(kind(of: info.st_mode)), not a socket: repd removes only a stale socket "
                + "there; choose another path, or remove it"
        }
        return nil
    }

    /// Why the journal cannot be at `path`, an explicit one (nil when it can): a folder, under a file, or in a folder
    /// that does not exist (repd does not make it).
    static func journalPathProblem(_ path: String) -> String? {
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            return "'\(path)' is a folder: name the journal's file in it"
        }
        guard let own = folder(of: path) else { return nil }
        if let (folder, mode) = nearestExisting(folderOf: path), mode & S_IFMT != S_IFDIR {
            return "'\(folder)' is \(kind(of: mode)), not a folder: the journal cannot be made under it"
        }
        if stat(own, &info) != 0, errno == ENOENT {
            return "its folder '\(own)' does not exist (repd does not make it): create it, or choose another path"
        }
        return nil
    }

    /// The folder `path` is in ("/" for a file at the root), nil for a path without a folder.
    static func folder(of path: String) -> String? {
        path.contains("/") ? PathText.folder(of: path) : nil
    }

    /// The deepest of the folders above `path` that exists, and its mode (nil for a path without a folder, or when
    /// none can be looked at).
    static func nearestExisting(folderOf path: String) -> (String, mode_t)? {
        var folder = Substring(path)
        while let slash = folder.lastIndex(of: "/") {
            folder = folder[..<slash]
            let name = folder.isEmpty ? "/" : String(folder)
            var info = stat()
            if stat(name, &info) == 0 { return (name, info.st_mode) }
            // ENOTDIR: a file stands above; it is found on the way up.
            guard errno == ENOENT || errno == ENOTDIR else { return nil }
        }
        return nil
    }

    /// What a file of mode `mode` is, in words ("a regular file", "a directory", …).
    public static func kind(of mode: mode_t) -> String { TextFile.kind(of: mode) }

    /// The line of `key` ("section.key") in the TOML file at `path`; 0 when it is not there or the file cannot be
    /// read (the error then names the file only).
    public static func line(of key: String, inFile path: String) -> Int {
        guard let dot = key.firstIndex(of: "."), let bytes = try? TextFile.readBytes(path),
            let text = String(validating: bytes, as: UTF8.self), let document = try? TOMLDocument.parse(text)
        else { return 0 }
        let table = document.tables[String(key[..<dot])]
        return table?.entries[String(key[key.index(after: dot)...])]?.line ?? table?.line ?? 0
    }
}
