import Foundation

/// The folders and files tests write, all under one folder per test process (`/tmp/repd-tests-PID`), which is
/// removed when the process exits: a test run leaves nothing behind in /tmp. With `REPD_KEEP_TEST_FILES=1` in the
/// environment the folder is kept, and its path is printed as the process exits, to look at what a test wrote.
///
/// The root is short and under /tmp (not `$TMPDIR`) because tests put Unix sockets in it: a socket's path must fit
/// in 108 bytes.
public enum Scratch {
    /// This process's folder, made on first use.
    public static let root: String = {
        let path = "/tmp/repd-tests-\(getpid())"
        // A folder left by an earlier process with the same pid (killed before it could remove it).
        try? FileManager.default.removeItem(atPath: path)
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { Scratch.removeRoot() }
        return path
    }()

    /// A fresh, empty folder under the root: `prefix` and eight random hexadecimal digits.
    public static func directory(_ prefix: String) -> String {
        let path = file(prefix)
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A path under the root that nothing uses yet: `prefix`, eight random hexadecimal digits and `suffix`.
    public static func file(_ prefix: String, suffix: String = "") -> String {
        root + "/" + prefix + "-" + String(UUID().uuidString.prefix(8)) + suffix
    }

    private static func removeRoot() {
        if let keep = getenv("REPD_KEEP_TEST_FILES"), keep.pointee != 0 {
            FileHandle.standardError.write(Data("test files kept in \(root)\n".utf8))
            return
        }
        try? FileManager.default.removeItem(atPath: root)
    }
}
