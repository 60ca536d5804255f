/// What the uplink needs to know: the broker, who it is, how to authenticate, and how to pace itself.
public struct UplinkSettings: Sendable, Equatable {
    /// The broker's host name or address.
    public var host: String
    /// The broker's TCP port (1883 plain, 8883 usually for TLS).
    public var port: Int
    /// The station: the `<station>` of the topics (and the `station` every journaled event carries).
    public var station: String
    /// The MQTT client id; two clients with one id push each other off the broker.
    public var clientID: String
    /// The first topic level (`repd`): events go to `<prefix>/<station>/events`, status to `<prefix>/<station>/status`.
    public var topicPrefix: String = "repd"
    /// Seconds between keep-alive pings when nothing else is sent.
    public var keepalive: Int = 30
    /// The user name (nil: none).
    public var username: String?
    /// The file holding the password (`uplink.password_file`; read at each connection attempt, so a fixed file
    /// takes effect without a restart). It must not be readable by other users.
    public var passwordFile: String?
    /// The password itself (the uplink fills it in from `passwordFile` at each connection attempt).
    public var password: String?
    /// TLS, when the broker speaks it.
    public var tls: TLS?
    /// The first delay before reconnecting, in seconds; it doubles after each failed attempt up to `reconnectMax`.
    public var reconnectMin: Double = 1
    /// The longest delay between reconnection attempts, in seconds.
    public var reconnectMax: Double = 60
    /// Events sent and not yet acknowledged (PUBACK) at most: what a reconnection can deliver twice.
    public var maxInflight: Int = 20
    /// How long to wait for the broker's CONNACK after the TCP connection was made, in seconds.
    public var connectTimeout: Double = 5
    /// How long a graceful stop waits for the backlog to be acknowledged, in seconds.
    public var stopGrace: Double = 2
    /// The software version sent in the status message.
    public var softwareVersion: String = ""

    /// TLS settings (`mosquitto_tls_set`, `mosquitto_tls_insecure_set`).
    public struct TLS: Sendable, Equatable {
        /// The CA certificate file (PEM) the broker's certificate must chain to; nil: `caPath`.
        public var caFile: String?
        /// A folder of CA certificates (`c_rehash`ed), used when there is no `caFile`.
        public var caPath: String?
        /// The client's certificate (PEM), for brokers that want one; with `keyFile`.
        public var certFile: String?
        /// The client's private key (PEM, not encrypted).
        public var keyFile: String?
        /// Skip the check that the broker's certificate names `host` (testing only: anyone can then pose as the broker).
        public var insecure = false

        /// Creates the settings.
        public init(caFile: String? = nil, caPath: String? = nil, certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
            self.caFile = caFile
            self.caPath = caPath
            self.certFile = certFile
            self.keyFile = keyFile
            self.insecure = insecure
        }
    }

    /// Settings for `host:port` as `station`; the client id defaults to `repd-<station>`.
    public init(host: String, port: Int = 1883, station: String, clientID: String? = nil) {
        self.host = host
        self.port = port
        self.station = station
        self.clientID = clientID ?? "repd-\(station)"
    }

    /// `mqtt://host:port` (or `mqtts://`): names the broker in logs, status, and the journal's progress table.
    public var brokerURL: String { "\(tls == nil ? "mqtt" : "mqtts")://\(host):\(port)" }
    /// Where events go.
    public var eventsTopic: String { "\(topicPrefix)/\(station)/events" }
    /// Where the retained status goes.
    public var statusTopic: String { "\(topicPrefix)/\(station)/status" }
}
