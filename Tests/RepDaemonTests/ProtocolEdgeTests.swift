import Foundation
import RepClient
import RepProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A demo repd on a socket in a fresh folder, and one client past its `hello`.
func demoDaemonAndClient(_ extra: [String] = []) throws -> (DaemonProcess, LineClient, String) {
    let socketPath = scratchDirectory() + "/events.sock"
    let daemon = try DaemonProcess(arguments: ["--demo", "--socket", socketPath, "--quiet"] + extra)
    #expect(daemonListens(socketPath))
    let client = try #require(LineClient(path: socketPath))
    #expect(client.next(type: "hello") != nil)
    return (daemon, client, socketPath)
}

@Suite("protocol edges (#16)", .serialized)
struct ProtocolEdgeTests {
    @Test("after a half-close a last line without a newline is answered, then repd closes the connection")
    func halfCloseAnswersTheLastLine() throws {
        let (daemon, client, socketPath) = try demoDaemonAndClient(["--journal", ""])
        client.send("ping\nstatus")
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        #expect(client.next(type: "pong") != nil)
        #expect(client.next(type: "status") != nil, "the last line, without its newline, is a command too")
        #expect(client.closes(within: 10), "then repd closes the connection")
        let other = try #require(LineClient(path: socketPath))
        #expect(other.next(type: "hello") != nil, "repd serves on")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("after a half-close a subscribe's replay arrives whole, then repd closes the connection")
    func halfCloseGetsTheWholeReplay() throws {
        let dir = scratchDirectory()
        let (daemon, first, socketPath) = try demoDaemonAndClient(["--journal", dir + "/events.db", "--speed", "4"])
        var reps = 0
        while reps < 3, first.next(type: "rep", timeout: 30) != nil { reps += 1 }
        let client = try #require(LineClient(path: socketPath))
        let newest = Int(try #require(client.next { $0.hello }?.newestID))
        #expect(newest > 3)
        client.send("subscribe since=0\n")
        #expect(shutdown(client.fd, Int32(SHUT_WR)) == 0)
        var ids: [Int] = []
        var subscribed = false
        while let line = client.nextServerLine(timeout: 30) {
            if line.isSubscribed { subscribed = true }
            if subscribed, let id = line.eventID { ids.append(Int(id)) }
            if ids.count >= newest { break }
        }
        #expect(subscribed)
        #expect(client.closes(within: 10), "then repd closes the connection")
        #expect(ids.count >= newest && ids == Array(1...max(1, ids.count)), "the whole journal, in order: \(ids)")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test("a complete line over 4096 bytes gets an error and the connection is closed")
    func oversizedCompleteLine() throws {
        let (daemon, client, _) = try demoDaemonAndClient()
        client.send(String(repeating: "x", count: 5000) + "\nping\n")
        #expect(client.next { $0.errorMessage }?.contains("longer than 4096") == true)
        let rest = client.linesUntilClose(within: 10)
        #expect(rest != nil, "the connection closes")
        #expect(rest?.contains { $0.contains("\"pong\"") } == false, "the ping after it is not answered: \(rest ?? [])")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "an unknown command with arguments is reported as an unknown command",
        arguments: [
            "frobnicate now", #"{"cmd":"frobnicate","events":["rep"]}"#,
        ])
    func unknownCommandWithArguments(line: String) throws {
        let (daemon, client, _) = try demoDaemonAndClient()
        client.send(line + "\n")
        let message = client.next { $0.errorMessage }
        #expect(message?.hasPrefix("unknown command \"frobnicate\"") == true, "\(String(describing: message))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }

    @Test(
        "a subscribe without event types is refused and the client keeps what it received",
        arguments: [
            "subscribe", #"{"cmd":"subscribe","events":[]}"#,
        ])
    func emptySubscribe(line: String) throws {
        let (daemon, client, _) = try demoDaemonAndClient(["--speed", "20"])
        client.send(line + "\n")
        let message = client.next { $0.errorMessage }
        #expect(message?.contains("at least one event type") == true, "\(String(describing: message))")
        #expect(client.next(type: "rep", timeout: 20) != nil, "still subscribed to the defaults")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
    }
}
