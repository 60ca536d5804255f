import Foundation

/// The folders and files tests write, all under one fresh folder per test process (`/tmp/repd-tests-XXXXXX`, made by
/// mkdtemp), which is removed when the process exits normally: a test run leaves nothing of its own behind in /tmp
/// (umockdev and the kernel harness remove their own folders). With `REPD_KEEP_TEST_FILES=1` in the environment the
/// folder is kept, and its path is printed as the process exits, to look at what a test wrote.
///
/// The root is short and under /tmp (not `$TMPDIR`) because tests put Unix sockets in it: a socket's path must fit
/// in 108 bytes.
public enum Scratch {
    /// This process's folder, made on first use: readable and searchable by everyone (0755), as a folder straight in
    /// /tmp would be under the usual umask, for the tests that run a program as another user.
    public static let root: String = {
        var template = Array("/tmp/repd-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        guard let path = made else { fatalError("cannot make a scratch folder under /tmp: errno \(errno)") }
        chmod(path, 0o755)
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
        if let keep = getenv("REPD_KEEP_TEST_FILES"), String(cString: keep) == "1" {
            FileHandle.standardError.write(Data("test files kept in \(root)\n".utf8))
            return
        }
        try? FileManager.default.removeItem(atPath: root)
    }
}
