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
final class MQTTConnection {
    /// What the broker or the socket did, in order.
    enum Event: Equatable {
        /// CONNACK accepted.
        case connected
        /// CONNACK refused, with the return code (5: not authorised, 4: bad user name or password, ...).
        case refused(Int32)
        /// PUBACK for message `mid`.
        case acknowledged(Int32)
        /// The connection ended (`rc` 0: we asked for it).
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
    private let settings: UplinkSession

    /// A client for `settings`, with its last will (`offline`, retained) set; not yet connected.
    init(settings: UplinkSession, will: String) throws(UplinkError) {
        if let problem = libraryProblem() { throw UplinkError(.setup, problem) }
        guard let handle = mosquitto_new(settings.clientID, true, nil) else {
            throw UplinkError(.setup, "mosquitto_new failed: \(String(cString: strerror(errno)))")
        }
        self.handle = handle
        self.settings = settings
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, context, rc in
            let connection = MQTTConnection.from(context)
            if rc != 0 { connection.refusal = rc } else { connection.accepted = true }
            connection.events.append(rc == 0 ? .connected : .refused(rc))
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            MQTTConnection.from(context).events.append(.acknowledged(mid))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, rc in
            MQTTConnection.from(context).events.append(.disconnected(rc))
        }
        mosquitto_log_callback_set(handle) { _, context, level, text in
            guard level & Int32(MOSQ_LOG_ERR) != 0, let text else { return }
            MQTTConnection.from(context).lastLibraryError = String(cString: text)
        }
        try check(mosquitto_max_inflight_messages_set(handle, UInt32(settings.maxInflight)), "max_inflight")
        if let username = settings.username {
            try check(mosquitto_username_pw_set(handle, username, settings.password), "username")
        }
        if let tls = settings.tls {
            let rc = mosquitto_tls_set(handle, tls.caFile, tls.caPath, tls.certFile, tls.keyFile, nil)
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

    /// Publishes at QoS 1; returns the message id its PUBACK will carry.
    func publish(topic: String, payload: String, retain: Bool) throws(UplinkError) -> Int32 {
        var mid: Int32 = 0
        let bytes = Array(payload.utf8)
        errno = 0
        let rc = mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes, 1, retain)
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
            // OpenSSL says only "certificate verify failed", for a CA that did not sign the broker's certificate
            // and for a certificate that does not name the host alike: say what that means and what to check.
            if let reason = lastLibraryError, reason.contains("certificate verify failed") {
                let trusted =
                    settings.tls?.caFile.map { "uplink.ca_file (\($0))" }
                    ?? "uplink.ca_path (\(settings.tls?.caPath ?? "-"))"
                return UplinkError(
                    .tls,
                    "TLS with the broker at \(broker) failed: the broker's certificate is not trusted (\(reason)); "
                        + "check that \(trusted) holds the CA that signed it and that it names \(settings.host)")
            }
            return UplinkError(.tls, "TLS with the broker at \(broker) failed\(detail)")
        case MOSQ_ERR_CONN_REFUSED.rawValue:
            let reason = refusal.map { Self.describeConnack($0) } ?? "no reason given"
            let hint = refusal == 4 || refusal == 5 ? " (check uplink.username and uplink.password_file)" : ""
            return UplinkError(.refused, "the broker at \(broker) refused the connection: \(reason)\(hint)")
        case MOSQ_ERR_KEEPALIVE.rawValue where !accepted:
            // libmosquitto gives up on CONNECT after the keepalive too ("Unknown error."): nothing MQTT answered.
            return UplinkError(
                .unreachable,
                "no answer (CONNACK) from the broker at \(broker) within \(settings.keepalive) s (uplink.keepalive_s): is it an MQTT broker, and does it expect TLS (uplink.tls)?"
            )
        case MOSQ_ERR_KEEPALIVE.rawValue:
            // A broker that stopped answering (hung, or a network that drops everything on the way): libmosquitto's
            // own words for it are "Unknown error."
            return UplinkError(
                .connectionLost,
                "the broker at \(broker) stopped answering: no reply to a keepalive ping within \(settings.keepalive) s (uplink.keepalive_s)"
            )
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
        let words = String(cString: mosquitto_strerror(rc))
        return words.hasPrefix("Unknown error") ? "libmosquitto error \(rc)" : words
    }

    /// libmosquitto's words for a CONNACK return code ("Connection Refused: not authorised.").
    static func describeConnack(_ rc: Int32) -> String { String(cString: mosquitto_connack_string(rc)) }
}
