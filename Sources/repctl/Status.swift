import ArgumentParser
import RepProtocol

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the running daemon's status: sensor, rate, uptime, clients, ring drops, counts, uplink.",
        discussion: "Examples:\n  repctl status\n  repctl status --json")

    @Option(help: "repd's socket (default: /run/repd/events.sock if it exists, else the per-user path).")
    var socket: String?

    @Flag(help: "Print the protocol's status line.")
    var json = false

    func run() throws {
        let connection: DaemonConnection
        do { connection = try DaemonConnection(path: socketPath(socket)) } catch {
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        connection.send("status")
        while true {
            switch connection.next(timeout: 5) {
            case .message(let line, let m) where m["type"]?.stringValue == "status":
                if json { print(line) } else { print(Self.describe(m)) }
                return
            case .message: continue
            case .timeout, .closed:
                printError("repctl: repd did not answer status")
                throw ExitCode(1)
            }
        }
    }

    static func describe(_ m: JSONValue) -> String {
        let sensor = m["sensor"]
        let ring = m["ring"]
        var reader = ""
        if let iio = m["iio"] {
            reader = "\niio      \(iio["records"]?.int ?? 0) records read, \(iio["reconnects"]?.int ?? 0) reconnections, "
                + "\(iio["bytes_discarded"]?.int ?? 0) bytes of partial records dropped"
        }
        var journal = ""
        if let j = m["journal"] {
            journal = "\njournal  \(j["path"]?.stringValue ?? "?"), newest event id \(j["newest_id"]?.int ?? 0)"
            if j["writing"]?.bool == false {
                journal += ", NOT WRITING: \(j["error"]?.stringValue ?? "?") (events go out without ids)"
            }
        }
        var uplink = ""
        if let u = m["uplink"] {
            let state = u["state"]?.stringValue ?? "?"
            uplink = "\nuplink   \(state)"
            if state != "disabled" {
                uplink += " \(u["broker"]?.stringValue ?? ""), acknowledged through id \(u["acked_id"]?.int ?? 0), "
                    + "backlog \(u["backlog"]?.int ?? 0), in flight \(u["in_flight"]?.int ?? 0), "
                    + "\(u["published"]?.int ?? 0) published, \(u["connections"]?.int ?? 0) connection"
                    + (u["connections"]?.int == 1 ? "" : "s")
                if let error = u["last_error"]?.stringValue { uplink += "\n         last error: \(error)" }
            }
        }
        return """
            repd \(m["version"]?.stringValue ?? "?"), up \(format(m["uptime_s"]?.double ?? 0, decimals: 0)) s
            sensor   \(sensor?["kind"]?.stringValue ?? "?") \(sensor?["name"]?.stringValue ?? ""): \(m["sensor_state"]?.stringValue ?? "?"), \(format(sensor?["rate_hz"]?.double ?? 0, decimals: 1)) Hz, \(m["samples"]?.int ?? 0) samples
            workout  \(m["reps"]?.int ?? 0) reps in \(m["sets"]?.int ?? 0) sets\(m["in_set"]?.bool == true ? " (a set is in progress)" : "")
            clients  \(m["clients"]?.int ?? 0)
            ring     capacity \(ring?["capacity"]?.int ?? 0), dropped \(ring?["dropped_batches"]?.int ?? 0) batches (\(ring?["dropped_samples"]?.int ?? 0) samples)\(reader)\(journal)\(uplink)
            """
    }
}
