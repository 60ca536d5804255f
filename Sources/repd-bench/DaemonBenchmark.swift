import Histogram
import MotionCore
import MotionFixtures
import MotionSimulation
import RepClient
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Figures of the real repd process: event latency, fan-out to 1000 clients (with and without one that never
/// reads), and resident memory.
enum DaemonBenchmark {
    struct Setup {
        let repd: String
        let directory: String
        let fixture: String
        let config: String
        let speed: Double
        let seconds: Double
    }

    static func run(quick: Bool, repd: String, directory: String) -> [Figure] {
        raiseFileLimit()
        guard fileExists(repd) else {
            return [
                Figure(
                    key: "latency_p99_us", value: .nan, unit: "µs", goal: "< 1000", note: "repd not found at \(repd)")
            ]
        }
        var generator = WorkoutGenerator()
        generator.sets = quick ? 4 : 10
        generator.repsPerSet = [10]
        generator.restSeconds = 6
        generator.leadSeconds = 3
        generator.sampleRate = 50
        let fixture = directory + "/repd-bench-workout.csv"
        try! FixtureFileWriter.write(generator.generate().samples, to: fixture)
        let config = directory + "/repd-bench.toml"
        let file = fopen(config, "w")!
        fputs("[socket]\nmax_clients = 4000\nclient_queue_kib = 256\n", file)
        fclose(file)
        let setup = Setup(
            repd: repd, directory: directory, fixture: fixture, config: config, speed: 5, seconds: quick ? 8 : 25)

        var figures: [Figure] = []
        let single = measure(setup, clients: 0, stalled: false)
        figures += [
            Figure(
                key: "latency_p50_us", value: single.latencyP50, unit: "µs", goal: "",
                note: "sample due at the reader → rep line read by the client (see README)"),
            Figure(
                key: "latency_p99_us", value: single.latencyP99, unit: "µs", goal: "< 1000",
                note: "\(single.latencyCount) reps inside sets, one client"),
            Figure(
                key: "rss_idle_mb", value: single.idleRSS, unit: "MiB", goal: "≤ 12",
                note: "repd replaying, no client yet"),
        ]
        let plain = measure(setup, clients: 1000, stalled: false)
        figures += [
            Figure(
                key: "latency_1000_clients_p99_us", value: plain.latencyP99, unit: "µs", goal: "",
                note: "the same with 1000 other clients to serve first"),
            Figure(
                key: "fanout_clients", value: Double(plain.connected), unit: "clients", goal: "1000",
                note: "connected at once"),
            Figure(
                key: "fanout_p99_ms", value: plain.fanoutP99, unit: "ms", goal: "",
                note: "publish → read, over every client and rep (\(plain.fanoutCount) deliveries)"),
            Figure(
                key: "rss_1000_clients_mb", value: plain.loadedRSS, unit: "MiB", goal: "", note: "with 1000 clients"),
        ]
        let stalled = measure(setup, clients: 1000, stalled: true)
        figures.append(
            Figure(
                key: "fanout_p99_ms_with_stalled", value: stalled.fanoutP99, unit: "ms", goal: "≤ 2 × fanout_p99_ms",
                note:
                    "the same plus one client subscribed to samples that never reads (\(stalled.fanoutCount) deliveries)"
            ))
        return figures
    }

    struct Result {
        var latencyP50 = Double.nan
        var latencyP99 = Double.nan
        var latencyCount = 0
        var fanoutP99 = Double.nan
        var fanoutCount = 0
        var connected = 0
        var idleRSS = Double.nan
        var loadedRSS = Double.nan
    }

    static func measure(_ s: Setup, clients: Int, stalled: Bool) -> Result {
        let socket = s.directory + "/repd-bench-\(getpid()).sock"
        unlink(socket)
        guard
            let daemon = Child(
                s.repd,
                [
                    "--config", s.config, "--fixture", s.fixture, "--speed", "\(s.speed)", "--socket", socket,
                    "--quiet", "--log-level", "warning",
                ],
                log: s.directory + "/repd-bench-daemon.log")
        else { return Result() }
        defer {
            daemon.signal(SIGTERM)
            daemon.wait()
        }
        var waited = 0.0
        while !fileExists(socket), waited < 10 {
            sleepSeconds(0.01)
            waited += 0.01
        }
        sleepSeconds(0.5)
        var result = Result()
        result.idleRSS = daemon.residentMiB ?? .nan

        let swarm = ClientSwarm()
        defer { swarm.closeAll() }
        // Client 0 measures latency: it also takes the samples, to learn when each sample was due.
        swarm.connect(path: socket, send: .subscribe([.rep, .set, .samples]))
        for _ in 0..<clients { swarm.connect(path: socket) }
        if stalled {
            swarm.connect(path: socket, receiveBuffer: 4096, send: .subscribe([.rep, .set, .sensor, .samples]))
        }
        result.connected = swarm.connections.count - 1 - (stalled ? 1 : 0)

        var fanout = Histogram<UInt64>(highestTrackableValue: 60_000_000)  // µs
        var sampleDue: [(arrival: Double, t: Double)] = []
        var reps: [(arrival: Double, t: Double, repInSet: Int)] = []
        let readers = 0..<(swarm.connections.count - (stalled ? 1 : 0))  // the stalled client is never read
        var firstT: Double?
        swarm.pump(seconds: s.seconds, indices: readers) { index, message, arrival in
            switch message {
            case .event(let event):
                guard case .workout(.rep(let rep)) = event.body else { break }
                _ = fanout.record(UInt64(max(0, (arrival - event.wall) * 1e6)))
                if index == 0 { reps.append((arrival, rep.timestamp, rep.repInSet)) }
            case .samples(let batch) where index == 0:
                guard let last = batch.last else { break }
                if firstT == nil { firstT = batch.first?.timestamp }
                sampleDue.append((arrival, last.timestamp))
            default: break
            }
        }
        result.loadedRSS = daemon.residentMiB ?? .nan
        result.fanoutCount = Int(fanout.totalCount)
        result.fanoutP99 = Double(fanout.valueAtPercentile(99)) / 1000

        // When was each sample due at the reader? The fixture delivers sample t at W0 + (t − t0)/speed. W0 is
        // estimated from the quickest sample delivery seen (so the latency below is measured against the fastest
        // path through the daemon, and is a lower bound by that constant).
        if let t0 = firstT, !sampleDue.isEmpty {
            let w0 = sampleDue.map { $0.arrival - ($0.t - t0) / s.speed }.min()!
            var latency = Histogram<UInt64>(highestTrackableValue: 60_000_000)
            // The first three reps of a set are announced together when the set is established (a documented
            // algorithmic delay), so only later reps measure the pipeline.
            for rep in reps where rep.repInSet > 3 {
                let due = w0 + (rep.t - t0) / s.speed
                _ = latency.record(UInt64(max(0, (rep.arrival - due) * 1e6)))
            }
            result.latencyCount = Int(latency.totalCount)
            result.latencyP50 = Double(latency.valueAtPercentile(50))
            result.latencyP99 = Double(latency.valueAtPercentile(99))
        }
        return result
    }
}
