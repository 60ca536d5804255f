/// Paths as text, without touching the file system.
public enum PathText {
    /// The folder `path` is in: everything before its last '/', "/" for a file at the root, "." for a path without
    /// a folder ("events.db").
    public static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
