#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whether the paths `a` and `b` name one file: the same text, or one existing file (the same device and inode: also
/// through another spelling of the path, or a link), or, when neither exists yet, the same name in the same folder
/// (`out.csv` and `./out.csv`: both would be written to one file).
func sameFile(_ a: String, _ b: String) -> Bool {
    if a == b { return true }
    var first = stat()
    var second = stat()
    let firstExists = stat(a, &first) == 0
    let secondExists = stat(b, &second) == 0
    if firstExists && secondExists { return first.st_dev == second.st_dev && first.st_ino == second.st_ino }
    guard !firstExists && !secondExists, let first = resolvedFolder(a), let second = resolvedFolder(b) else {
        return false
    }
    return first == second
}

/// `path` with its folder resolved (`realpath`: links, `.` and `..`) and its last component as given; nil when the
/// folder cannot be resolved or the path ends in a slash.
private func resolvedFolder(_ path: String) -> String? {
    let folder: String
    let name: Substring
    if let slash = path.lastIndex(of: "/") {
        folder = slash == path.startIndex ? "/" : String(path[..<slash])
        name = path[path.index(after: slash)...]
    } else {
        folder = "."
        name = Substring(path)
    }
    guard !name.isEmpty, let resolved = realpath(folder, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved) + "/" + name
}
