import CMosquitto

#if canImport(Glibc)
    import Glibc
#endif

/// `mosquitto_lib_init`, once per process, after `repd_mosquitto_load` succeeded (libmosquitto initialises OpenSSL).
private let libraryInitialised: Bool = mosquitto_lib_init() == MOSQ_ERR_SUCCESS.rawValue

/// Nil when libmosquitto is opened (`repd_mosquitto_load`: only once an uplink starts, so a daemon without one never
/// maps it or OpenSSL; after a failure each new connection tries again) and initialised; else why not.
private func libraryProblem() -> String? {
    var error = [CChar](repeating: 0, count: 320)
    guard repd_mosquitto_load(&error, error.count) == 0 else {
        let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return "libmosquitto could not be loaded: " + reason
    }
    return libraryInitialised ? nil : "libmosquitto could not be initialised"
}

/// One MQTT connection: a libmosquitto client used by one thread only (the uplink's), which drives its socket
/// through `mosquitto_loop_read`/`_write`/`_misc` (libmosquitto's own network thread is not started). Callbacks
/// therefore run on that thread, inside those calls, and only queue what happened for the uplink to handle.
///
/// A connection is never reused: after it ends the uplink makes a new one, so what was in flight is resent by the
/// uplink from the journal, not by libmosquitto from memory.
///
/// It speaks MQTT 5 unless told 3.1.1 (`protocol`): only MQTT 5 lets a broker say that it refused a publish (a
/// PUBACK's reason code: an ACL, a size limit), why it closed a connection (another client took the session over),
/// and how large a packet it takes. A 3.1.1 broker acknowledges a publish it refused like any other.
final class MQTTConnection {
    /// The MQTT version spoken.
    enum MQTTVersion: Int32, Sendable {
        /// MQTT 3.1.1 (protocol level 4).
        case v311 = 4
        /// MQTT 5 (protocol level 5).
        case v5 = 5

        /// As in log lines: "MQTT 5", "MQTT 3.1.1".
        var name: String { self == .v5 ? "MQTT 5" : "MQTT 3.1.1" }
    }

    /// What the broker or the socket did, in order.
    enum Event: Equatable {
        /// CONNACK accepted.
        case connected
        /// CONNACK refused, with the return code (3.1.1: 5 not authorised, 4 bad user name or password; MQTT 5: a
        /// reason code, 0x87 not authorised, 0x86 bad user name or password, 0x84 unsupported protocol version).
        case refused(Int32)
        /// PUBACK for message `mid`, with its reason code (0x80 and above: the broker refused the message).
        case acknowledged(mid: Int32, reason: Int32)
        /// The connection ended (`rc` 0: we asked for it; 0x80 and above: the broker's DISCONNECT reason code).
        case disconnected(Int32)
    }

    private let handle: OpaquePointer
    private var events: [Event] = []
    /// The last error libmosquitto logged (OpenSSL's reasons for a TLS failure end up only there).
    private(set) var lastLibraryError: String?
    /// The CONNACK return code of a refusal.
    private(set) var refusal: Int32?
    /// Whether the broker accepted the connection (CONNACK 0).
    private(set) var accepted = false
    /// The reason code of the broker's DISCONNECT (MQTT 5), when it sent one.
    private(set) var disconnectReason: Int32?
    /// The MQTT version this connection speaks.
    let protocolVersion: MQTTVersion
    /// Whether this broker accepted a connection earlier in this run: then no CONNACK is a broker that is busy, hung
    /// or out of reach, not one of another kind or one that expects TLS.
    let answeredBefore: Bool
    private let settings: UplinkSession

