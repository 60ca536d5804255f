/// The fleet uplink to an MQTT broker: the `[uplink]` keys, and what `RepUplink.Uplink` runs with. The station
/// and the software version are known only when the daemon starts, the password only at each connection attempt:
/// the uplink takes those separately.
public struct UplinkSettings: Sendable, Equatable {
    /// `uplink.enabled`: whether the daemon starts an uplink at all (default false).
    public var enabled = false
    /// `uplink.host`: the broker's host name or address (default `localhost`).
    public var host = "localhost"
    /// `uplink.port`: the broker's TCP port (default 1883; 8883 usually for TLS).
    public var port = 1883
    /// `uplink.client_id`: the MQTT client id; nil (`""` in the file) means `repd-<station>`. Two clients with one
    /// id push each other off the broker.
    public var clientID: String?
    /// `uplink.topic_prefix`: the first topic level (default `repd`): events go to `<prefix>/<station>/events`,
    /// status to `<prefix>/<station>/status`.
    public var topicPrefix = "repd"
    /// `uplink.keepalive_s`: seconds between keep-alive pings when nothing else is sent (default 30).
    public var keepalive = 30
    /// `uplink.username`: nil (`""` in the file) means none.
    public var username: String?
    /// `uplink.password_file`: the file holding the password (read at each connection attempt, so a fixed file
    /// takes effect without a restart); it must not be readable by other users. Nil (`""`) means none.
    public var passwordFile: String?
    /// `uplink.tls = true` and its files; nil: plain MQTT.
    public var tls: TLS?
    /// `uplink.reconnect_min_s`: the first delay before reconnecting, seconds (default 1); it doubles after each
    /// failed attempt up to `reconnectMax`.
    public var reconnectMin = 1.0
    /// `uplink.reconnect_max_s`: the longest delay between reconnection attempts, seconds (default 60).
    public var reconnectMax = 60.0
    /// `uplink.max_inflight`: events sent and not yet acknowledged (PUBACK) at most (default 20): what a
    /// reconnection can deliver twice.
    public var maxInflight = 20
    /// How long to wait for the broker's CONNACK after the TCP connection was made, seconds (not a key).
    public var connectTimeout = 5.0
    /// How long a graceful stop waits for the backlog to be acknowledged, seconds (not a key).
    public var stopGrace = 2.0

    /// TLS settings (`mosquitto_tls_set`, `mosquitto_tls_insecure_set`).
    public struct TLS: Sendable, Equatable {
        /// `uplink.ca_file`: the CA certificate file (PEM) the broker's certificate must chain to; nil: `caPath`.
        public var caFile: String?
        /// `uplink.ca_path`: a folder of CA certificates (`c_rehash`ed), used when there is no `caFile`. The
        /// configuration reader fills in `defaultCAPath` when the file names neither; `init` leaves it nil.
        public var caPath: String?
        /// `uplink.cert_file`: the client's certificate (PEM), for brokers that want one; with `keyFile`.
        public var certFile: String?
        /// `uplink.key_file`: the client's private key (PEM, not encrypted).
        public var keyFile: String?
        /// `uplink.tls_insecure`: skip the check that the broker's certificate names `host` (testing only: anyone
        /// can then pose as the broker).
        public var insecure = false

        /// The default `uplink.ca_path`: Debian's folder of the system's CA certificates.
        public static let defaultCAPath = "/etc/ssl/certs"

        /// Creates the settings.
        public init(
            caFile: String? = nil, caPath: String? = nil, certFile: String? = nil, keyFile: String? = nil,
            insecure: Bool = false
        ) {
            self.caFile = caFile
            self.caPath = caPath
            self.certFile = certFile
            self.keyFile = keyFile
            self.insecure = insecure
        }
    }

    /// The defaults (disabled).
    public init() {}

    /// Settings for the broker at `host:port`.
    public init(host: String, port: Int = 1883, clientID: String? = nil) {
        self.host = host
        self.port = port
        self.clientID = clientID
    }

    /// `mqtt://host:port` (or `mqtts://`): names the broker in logs, status, and the journal's progress table.
    public var brokerURL: String { "\(tls == nil ? "mqtt" : "mqtts")://\(host):\(port)" }
}
