#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Whether the paths `a` and `b` name one file: the same text, or one existing file (the same device and inode: also
/// through another spelling of the path, or a link).
func sameFile(_ a: String, _ b: String) -> Bool {
    if a == b { return true }
    var first = stat()
    var second = stat()
    guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino
}
