import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// What a system call that reports failure as -1 and `errno` came to, once `EINTR` was retried.
public enum SystemCallResult<Value: Sendable>: Sendable {
    /// It succeeded with this result (0 or more: bytes, ready descriptors, ...).
    case success(Value)
    /// `EAGAIN` / `EWOULDBLOCK`: nothing to do now on a non-blocking descriptor; a value, not an error.
    case wouldBlock
    /// Any other error (`Errno` names the C constant).
    case failure(Errno)
}

/// Runs `call`, a system call that returns -1 and sets `errno` on failure, again for as long as it fails with
/// `EINTR` (a signal arrived): the one place repd retries `EINTR`. Never pass `close`: it must not be retried.
/// Allocates nothing, so the IIO reader's loop may use it.
@inline(__always)
public func retryingInterrupts<Value: FixedWidthInteger & Sendable>(_ call: () -> Value) -> SystemCallResult<Value> {
    while true {
        let result = call()
        if result >= 0 { return .success(result) }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return .wouldBlock }
        return .failure(Errno(rawValue: code))
    }
}
