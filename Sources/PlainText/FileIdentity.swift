#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file's device and inode: what tells whether a path still names the file opened or made there (the journal, the
/// socket), whatever was moved, removed or put in its place since.
public struct FileIdentity: Hashable, Sendable {
    /// The device the file is on (`st_dev`).
    public var device: UInt64
    /// Its inode (`st_ino`).
    public var inode: UInt64

    /// Creates one from its numbers.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// The file `path` names now (`followingLinks` false: the link itself, as `lstat` sees it); nil when none, with
    /// `errno` saying why.
    public init?(_ path: String, followingLinks: Bool = true) {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
