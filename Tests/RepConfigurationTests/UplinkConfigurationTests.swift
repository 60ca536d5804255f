import RepSettings
import Testing

@testable import RepConfiguration

@Suite("The [uplink] section and journal.station")
struct UplinkConfigurationTests {
    @Test("an uplink section is read into its settings")
    func reads() throws {
        let c = try DaemonConfiguration.parse(
            """
            [journal]
            station = "bench-3"
            [uplink]
            enabled = true
            host = "broker.gym.lan"
            port = 8883
            client_id = "b3"
            keepalive_s = 20
            username = "bench-3"
            password_file = "/etc/repd/mqtt-password"
            tls = true
            ca_file = "/etc/repd/ca.pem"
            cert_file = "/etc/repd/b3.pem"
            key_file = "/etc/repd/b3.key"
            reconnect_min_s = 0.5
            reconnect_max_s = 30
            max_inflight = 50
            """, file: "t.toml")
        #expect(c.journal.station == "bench-3")
        #expect(c.uplink.enabled && c.uplink.host == "broker.gym.lan" && c.uplink.port == 8883)
        #expect(c.uplink.clientID == "b3" && c.uplink.keepalive == 20 && c.uplink.username == "bench-3")
        #expect(c.uplink.passwordFile == "/etc/repd/mqtt-password")
        #expect(
            c.uplink.tls
                == UplinkSettings.TLS(
                    caFile: "/etc/repd/ca.pem", caPath: nil, certFile: "/etc/repd/b3.pem", keyFile: "/etc/repd/b3.key"))
        #expect(c.uplink.reconnectMin == 0.5 && c.uplink.reconnectMax == 30 && c.uplink.maxInflight == 50)
        #expect(c.uplink.brokerURL == "mqtts://broker.gym.lan:8883")
    }

    @Test("with the uplink off, a host or password file it could not use does not stop the file loading")
    func disabledUplinkLoads() throws {
        let c = try DaemonConfiguration.parse(
            "[uplink]\nhost = \"broker:1883\"\npassword_file = \"/x\"\n", file: "t.toml")
        #expect(!c.uplink.enabled && c.uplink.host == "broker:1883")
    }

    @Test("an IPv6 address is a host, its colons no port")
    func ipv6Host() throws {
        #expect(try DaemonConfiguration.parse("[uplink]\nhost = \"::1\"\n", file: "t.toml").uplink.host == "::1")
        #expect(
            try DaemonConfiguration.parse("[uplink]\nhost = \"fd00::1:8883\"\n", file: "t.toml").uplink.host
                == "fd00::1:8883")
    }

    @Test("without ca_file, TLS trusts ca_path (default /etc/ssl/certs); without tls = true, no TLS at all")
    func tlsTrust() throws {
        let plain = try DaemonConfiguration.parse("[uplink]\nenabled = true\nca_path = \"/x\"\n", file: "t.toml")
        #expect(plain.uplink.tls == nil && plain.uplink.brokerURL == "mqtt://localhost:1883")
        let system = try DaemonConfiguration.parse("[uplink]\ntls = true\n", file: "t.toml")
        #expect(system.uplink.tls == UplinkSettings.TLS(caPath: "/etc/ssl/certs"))
        let own = try DaemonConfiguration.parse(
            "[uplink]\ntls = true\nca_path = \"/x\"\ntls_insecure = true\n", file: "t.toml")
        #expect(own.uplink.tls == UplinkSettings.TLS(caPath: "/x", insecure: true))
    }

    @Test(
        "a wrong uplink value names its key, its line and what is allowed",
        arguments: [
            ("[uplink]\nport = 0", "t.toml:2: uplink.port: 0 is not in 1…65535"),
            ("[uplink]\nkeepalive_s = 2", "t.toml:2: uplink.keepalive_s: 2 is not in 5…65535"),
            ("[uplink]\nmax_inflight = 0", "t.toml:2: uplink.max_inflight: 0 is not in 1…65535"),
            (
                "[uplink]\nreconnect_min_s = 5\nreconnect_max_s = 2",
                "t.toml:3: uplink.reconnect_max_s: 2.0 is not in reconnect_min_s (5.0)…86400"
            ),
            (
                "[uplink]\ncert_file = \"c.pem\"\ntls = true",
                "t.toml:2: uplink.cert_file: cert_file and key_file go together"
            ),
            (
                "[uplink]\nca_file = \"ca.pem\"",
                "t.toml:2: uplink.ca_file: is a TLS setting, and tls = false (set tls = true)"
            ),
            (
                "[uplink]\ntopic_prefix = \"a/#\"",
                "t.toml:2: uplink.topic_prefix: 'a/#' is not a topic prefix: not empty, no '+' or '#', no '/' at either end, no control characters"
            ),
            (
                "[uplink]\ntopic_prefix = \"gym\\tx\"",
                "t.toml:2: uplink.topic_prefix: 'gym\tx' is not a topic prefix: not empty, no '+' or '#', no '/' at either end, no control characters"
            ),
            (
                "[uplink]\ntopic_prefix = \"$SYS/repd\"",
                "t.toml:2: uplink.topic_prefix: '$SYS/repd' starts with '$': brokers keep those topics ($SYS) to themselves"
            ),
            (
                "[uplink]\nenabled = true\nhost = \"mqtt://broker.gym.lan:1883\"",
                "t.toml:3: uplink.host: 'mqtt://broker.gym.lan:1883' is a URL; write the host alone (host = \"broker.gym.lan\"), with port and tls for the rest"
            ),
            (
                "[uplink]\nenabled = true\nhost = \"broker.gym.lan:8883\"",
                "t.toml:3: uplink.host: 'broker.gym.lan:8883' holds a port: write host = \"broker.gym.lan\" and port = 8883"
            ),
            (
                "[uplink]\nenabled = true\nusername = \"\"\npassword_file = \"/etc/repd/mqtt-password\"",
                "t.toml:4: uplink.password_file: a password goes with a user name: set uplink.username too"
            ),
            (
                "[uplink]\npassword = \"secret\"",
                "t.toml:2: uplink.password: unknown key (keys of [uplink] are enabled, host, port, client_id, topic_prefix, keepalive_s, username, password_file, tls, ca_file, ca_path, cert_file, key_file, tls_insecure, reconnect_min_s, reconnect_max_s, max_inflight)"
            ),
            (
                "[journal]\npath = \"\"\n[uplink]\nenabled = true",
                "t.toml:4: uplink.enabled: the uplink publishes the journal: journal.path must not be empty"
            ),
            (
                "[journal]\nstation = \"bench/3\"",
                "t.toml:2: journal.station: 'bench/3' may hold only letters, digits, '.', '_' and '-' (it is an MQTT topic level)"
            ),
        ])
    func refuses(text: String, message: String) {
        #expect(throws: ConfigError.self) { try DaemonConfiguration.parse(text, file: "t.toml") }
        do {
            _ = try DaemonConfiguration.parse(text, file: "t.toml")
        } catch {
            #expect(error.description == message)
        }
    }
}

