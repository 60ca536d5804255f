import LinuxIIO

#if canImport(Glibc)
    import Glibc
#endif

/// Another repd holds the journal: this one must not open it (two writers would hand out the same ids).
public struct JournalInUse: Error, Sendable, CustomStringConvertible {
    /// The journal file.
    public var path: String

    /// The message repd prints before it exits.
    public var description: String {
        "another repd is already using the journal \(path); stop it first, or give this one --journal PATH"
    }
}

/// An exclusive `flock(2)` (`LOCK_EX | LOCK_NB`) on the journal file itself, held from before the file is opened
/// until after it is closed, so a second repd never opens, writes or prunes a journal that another one uses.
///
/// `flock` locks are separate from the POSIX record locks SQLite takes on the same file (Linux keeps them apart), so
/// readers such as `repctl` or the uplink's own connection are not affected. The descriptor is closed only after
/// SQLite closed the file: closing a descriptor of a file drops the process's POSIX locks on it.
final class JournalLock: Sendable {
    private let fd: Int32

    /// Takes the lock; throws `JournalInUse` when another process holds it. A file that cannot be opened (a missing
    /// folder, no permission) is not locked: opening the journal then fails with SQLite's own reason.
    init(path: String) throws(JournalInUse) {
        let fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            self.fd = -1
            return
        }
        switch retryingInterrupts({ flock(fd, LOCK_EX | LOCK_NB) }) {
        case .success: break
        case .wouldBlock:
            Glibc.close(fd)
            throw JournalInUse(path: path)
        case .failure:
            // Another failure (a file system without flock): go on unlocked, as before locks existed.
            Glibc.close(fd)
            self.fd = -1
            return
        }
        self.fd = fd
    }

    private init(unlocked: ()) { fd = -1 }

    /// No lock: what a recorder holds while the file at its path cannot be opened.
    static var none: JournalLock { JournalLock(unlocked: ()) }

    /// Releases the lock (closes the descriptor); call once, after the journal was closed.
    func release() {
        if fd >= 0 { Glibc.close(fd) }
    }
}
