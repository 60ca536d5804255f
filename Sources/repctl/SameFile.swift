import PlainText

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whether the paths `a` and `b` name one file: the same text, or one existing file (the same device and inode: also
/// through another spelling of the path, or a link), or, when neither exists yet, the same name in the same folder
/// (`out.csv` and `./out.csv`: both would be written to one file).
func sameFile(_ a: String, _ b: String) -> Bool {
    if a == b { return true }
    let first = FileIdentity(a)
    let second = FileIdentity(b)
    if let first, let second { return first == second }
    guard first == nil, second == nil, let first = resolvedFolder(a), let second = resolvedFolder(b) else {
        return false
    }
    return first == second
}

/// `path` with its folder resolved (`realpath`: links, `.` and `..`) and its last component as given; nil when the
/// folder cannot be resolved or the path ends in a slash.
private func resolvedFolder(_ path: String) -> String? {
    let name = path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...]
    guard !name.isEmpty, let resolved = realpath(PathText.folder(of: path), nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved) + "/" + name
}

/// Why the file at `path`, given as `option`, could not be written, found before any work is done, or nil when it
/// can be: an empty path, a folder, a folder that is missing or is not one, or no permission to write there.
func unwritableFileReason(_ path: String, option: String) -> String? {
    guard !path.isEmpty else { return "\(option) must name a file (it is empty)" }
    let named = "\(option) \(path)"
    if path.hasSuffix("/") { return "\(named) ends in '/': give a file's name" }
    var info = stat()
    if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return "\(named) is a folder; give a file's name" }
    let folder = PathText.folder(of: path)
    guard stat(folder, &info) == 0 else {
        let why = errno == ENOENT ? "does not exist" : String(cString: strerror(errno))
        return "\(named) cannot be written: its folder \(folder) \(why)"
    }
    guard info.st_mode & S_IFMT == S_IFDIR else { return "\(named) cannot be written: \(folder) is not a folder" }
    if access(path, F_OK) == 0 {
        if access(path, W_OK) != 0 { return "\(named) cannot be written: \(String(cString: strerror(errno)))" }
    } else if access(folder, W_OK | X_OK) != 0 {
        return "\(named) cannot be written in \(folder): \(String(cString: strerror(errno)))"
    }
    return nil
}
