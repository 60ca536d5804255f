import ArgumentParser
import RepClient
import RepProtocol

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the running daemon's status: sensor, rate, uptime, clients, ring drops, counts, uplink.",
        discussion: """
            \(connectingHelp) It then waits up to 5 s for the status.

            Examples:
              repctl status
              repctl status --json
            """)

    @Option(help: "repd's socket (default: /run/repd/events.sock if it exists, else the per-user path).")
    var socket: String?

    @Flag(help: "Print the protocol's status line.")
    var json = false

    func run() throws {
        let connection = try openDaemonSession(path: socketPath(socket))
        connection.sendCommand(.status)
        while true {
            switch connection.next(timeout: 5) {
            case .message(.status(let status, let version), let line):
                if json { print(line) } else { print(Self.describe(status, version: version)) }
                return
            case .message(.error(let message), _):
                // Refused (too many clients) or the command was not understood: repd's own words.
                printError("repctl: repd answered: \(message)")
                throw ExitCode(1)
            case .message: continue
            case .timeout, .closed:
                printError("repctl: repd did not answer status")
                throw ExitCode(1)
            }
        }
    }

    static func describe(_ s: ServerMessage.Status, version: String) -> String {
        var reader = ""
        if let iio = s.iio {
            reader =
                "\niio      \(iio.recordsRead) records read, \(iio.reconnects) reconnections, "
                + "\(iio.bytesDiscarded) bytes of partial records dropped"
        }
        var journal = ""
        if let j = s.journal {
            journal = "\njournal  \(j.path), newest event id \(j.newestID)"
            if !j.writing {
                // A replaced or deleted file is still written until repd went over to the file at the path (its
                // reason says where the events go); else events have no ids.
                let replaced = j.error?.contains("while repd runs") == true
                journal += ", NOT WRITING: \(j.error ?? "?")" + (replaced ? "" : " (events go out without ids)")
            }
        }
        var uplink = ""
        if let u = s.uplink {
            uplink = "\nuplink   \(u.state)"
            if u.state != "disabled" {
                uplink +=
                    " \(u.broker ?? ""), acknowledged through id \(u.ackedID), "
                    + "backlog \(u.backlog), in flight \(u.inFlight), "
                    + "\(u.published) published, \(u.connections) connection" + (u.connections == 1 ? "" : "s")
                if let error = u.lastError { uplink += "\n         last error: \(error)" }
            }
        }
        return """
            repd \(version), up \(format(s.uptime, decimals: 0)) s
            sensor   \(sensorLabel(s.sensor)): \(s.sensorState), \(format(s.sensor.rateHz, decimals: 1)) Hz, \(s.samples) samples
            workout  \(s.reps) reps in \(s.sets) sets\(s.inSet ? " (a set is in progress)" : "")
            clients  \(s.clients)
            ring     capacity \(s.ringCapacity), dropped \(s.ringDroppedBatches) batches (\(s.ringDroppedSamples) samples)\(reader)\(journal)\(uplink)
            """
    }
}

/// A sensor as its kind and name ("fixture squat.csv", "iio lis3dh-accel"), or as its name alone when that already
/// starts with the kind ("demo workout", not "demo demo workout"); `separator` goes between the two.
func sensorLabel(_ sensor: ServerMessage.SensorInfo, separator: String = " ") -> String {
    let saysKind = sensor.name == sensor.kind || sensor.name.hasPrefix(sensor.kind + " ")
    return saysKind ? sensor.name : sensor.kind + separator + sensor.name
}
