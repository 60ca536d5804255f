import Foundation
import RepJournal
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One TCP connection to 127.0.0.1:`port`: send bytes, read what comes back, see whether the server closed it.
private final class TCPClient {
    let fd: Int32

    init?(port: Int) {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: every stored property is set, so a failed init runs `deinit`, which closes `fd` (closing
        // it here too closed, a moment later, whatever another test had just opened under that number).
        guard connected == 0 else { return nil }
    }

    deinit { close(fd) }

    func send(_ text: String) { _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }

    /// Everything the server sends until it closes the connection or `timeout` seconds pass; `closed` says which.
    func readAll(timeout: Double) -> (text: String, closed: Bool) {
        var bytes: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&poller, 1, left) > 0 else { return (String(decoding: bytes, as: UTF8.self), false) }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return (String(decoding: bytes, as: UTF8.self), true) }
            bytes += buffer[0..<n]
        }
    }
}

/// repd-web's `/api/status`, parsed (nil when it does not answer).
private func webStatus(port: Int) -> JSONValue? {
    guard let client = TCPClient(port: port) else { return nil }
    client.send("GET /api/status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    let response = client.readAll(timeout: 5).text
    guard let body = response.range(of: "\r\n\r\n") else { return nil }
    return try? JSONParser.parse(String(response[body.upperBound...]))
}

/// The elements of a JSON array (nil for anything else).
private func elements(_ value: JSONValue?) -> [JSONValue]? {
    if case .array(let items)? = value { return items }
    return nil
}

/// The first station's field `key` in repd-web's `/api/status`.
private func firstStation(_ key: String, port: Int) -> JSONValue? {
    elements(webStatus(port: port)?["stations"])?.first?[key]
}

/// repd-web started with `arguments` and `--listen 127.0.0.1:PORT` on a free port, once it accepts connections.
private func startWeb(_ arguments: [String]) throws -> (server: DaemonProcess, port: Int) {
    let port = freePort()
    let server = try DaemonProcess(
        executable: productsDirectory + "/repd-web", arguments: arguments + ["--listen", "127.0.0.1:\(port)"])
    #expect(eventually(timeout: 20) { tcpListens(port) })
    return (server, port)
}

@Suite(
    "repd-web serving: HEAD, unfinished requests, and why repd cannot be read", .serialized,
    .enabled(if: repdWebPrerequisite == nil, Comment(rawValue: repdWebPrerequisite ?? "")))
struct RepdWebServingTests {
    let web = productsDirectory + "/repd-web"

    @Test(
        "HEAD / and HEAD /api/status answer 200 with the GET's content type and no body, as uptime monitors ask; other paths stay 404"
    )
    func headIsAnswered() throws {
        let dir = scratchDirectory()
        let (server, port) = try startWeb(["--socket", dir + "/none.sock"])
        for (path, type) in [("/", "text/html; charset=utf-8"), ("/api/status", "application/json")] {
            let client = try #require(TCPClient(port: port))
            client.send("HEAD \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let response = client.readAll(timeout: 5)
            #expect(response.text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(path): \(response.text)")
            #expect(response.text.lowercased().contains("content-type: \(type)"), "\(path): \(response.text)")
            #expect(response.text.hasSuffix("\r\n\r\n"), "no body: \(response.text)")
        }
        let other = try #require(TCPClient(port: port))
        other.send("HEAD /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(other.readAll(timeout: 5).text.hasPrefix("HTTP/1.1 404"))
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
    }

    @Test(
        "a connection that never finishes its request is closed after --idle-timeout, while an event stream open as long stays open"
    )
    func unfinishedRequestsAreClosed() throws {
        let dir = scratchDirectory()
        let (server, port) = try startWeb(["--socket", dir + "/none.sock", "--idle-timeout", "1"])
        let stream = try #require(TCPClient(port: port))
        stream.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        let slow = try #require(TCPClient(port: port))
        slow.send("GET / HTTP/1.1\r\nHost: x\r\n")  // and never the empty line that ends the head
        let cutOff = slow.readAll(timeout: 10)
        #expect(cutOff.closed, "closed by repd-web: \(cutOff.text)")
        let streamed = stream.readAll(timeout: 1)
        #expect(!streamed.closed && streamed.text.contains("text/event-stream"), "\(streamed.text)")
        #expect(webStatus(port: port) != nil, "still serving")
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
    }

    @Test(
        "/api/status and the page say why repd cannot be read when it is not that repd is down: a path that is not a socket, repd refusing another client"
    )
    func linkProblemIsShown() throws {
        let dir = scratchDirectory()
        // A regular file where the socket should be.
        try "".write(toFile: dir + "/file.sock", atomically: true, encoding: .utf8)
        var port = freePort()
        var server = try DaemonProcess(
            executable: web, arguments: ["--socket", dir + "/file.sock", "--listen", "127.0.0.1:\(port)"])
        #expect(eventually(timeout: 20) { tcpListens(port) })
        var problem: String?
        #expect(
            eventually(timeout: 10) {
                problem = firstStation("repd_problem", port: port)?.stringValue
                return problem != nil
            })
        #expect(problem == "\(dir)/file.sock is not a socket")
        #expect(firstStation("repd", port: port)?.stringValue == "down")
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)

        // repd with its one client slot taken.
        let socketPath = dir + "/events.sock"
        try "[socket]\nmax_clients = 1\n".write(toFile: dir + "/repd.toml", atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: [
            "--config", dir + "/repd.toml", "--demo", "--loop", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        var holder = LineClient(path: socketPath)
        #expect(holder?.next { $0.hello } != nil)
        port = freePort()
        server = try DaemonProcess(
            executable: web, arguments: ["--socket", socketPath, "--listen", "127.0.0.1:\(port)"])
        #expect(eventually(timeout: 20) { tcpListens(port) })
        #expect(
            eventually(timeout: 10) {
                problem = firstStation("repd_problem", port: port)?.stringValue
                return problem != nil
            })
        #expect(problem == "repd refused the connection: too many clients (1); try again later")
        holder = nil  // the slot frees: the link comes up and the problem goes
        #expect(
            eventually(timeout: 15) { firstStation("repd", port: port)?.stringValue == "up" },
            "\(server.standardError.suffix(1500))")
        #expect(firstStation("repd_problem", port: port) == .null)
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "repd-web run as a user the socket's mode shuts out says so (permission, the group to join) instead of 'repd is not running'",
        .enabled(
            if: access("/usr/bin/setpriv", X_OK) == 0 && getuid() == 0,
            "needs root and setpriv to run repd-web as another user"))
    func permissionProblemIsShown() throws {
        let dir = scratchDirectory()
        chmod(dir, 0o755)
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--journal", "", "--quiet"])
        #expect(daemonListens(socketPath))
        let port = freePort()
        let server = try DaemonProcess(
            executable: "/usr/bin/setpriv",
            arguments: [
                "--reuid=65534", "--regid=65534", "--clear-groups", web, "--socket", socketPath, "--listen",
                "127.0.0.1:\(port)",
            ])
        #expect(eventually(timeout: 20) { tcpListens(port) })
        var problem: String?
        #expect(
            eventually(timeout: 10) {
                problem = firstStation("repd_problem", port: port)?.stringValue
                return problem != nil
            })
        var info = stat()
        #expect(stat(socketPath, &info) == 0)
        let group = try #require(getgrgid(info.st_gid)).pointee.gr_name.map { String(cString: $0) }
        #expect(problem == "permission denied on \(socketPath): add repd-web's user to the group '\(group ?? "")'")
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "a repd that stops answering (SIGSTOP) shows as down with the reason within 35 s, not as live; once it answers again the link comes back"
    )
    func stoppedRepdIsNoticed() throws {
        let dir = scratchDirectory()
        let socketPath = dir + "/events.sock"
        let daemon = try DaemonProcess(arguments: [
            "--demo", "--loop", "--socket", socketPath, "--journal", "", "--quiet",
        ])
        #expect(daemonListens(socketPath))
        let (server, port) = try startWeb(["--socket", socketPath])
        #expect(eventually(timeout: 15) { firstStation("repd", port: port)?.stringValue == "up" })
        daemon.signal(SIGSTOP)
        var problem: String?
        let noticed = eventually(timeout: 35) {
            problem = firstStation("repd_problem", port: port)?.stringValue
            return problem != nil
        }
        daemon.signal(SIGCONT)
        #expect(noticed, "\(server.standardError.suffix(1500))")
        #expect(problem == "repd does not answer: nothing for 15 s, not even to a ping (stopped or hung?)")
        #expect(
            eventually(timeout: 15) { firstStation("repd", port: port)?.stringValue == "up" },
            "\(server.standardError.suffix(1500))")
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "two repds on one host, unlabelled: each shows under the station name repd gives it (it was the host's name numbered, for good)"
    )
    func stationsTakeRepdsNames() throws {
        let dir = scratchDirectory()
        var daemons: [DaemonProcess] = []
        for name in ["rackA", "rackB"] {
            daemons.append(
                try DaemonProcess(arguments: [
                    "--demo", "--loop", "--speed", "10", "--socket", "\(dir)/\(name).sock", "--journal",
                    "\(dir)/\(name).db", "--station", name, "--quiet",
                ]))
            #expect(daemonListens("\(dir)/\(name).sock"))
        }
        let (server, port) = try startWeb(["--socket", dir + "/rackA.sock", "--socket", dir + "/rackB.sock"])
        var names: [String] = []
        #expect(
            eventually(timeout: 30) {
                names = elements(webStatus(port: port)?["stations"])?.compactMap { $0["station"]?.stringValue } ?? []
                return names == ["rackA", "rackB"]
            }, "\(names)")
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        for daemon in daemons {
            daemon.signal(SIGTERM)
            #expect(daemon.waitForExit() == 0)
        }
    }

    @Test(
        "web.socket in the configuration file names several stations (NAME=PATH), as --socket does, and --check-config lists them; a malformed entry or a name given twice exits 78 naming the file, line and entries"
    )
    func configurationNamesSeveralStations() throws {
        let dir = scratchDirectory()
        let port = freePort()
        try """
        [web]
        listen = "127.0.0.1:\(port)"
        socket = ["rack-1=\(dir)/a.sock", "rack-2=\(dir)/b.sock"]
        """.write(toFile: dir + "/repd.toml", atomically: true, encoding: .utf8)
        let check = try DaemonProcess(executable: web, arguments: ["--config", dir + "/repd.toml", "--check-config"])
        #expect(check.waitForExit() == 0)
        #expect(
            check.standardOutput.contains("stations: rack-1=\(dir)/a.sock, rack-2=\(dir)/b.sock"),
            "\(check.standardOutput)")
        let server = try DaemonProcess(executable: web, arguments: ["--config", dir + "/repd.toml"])
        #expect(eventually(timeout: 20) { tcpListens(port) })
        let names = elements(webStatus(port: port)?["stations"])?.compactMap { $0["station"]?.stringValue }
        #expect(names == ["rack-1", "rack-2"])
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)

        try "[web]\nsocket = [\"rack-1=\"]\n".write(toFile: dir + "/bad.toml", atomically: true, encoding: .utf8)
        let bad = try DaemonProcess(executable: web, arguments: ["--config", dir + "/bad.toml", "--check-config"])
        #expect(bad.waitForExit() == 78)
        #expect(
            bad.standardError.contains("bad.toml:2: web.socket: 'rack-1=': expected PATH or NAME=PATH"),
            "\(bad.standardError)")

        try "[web]\n\nsocket = [\"a=/x.sock\", \"a=/y.sock\"]\n".write(
            toFile: dir + "/twice.toml", atomically: true, encoding: .utf8)
        let twice = try DaemonProcess(executable: web, arguments: ["--config", dir + "/twice.toml", "--check-config"])
        #expect(twice.waitForExit() == 78)
        #expect(
            twice.standardError.contains("twice.toml:3: web.socket: 'a=/x.sock' and 'a=/y.sock' both name station 'a'"),
            "\(twice.standardError)")
    }

    @Test("repd-web logs that it serves only once the address is bound: a bind that fails is the one line, exit 1")
    func servingIsLoggedAfterTheBind() throws {
        let port = freePort()
        let first = try DaemonProcess(
            executable: web, arguments: ["--socket", "/nonexistent.sock", "--listen", "127.0.0.1:\(port)"])
        #expect(eventually(timeout: 20) { first.standardError.contains("serving http://127.0.0.1:\(port)/") })
        let second = try DaemonProcess(
            executable: web, arguments: ["--socket", "/nonexistent.sock", "--listen", "127.0.0.1:\(port)"])
        #expect(second.waitForExit(timeout: 20) == 1)
        #expect(second.standardError.contains("cannot serve http://127.0.0.1:\(port)/"), "\(second.standardError)")
        #expect(!second.standardError.contains("serving http"), "\(second.standardError)")
        first.signal(SIGTERM)
        #expect(first.waitForExit() == 0)
    }

    @Test(
        "repd-web refuses a --client-timeout or --idle-timeout past an hour (1e300 crashed it), a socket path a Unix socket cannot hold, a station name given twice or one with white space at an end (exit 64)",
        arguments: [
            (["--client-timeout", "1e300"], "--client-timeout must be from 0.1 to 3600 s"),
            (["--idle-timeout", "0"], "--idle-timeout must be from 0.1 to 3600 s"),
            (["--socket", "=/tmp/x.sock"], "expected PATH or NAME=PATH"),
            (
                ["--socket", "a=/tmp/x.sock", "--socket", "a=/tmp/y.sock"],
                "'a=/tmp/x.sock' and 'a=/tmp/y.sock' both name station 'a'"
            ),
            (["--socket", "rack 1 =/tmp/x.sock"], "the station name 'rack 1 ' begins or ends with white space"),
            (["--socket", "/tmp/" + String(repeating: "s", count: 120)], "a Unix socket's path holds at most 107"),
        ])
    func refusesValuesItCannotUse(arguments: [String], message: String) throws {
        let server = try DaemonProcess(executable: web, arguments: arguments + ["--check-config"])
        #expect(server.waitForExit() == 64, "\(arguments): \(server.standardError)")
        #expect(server.standardError.contains(message), "\(arguments): \(server.standardError)")
    }

    @Test(
        "repd-web --check-config refuses a listen host that names no address (exit 78, naming the host), as a start would fail to bind it"
    )
    func checkConfigResolvesListenHost() throws {
        let server = try DaemonProcess(
            executable: web, arguments: ["--listen", "no-such-host.invalid:8080", "--check-config"])
        #expect(server.waitForExit() == 78, "\(server.standardError)")
        #expect(
            server.standardError.contains("--listen: the host 'no-such-host.invalid' names no address here"),
            "\(server.standardError)")
        // An address, but another machine's (TEST-NET-3): the start fails to bind it (EADDRNOTAVAIL), so must the check.
        let remote = try DaemonProcess(
            executable: web, arguments: ["--listen", "203.0.113.1:8080", "--check-config"])
        #expect(remote.waitForExit() == 78, "\(remote.standardError)")
        #expect(
            remote.standardError.contains("--listen: the host '203.0.113.1' is not an address of this machine"),
            "\(remote.standardError)")
        let local = try DaemonProcess(executable: web, arguments: ["--listen", "localhost:8080", "--check-config"])
        #expect(local.waitForExit() == 0, "\(local.standardError)")
    }

    @Test(
        "repd-web's first connection asks for the last 500 events: a journal holding fewer (retention) is no warning, as that since was never a resume"
    )
    func startWindowBelowRetentionIsNoWarning() throws {
        // What retention leaves of 600: the newest 50 (551…600), so repd-web's window (since=100) reaches below it.
        let (daemon, socketPath) = try daemonOnPrunedJournal(count: 600, kept: 50)
        defer { daemon.stop() }
        let (server, port) = try startWeb(["--socket", socketPath])
        // The replay came after repd's error line: once it is applied, the error was read.
        #expect(eventually(timeout: 20) { (firstStation("last_id", port: port)?.int ?? 0) >= 600 })
        server.signal(SIGTERM)
        #expect(server.waitForExit() == 0)
        #expect(!server.standardError.contains("repd says: since="), "\(server.standardError)")
    }
}
