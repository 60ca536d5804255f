#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Calls `body` with the `sockaddr_un` (`AF_UNIX`) for the socket at `path` and the length to pass with it, for
/// `bind`, `connect` and `sendto`. A leading `@` names the abstract namespace (as systemd's `NOTIFY_SOCKET` does),
/// whose length must be exact. Returns nil, without calling `body`, when the path does not fit in `sun_path`.
public func withUnixSocketAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var bytes = Array(path.utf8)
    let abstract = bytes.first == UInt8(ascii: "@")
    if abstract { bytes[0] = 0 }
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let length =
        abstract ? socklen_t(MemoryLayout<sa_family_t>.size + bytes.count) : socklen_t(MemoryLayout<sockaddr_un>.size)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
    }
}
