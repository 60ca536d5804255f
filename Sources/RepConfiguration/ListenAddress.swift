/// A TCP address to listen on, `host:port`: an IPv4 address, a host name, or an IPv6 address in brackets
/// (`[::1]:8080`).
public struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host (IPv6 without its brackets).
    public var host: String
    /// The port, 1…65535.
    public var port: Int

    /// Creates the address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Why a `host:port` text is not an address to listen on.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong and what is allowed.
        public var reason: String
        /// The reason alone.
        public var description: String { reason }
    }

    /// Parses `host:port` (`127.0.0.1:8080`, `0.0.0.0:80`, `localhost:8080`, `[::]:8080`).
    public init(parsing text: String) throws(ParseError) {
        let example = "expected host:port such as \"127.0.0.1:8080\", \"0.0.0.0:8080\" or \"[::1]:8080\""
        guard let colon = text.lastIndex(of: ":") else {
            // "8080" alone: a port without its host.
            let what = !text.isEmpty && text.allSatisfy(\.isNumber) ? "has no host" : "has no port"
            throw ParseError(reason: "'\(text)' \(what): \(example)")
        }
        var host = Substring(text[..<colon])
        let portText = text[text.index(after: colon)...]
        if host.hasPrefix("[") {
            guard host.hasSuffix("]"), host.count > 2 else { throw ParseError(reason: "'\(text)': \(example)") }
            host = host.dropFirst().dropLast()
        } else if host.contains(":") {
            throw ParseError(reason: "'\(text)': an IPv6 address goes in brackets, as in \"[::1]:8080\"")
        }
        guard !host.isEmpty else { throw ParseError(reason: "'\(text)' has no host: \(example)") }
        let allowed = host.unicodeScalars.allSatisfy { scalar in
            (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                || scalar == "." || scalar == "-" || scalar == ":" || scalar == "%" || scalar == "_"
        }
        guard allowed else { throw ParseError(reason: "'\(host)' is not a host name or IP address") }
        guard portText.allSatisfy(\.isASCII), let port = Int(portText), (1...65535).contains(port) else {
            throw ParseError(reason: "'\(portText)' is not a port in 1…65535")
        }
        self.host = String(host)
        self.port = port
    }

    /// `host:port`, with an IPv6 host in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
