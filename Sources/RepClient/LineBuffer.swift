/// Bytes read from repd's socket, cut into lines: append what a read brought, then take the whole lines; a partial
/// line waits for the rest.
public struct LineBuffer: Sendable {
    private var bytes: [UInt8] = []
    private var start = 0

    /// An empty buffer.
    public init() {}

    /// Bytes of the partial line waiting for its newline.
    public var pendingCount: Int { bytes.count - start }

    /// Appends what a read brought.
    public mutating func append(_ chunk: some Collection<UInt8>) {
        if start > 0, start >= bytes.count / 2 {
            bytes.removeSubrange(..<start)
            start = 0
        }
        bytes.append(contentsOf: chunk)
    }

    /// The next whole line, without its newline; nil until one has come.
    public mutating func nextLine() -> ArraySlice<UInt8>? {
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = bytes[start..<newline]
        start = newline + 1
        return line
    }
}
