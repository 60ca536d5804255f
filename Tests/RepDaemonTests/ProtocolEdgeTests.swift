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
    @Test("a complete line over 4096 bytes gets an error and the connection is closed")
    func oversizedCompleteLine() throws {
        let (daemon, client, _) = try demoDaemonAndClient()
        client.send(String(repeating: "x", count: 5000) + "\nping\n")
        #expect(client.next { $0.errorMessage }?.contains("longer than 4096") == true)
        #expect(client.nextLine(timeout: 5) == nil, "the connection closes; the ping after it is not answered")
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