    /// A client for `settings` speaking `protocol`, with its last will (`offline`, retained) set; not yet connected.
    init(
        settings: UplinkSession, will: String, protocol: MQTTVersion = .v5, answeredBefore: Bool = false
    ) throws(UplinkError) {
        if let problem = libraryProblem() { throw UplinkError(.setup, problem) }
        guard let handle = mosquitto_new(settings.clientID, true, nil) else {
            throw UplinkError(.setup, "mosquitto_new failed: \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        self.settings = settings
        protocolVersion = `protocol`
        self.answeredBefore = answeredBefore
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        // The MQTT 5 callbacks: libmosquitto calls them for a 3.1.1 connection too (a PUBACK's reason then 0).
        mosquitto_connect_v5_callback_set(handle) { _, context, rc, _, _ in
            let connection = MQTTConnection.from(context)
            if rc != 0 { connection.refusal = rc } else { connection.accepted = true }
            connection.events.append(rc == 0 ? .connected : .refused(rc))
        }
        mosquitto_publish_v5_callback_set(handle) { _, context, mid, reason, _ in
            MQTTConnection.from(context).events.append(.acknowledged(mid: mid, reason: reason))
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, context, rc, _ in
            let connection = MQTTConnection.from(context)
            if rc >= 0x80 { connection.disconnectReason = rc }
            connection.events.append(.disconnected(rc))
        }
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level & Int32(MOSQ_LOG_ERR) != 0, let text else { return }
            MQTTConnection.from(context).lastLibraryError = String(cString: text)
        }
        try check(
            mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, `protocol`.rawValue), "protocol \(`protocol`.name)")
        try check(mosquitto_max_inflight_messages_set(handle, UInt32(settings.maxInflight)), "max_inflight")
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, settings.password), "username")
        }
        if let tls = settings.tls {
            // A pass phrase callback that gives none: OpenSSL's default would ask for one on the terminal, and wait.
            let rc = mosquitto_tls_set(handle, tls.caFile, tls.caPath, tls.certFile, tls.keyFile) { _, _, _, _ in 0 }
            if rc != MOSQ_ERR_SUCCESS.rawValue, let problem = UplinkFiles.problem(tls) {
                throw UplinkError(.setup, problem.description)
            }
            try check(
                rc,
                "TLS files (ca_file \(tls.caFile ?? "-"), cert_file \(tls.certFile ?? "-"), key_file \(tls.keyFile ?? "-"))"
            )
            try check(mosquitto_tls_insecure_set(handle, tls.insecure), "tls_insecure")
        }
        let payload = Array(will.utf8)
        try check(mosquitto_will_set(handle, settings.statusTopic, Int32(payload.count), payload, 1, true), "last will")
    }

    deinit { mosquitto_destroy(handle) }

    private static func from(_ context: UnsafeMutableRawPointer?) -> MQTTConnection {
        Unmanaged<MQTTConnection>.fromOpaque(context!).takeUnretainedValue()
    }

    private func check(_ rc: Int32, _ what: String) throws(UplinkError) {
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw UplinkError(.setup, "libmosquitto refused \(what): \(Self.describe(rc))")
    }

    /// Starts connecting (a non-blocking TCP connect; the name lookup blocks). CONNACK arrives as `.connected`.
    func connect() throws(UplinkError) {
        errno = 0
        let rc = mosquitto_connect_async(handle, settings.host, Int32(settings.port), Int32(settings.keepalive))
        guard rc != MOSQ_ERR_SUCCESS.rawValue else { return }
        throw failure(rc, connecting: true)
    }

    /// The socket to poll (-1 when closed).
    var socket: Int32 { mosquitto_socket(handle) }
    /// Whether libmosquitto has bytes to write (poll for POLLOUT).
    var wantsWrite: Bool { mosquitto_want_write(handle) }

    /// Reads what the socket has; a failure closes the connection and says why.
    func read() throws(UplinkError) {
        errno = 0
        let rc = mosquitto_loop_read(handle, 1)
        if rc != MOSQ_ERR_SUCCESS.rawValue { throw failure(rc, connecting: false) }
    }

    /// Writes what is queued; a failure closes the connection and says why.
    func write() throws(UplinkError) {
        errno = 0
        let rc = mosquitto_loop_write(handle, 1)
        if rc != MOSQ_ERR_SUCCESS.rawValue { throw failure(rc, connecting: false) }
    }

    /// Keep-alive pings and their timeout.
    func misc() throws(UplinkError) {
        let rc = mosquitto_loop_misc(handle)
        if rc != MOSQ_ERR_SUCCESS.rawValue, rc != MOSQ_ERR_NO_CONN.rawValue { throw failure(rc, connecting: false) }
    }

    /// Publishes at QoS 1; returns the message id its PUBACK will carry. `what` names the message in errors
    /// ("event id 57").
    func publish(topic: String, payload: String, retain: Bool, what: String) throws(UplinkError) -> Int32 {
        var mid: Int32 = 0
        let bytes = Array(payload.utf8)
        errno = 0
        let rc = mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes, 1, retain)
        if rc == MOSQ_ERR_OVERSIZE_PACKET.rawValue {
            // The broker said in its CONNACK (MQTT 5) how large a packet it takes.
            throw UplinkError(
                .messageRefused,
                "\(what) (\(bytes.count) bytes on \(topic)) is larger than the broker at \(settings.host):\(settings.port) takes (its maximum packet size): raise that limit on the broker (mosquitto: max_packet_size); the uplink sends nothing after it until then"
            )
        }
        if rc == MOSQ_ERR_RETAIN_NOT_SUPPORTED.rawValue || rc == MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue {
            // The broker's CONNACK (MQTT 5) said it takes no retained messages, or no QoS 1.
            let kind = rc == MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue ? "QoS 1 messages" : "retained messages"
            throw UplinkError(
                .messageRefused,
                "the broker at \(settings.host):\(settings.port) takes no \(kind) (its CONNACK says so): \(what) cannot be sent"
            )
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw failure(rc, connecting: false) }
        return mid
    }

    /// Says DISCONNECT (the broker then drops the last will).
    func disconnect() { _ = mosquitto_disconnect(handle) }

    /// What the callbacks queued since the last call.
    func takeEvents() -> [Event] {
        defer { events = [] }
        return events
    }

    /// A failure as an `UplinkError` of the right kind, with errno's, OpenSSL's or the broker's words.
    private func failure(_ rc: Int32, connecting: Bool) -> UplinkError {
        let code = errno
        let broker = "\(settings.host):\(settings.port)"
        switch rc {
        case MOSQ_ERR_ERRNO.rawValue where connecting, MOSQ_ERR_EAI.rawValue:
            let reason =
                rc == MOSQ_ERR_EAI.rawValue ? "the host name cannot be resolved" : String(cString: strerror(code))
            // systemd's RestrictAddressFamilies= (EAFNOSUPPORT) and IPAddressDeny= (EPERM) look like this: say so.
            let sandbox =
                rc == MOSQ_ERR_ERRNO.rawValue && (code == EAFNOSUPPORT || code == EPERM)
                ? " (under systemd, allow the uplink network access: see README, \"Collect events from many stations\")"
                : ""
            return UplinkError(.unreachable, "cannot reach the broker at \(broker): \(reason)\(sandbox)")
        case MOSQ_ERR_ERRNO.rawValue where [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(code):
            return UplinkError(.unreachable, "cannot reach the broker at \(broker): \(String(cString: strerror(code)))")
        case MOSQ_ERR_TLS.rawValue:
            let detail = lastLibraryError.map { ": \($0)" } ?? ""
            if let tls = settings.tls, let problem = UplinkFiles.problem(tls) {
                return UplinkError(.setup, problem.description)
            }
            // OpenSSL says only "certificate verify failed", for a CA that did not sign the broker's certificate
            // and for a certificate that does not name the host alike: say what that means and what to check.
            if let reason = lastLibraryError, reason.contains("certificate verify failed") {
                let trusted =
                    settings.tls?.caFile.map { "uplink.ca_file (\($0))" }
                    ?? "uplink.ca_path (\(settings.tls?.caPath ?? "-"))"
                return UplinkError(
                    .tls,
                    "TLS with the broker at \(broker) failed: the broker's certificate is not trusted (\(reason)); "
                        + "check that \(trusted) holds the CA that signed it, that it names \(settings.host), and "
                        + "that it has not expired")
            }
            return UplinkError(.tls, "TLS with the broker at \(broker) failed\(detail)")
        case MOSQ_ERR_CONN_REFUSED.rawValue,
            _ where refusal != nil && !accepted:
            // An MQTT 5 refusal comes back from libmosquitto 2.0 as a protocol error: the CONNACK callback has it.
            let reason = refusal.map { describeConnack($0) } ?? "no reason given"
            let credentials: Set<Int32> = protocolVersion == .v5 ? [0x86, 0x87] : [4, 5]
            let hint =
                refusal.map(credentials.contains) == true ? " (check uplink.username and uplink.password_file)" : ""
            return UplinkError(.refused, "the broker at \(broker) refused the connection: \(reason)\(hint)")
        case MOSQ_ERR_KEEPALIVE.rawValue where !accepted:
            // libmosquitto gives up on CONNECT after the keepalive too ("Unknown error."): nothing MQTT answered.
            return UplinkError(
                .unreachable,
                answeredBefore
                    ? "no answer (CONNACK) from the broker at \(broker) within \(settings.keepalive) s (uplink.keepalive_s): it accepted repd earlier, so it is busy, hung or out of reach now"
                    : "no answer (CONNACK) from the broker at \(broker) within \(settings.keepalive) s (uplink.keepalive_s): is it an MQTT broker, and does it expect TLS (uplink.tls)?"
            )
        case MOSQ_ERR_KEEPALIVE.rawValue:
            // A broker that stopped answering (hung, or a network that drops everything on the way): libmosquitto's
            // own words for it are "Unknown error."
            return UplinkError(
                .connectionLost,
                "the broker at \(broker) stopped answering: no reply to a keepalive ping within \(settings.keepalive) s (uplink.keepalive_s)"
            )
        case _ where disconnectReason != nil:
            return ended()
        default:
            // MOSQ_ERR_ERRNO without an errno: mosquitto_strerror would say "Success".
            let detail =
                rc != MOSQ_ERR_ERRNO.rawValue
                ? Self.describe(rc) : code != 0 ? String(cString: strerror(code)) : "a system call failed (no errno)"
            return UplinkError(.connectionLost, "the connection to the broker at \(broker) ended: \(detail)")
        }
    }

    /// libmosquitto's words for an error code, with the code where they are only "Unknown error." (libmosquitto
    /// 2.0.11 has no words for several of its codes).
    static func describe(_ rc: Int32) -> String {
        var words = String(cString: mosquitto_strerror(rc))
        if words.hasSuffix(".") { words.removeLast() }  // "The connection was lost."
        return words.hasPrefix("Unknown error") ? "libmosquitto error \(rc)" : words
    }

    /// Why the connection ended, when the socket closed: the broker's DISCONNECT reason (MQTT 5) if it gave one.
    func ended() -> UplinkError {
        let broker = "\(settings.host):\(settings.port)"
        guard let reason = disconnectReason else {
            return UplinkError(.connectionLost, "the connection to the broker at \(broker) ended")
        }
        let words = Self.describeReason(reason)
        switch reason {
        case 0x8E:
            return UplinkError(
                .connectionLost,
                "the broker at \(broker) closed the connection: \(words): another client connected with the client id \(settings.clientID); each station needs its own (journal.station, or uplink.client_id)"
            )
        default:
            return UplinkError(.connectionLost, "the broker at \(broker) closed the connection: \(words)")
        }
    }

    /// The broker's words for a CONNACK refusal: 3.1.1's return code or MQTT 5's reason code.
    private func describeConnack(_ rc: Int32) -> String {
        protocolVersion == .v5 ? Self.describeReason(rc) : String(cString: mosquitto_connack_string(rc))
    }

    /// libmosquitto's words for an MQTT 5 reason code, with the code ("Not authorized (0x87)").
    static func describeReason(_ reason: Int32) -> String {
        "\(String(cString: mosquitto_reason_string(reason))) (0x\(String(reason, radix: 16, uppercase: true)))"
    }
}
