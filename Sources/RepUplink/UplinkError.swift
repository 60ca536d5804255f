/// Something the uplink could not do: what, against which broker or file, and libmosquitto's or the system's
/// own words.
public struct UplinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure, so callers (and status) can tell them apart.
    public enum Kind: String, Sendable {
        /// The password file cannot be used (missing, unreadable, readable by others).
        case passwordFile = "password_file"
        /// libmosquitto refused a setting (a TLS file that does not exist, ...).
        case setup
        /// The broker could not be reached (connection refused, no route, name not found).
        case unreachable
        /// The broker answered CONNACK with a refusal (not authorised, bad user name or password, ...).
        case refused
        /// The TLS handshake failed (certificate not trusted, wrong host name, ...).
        case tls
        /// An open connection ended (broker stopped, network lost, keep-alive timeout).
        case connectionLost = "connection_lost"
        /// The broker refused a message it was sent (MQTT 5: a PUBACK's reason code, such as an ACL's "not
        /// authorized", or a packet over its maximum size): the uplink sends nothing after it until it is taken.
        case messageRefused = "message_refused"
        /// The broker did not acknowledge an event for longer than `uplink.keepalive_s` while it acknowledged later
        /// ones, or for twice that with none acknowledged after it: its acknowledgement was lost, so the connection
        /// is made again and the event sent again.
        case acknowledgementLost = "acknowledgement_lost"
        /// The journal cannot be read or the progress not stored.
        case journal
    }

    /// The kind.
    public var kind: Kind
    /// A sentence saying what failed and why.
    public var message: String

    /// Creates the error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message alone (the kind is left out).
    public var description: String { message }
}
