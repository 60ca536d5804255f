import LinuxIIO
import RepProtocol

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// Many Unix-socket clients read with one poll() loop; each line handed to a callback with its arrival time.
final class ClientSwarm {
    private(set) var fds: [Int32] = []
    private var buffers: [[UInt8]] = []

    /// Connects a client; returns its index or nil.
    @discardableResult
    func connect(path: String, receiveBuffer: Int32? = nil, send: String? = nil) -> Int? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        guard withUnixSocketAddress(path, { Glibc.connect(fd, $0, $1) }) == 0 else {
            close(fd)
            return nil
        }
        if let send {
            let bytes = Array((send + "\n").utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        fds.append(fd)
        buffers.append([])
        return fds.count - 1
    }

    /// Reads for `seconds` from the clients in `indices`, calling `handle(index, line, arrival wall time)`.
    func pump(seconds: Double, indices: Range<Int>? = nil, _ handle: (Int, Substring, Double) -> Void) {
        let range = indices ?? 0..<fds.count
        var pollfds = range.map { pollfd(fd: fds[$0], events: Int16(POLLIN), revents: 0) }
        let end = monotonicNow() + seconds
        var chunk = [UInt8](repeating: 0, count: 65536)
        while monotonicNow() < end {
            for i in pollfds.indices { pollfds[i].revents = 0 }
            let ready = poll(&pollfds, nfds_t(pollfds.count), 50)
            if ready <= 0 { continue }
            let arrival = wallClock()
            for (slot, index) in range.enumerated() where pollfds[slot].revents != 0 {
                let n = read(fds[index], &chunk, chunk.count)
                if n <= 0 {
                    pollfds[slot].fd = -1
                    continue
                }
                buffers[index].append(contentsOf: chunk[..<n])
                while let newline = buffers[index].firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffers[index][..<newline], as: UTF8.self)
                    buffers[index].removeSubrange(...newline)
                    handle(index, Substring(line), arrival)
                }
            }
        }
    }

    func closeAll() {
        fds.forEach { close($0) }
        fds.removeAll()
        buffers.removeAll()
    }
}
