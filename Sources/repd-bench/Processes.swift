import RepProtocol
#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A child process started with posix_spawn (no Foundation in the benchmark).
struct Child {
    let pid: pid_t

    /// Starts `path` with `arguments`; stdout and stderr go to `log` (appended).
    init?(_ path: String, _ arguments: [String], log: String) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard result == 0 else { return nil }
        self.pid = pid
    }

    func signal(_ signal: Int32) { kill(pid, signal) }

    /// Waits for exit; returns the status code.
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return (status >> 8) & 0xFF
    }

    /// Resident memory now (VmRSS), MiB.
    var residentMiB: Double? { statusField("VmRSS:") }

    private func statusField(_ name: String) -> Double? {
        guard let file = fopen("/proc/\(pid)/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, file) != nil {
            let text = String(cString: line)
            if text.hasPrefix(name) {
                let kb =
                    text.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap {
                        Double($0)
                    } ?? 0
                return kb / 1024
            }
        }
        return nil
    }
}

/// Raises this process's open-file limit to the hard limit (1000 client sockets need more than 1024 fds).
func raiseFileLimit() {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = limit.rlim_max
    setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

func sleepSeconds(_ seconds: Double) { usleep(UInt32(seconds * 1_000_000)) }

/// Runs `python3 SCRIPT ARGUMENTS…` under `umockdev-wrapper` (the emulated sensors' preload), its standard output
/// into `output`, and returns that output parsed as one JSON value; nil when the script could not start or printed no
/// JSON. The arguments reach the script as they are (never spliced into a shell line).
func umockdevScriptJSON(_ script: String, _ arguments: [String], output: String) -> JSONValue? {
    unlink(output)
    guard
        let child = Child(
            "/usr/bin/umockdev-wrapper",
            ["/bin/sh", "-c", "out=$1; shift; /usr/bin/python3 \"$@\" > \"$out\"", "sh", output, script] + arguments,
            log: "/dev/null")
    else { return nil }
    _ = child.wait()
    guard let file = fopen(output, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes += chunk[..<n]
    }
    return try? JSONParser.parse(String(decoding: bytes, as: UTF8.self))
}
