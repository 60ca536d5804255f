import Foundation
import RepClient
import TestScratch
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A broker that loses one acknowledgement: a proxy in front of mosquitto that passes everything through, except
/// the `dropping`-th PUBACK from the broker (counted over all connections), which it drops once, printing
/// `dropped PUBACK <packet id>`.
private final class LostPubackProxy {
    let port: Int
    let script: PythonScript

    init(directory: String, brokerPort: Int, dropping: Int) throws {
        port = freePort()
        let source = pythonProxySource(
            """
            lock = threading.Lock()
            pubacks = 0
            def broker_packets():
                # Whole packets only (the first byte, the remaining length in 1-4 bytes, then that many bytes), one
                # PUBACK among them dropped; the rest of a packet waits for the next chunk.
                held = b""
                def transform(data):
                    global pubacks
                    nonlocal held
                    held += data
                    out = b""
                    while len(held) >= 2:
                        i, length, shift = 1, 0, 0
                        while i < len(held) and held[i] & 0x80:
                            length |= (held[i] & 0x7F) << shift
                            shift += 7
                            i += 1
                        if i >= len(held): break
                        length |= held[i] << shift
                        end = i + 1 + length
                        if len(held) < end: break
                        packet, held = held[:end], held[end:]
                        if packet[0] >> 4 == 4:
                            with lock:
                                pubacks += 1
                                drop = pubacks == int(sys.argv[3])
                            if drop:
                                print("dropped PUBACK", int.from_bytes(packet[i + 1:i + 3], "big"), flush=True)
                                continue
                        out += packet
                    return out
                return transform
            def serve(client):
                upstream = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
                threading.Thread(target=pipe, args=(upstream, client, broker_packets()), daemon=True).start()
                pipe(client, upstream)
            """)
        script = try PythonScript(
            directory: directory, name: "lost-puback.py", source: source,
            arguments: [String(port), String(brokerPort), String(dropping)])
        #expect(eventually(timeout: 10) { tcpListens(port) }, "the proxy listens on \(port)")
    }
}

@Suite(
    "the uplink when the broker loses an acknowledgement", .serialized,
    .enabled(if: haveMosquitto, "needs mosquitto, mosquitto-clients and python3"))
struct UplinkLostAcknowledgementTests {
    @Test(
        "a PUBACK the broker never sends: after uplink.keepalive_s with the events after it acknowledged (20 in flight), or twice that with one in flight at a time, the log names the event, repd connects again and sends it, and the stored progress reaches the newest id",
        arguments: [20, 1])
    func lostAcknowledgement(maxInflight: Int) throws {
        let dir = scratchDirectory()
        let broker = try Broker(directory: dir)
        let subscriber = try Subscriber(port: broker.port)
        // The first PUBACK is the status message's; the fifth, an event's among the first few.
        let proxy = try LostPubackProxy(directory: dir, brokerPort: broker.port, dropping: 5)
        let fixture = try WorkoutFixture(directory: dir, repsPerSet: [5, 6], lead: 10)
        let socketPath = dir + "/events.sock"
        let journalPath = dir + "/events.db"
        let daemon = try DaemonProcess(arguments: [
            "--config",
            try uplinkConfig(dir, port: proxy.port, extra: "keepalive_s = 5\nmax_inflight = \(maxInflight)"),
            "--fixture", fixture.path,
            "--speed", "20", "--socket", socketPath, "--journal", journalPath, "--quiet",
        ])
        #expect(daemonListens(socketPath))
        #expect(waitForEnd(socketPath), "the workout ends")
        #expect(eventually(timeout: 10) { proxy.script.process.standardOutput.contains("dropped PUBACK") })

        // Caught up: connected, nothing in flight, nothing left to send. Without the rule the lost acknowledgement
        // held one event in flight, and the stored progress below it, for as long as the connection lasted.
        let uplink = uplinkCaughtUp(socketPath, timeout: 30)
        #expect(
            uplink?.state == "connected" && uplink?.inFlight == 0 && uplink?.backlog == 0,
            "\(String(describing: uplink)); \(daemon.standardError.suffix(2000))")
        let log = daemon.standardError
        let said = log.split(separator: "\n").first { $0.contains("its acknowledgement was lost; reconnecting") }
        let expected =
            maxInflight > 1
            ? "later events but not event id" : "(over twice uplink.keepalive_s), nor anything after it"
        #expect(
            said?.contains("uplink: the broker at 127.0.0.1:\(proxy.port) ") == true
                && said?.contains(expected) == true && said?.contains("goes out again (1 not acknowledged)") == true,
            "\(log.suffix(2000))")
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit() == 0)
        let n = try newestID(journalPath)
        #expect(
            daemon.standardError.contains("uplink: stopped; the broker has acknowledged every event up to id \(n)"),
            "\(daemon.standardError.suffix(1500))")
        #expect(eventually(timeout: 10) { subscriber.ids.count >= n })
        #expect(subscriber.ids.sorted() == Array(1...n), "every event arrived (some twice: de-duplicated by id)")
    }
}
