import RepSettings

/// The uplink's settings as it runs with them: the configured `UplinkSettings` (read through, as in
/// `session.host`), the station and software version the daemon knows at start, and the password read from
/// `passwordFile` at each connection attempt.
@dynamicMemberLookup
struct UplinkSession: Sendable {
    /// The `[uplink]` settings.
    var settings: UplinkSettings
    /// The station: the `<station>` of the topics (and the `station` every journaled event carries).
    var station: String
    /// The software version sent in the status message.
    var softwareVersion: String
    /// The password (filled in from `settings.passwordFile` at each connection attempt).
    var password: String?

    subscript<Value>(dynamicMember keyPath: KeyPath<UplinkSettings, Value>) -> Value { settings[keyPath: keyPath] }

    /// The MQTT client id: `uplink.client_id`, else `repd-<station>`.
    var clientID: String { settings.clientID ?? "repd-\(station)" }
    /// Where events go.
    var eventsTopic: String { "\(settings.topicPrefix)/\(station)/events" }
    /// Where the retained status goes.
    var statusTopic: String { "\(settings.topicPrefix)/\(station)/status" }
}