@Suite("log levels and where the configuration comes from")
struct LogLevelTests {
    @Test("log.level and --log-level allow the same names, and the flag wins over the file")
    func levels() throws {
        #expect(LogLevel.allowedNames == "trace, debug, info, notice, warning, error, critical")
        #expect(LogLevel.commandLineProblem("debug") == nil)
        #expect(
            LogLevel.commandLineProblem("loud")
                == "--log-level must be one of trace, debug, info, notice, warning, error, critical.")
        let c = try DaemonConfiguration.parse("[log]\nlevel = \"warning\"\n", file: "t.toml")
        #expect(c.logLevel == .warning)
        #expect(LogLevel.effective(flag: nil, configured: c.logLevel) == .warning)
        #expect(LogLevel.effective(flag: "trace", configured: c.logLevel) == .trace)
    }

    @Test("--config names the file; a file that cannot be read is a configuration error naming it")
    func explicitPath() {
        #expect(ConfigurationSource.path(explicitPath: "/x/repd.toml") == "/x/repd.toml")
        do {
            _ = try DaemonConfiguration.load(explicitPath: "/nonexistent/repd.toml")
            Issue.record("loaded a file that does not exist")
        } catch {
            #expect(error.file == "/nonexistent/repd.toml" && error.reason.hasPrefix("cannot read"))
        }
    }
}
