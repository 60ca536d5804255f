import LinuxIIO
import RepClient
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Many clients of repd's socket read with one poll() loop; each line handed to a callback, read, with its arrival
/// time.
final class ClientSwarm {
    private(set) var connections: [RepConnection] = []

    /// Connects a client and sends `send` (a command line) if given; returns its index or nil.
    @discardableResult
    func connect(path: String, receiveBuffer: Int32? = nil, send: ClientCommand? = nil) -> Int? {
        guard let connection = try? RepConnection(path: path, receiveBuffer: receiveBuffer) else { return nil }
        if let send { try? connection.send(send) }
        connections.append(connection)
        return connections.count - 1
    }

    /// Reads for `seconds` from the clients in `indices`, calling `handle(index, message, arrival wall time)` for
    /// every line that reads (others are skipped).
    func pump(seconds: Double, indices: Range<Int>? = nil, _ handle: (Int, ServerLine, Double) -> Void) {
        let range = indices ?? 0..<connections.count
        var pollfds = range.map {
            pollfd(fd: connections[$0].fileDescriptor.rawValue, events: Int16(POLLIN), revents: 0)
        }
        let end = monotonicNow() + seconds
        while monotonicNow() < end {
            for i in pollfds.indices { pollfds[i].revents = 0 }
            let ready = poll(&pollfds, nfds_t(pollfds.count), 50)
            if ready <= 0 { continue }
            let arrival = wallClock()
            for (slot, index) in range.enumerated() where pollfds[slot].revents != 0 {
                guard connections[index].receive() else {
                    pollfds[slot].fd = -1
                    continue
                }
                while let received = connections[index].nextBuffered() {
                    if case .message(let message, _) = received { handle(index, message, arrival) }
                }
            }
        }
    }

    func closeAll() { connections.removeAll() }
}
