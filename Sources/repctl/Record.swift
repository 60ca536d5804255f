import ArgumentParser
import LinuxIIO
import Logging
import MotionCore
import MotionFixtures
import RepClient
import RepProtocol

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record raw samples to a fixture CSV: from the running daemon, or straight from the sensor.",
        discussion: """
            Writes t,ax,ay,az (seconds, g) to FILE.partial and renames it to FILE at the end, so a file under the \
            final name is always complete; Ctrl-C (or SIGTERM, or SIGHUP unless ignored as under nohup) ends the \
            recording cleanly. A progress line shows elapsed time, \
            samples, rate and the reps the daemon counted meanwhile. From the daemon, a recording goes on when repd \
            goes over to a new journal file (the old one deleted or replaced: repd closes every connection and \
            repctl connects again; the samples pause there for a moment, and the last line says so). Without \
            --direct: \(connectingHelp)

            Examples:
              repctl record --out squat.csv --duration 30s
              repctl record --out bench.csv --direct --device lis3dh-accel \\
                --rate 100 --duration 1m
              repd --fixture squat.csv        (replay it through the daemon)
            """)

    @Option(help: "The CSV file to write.")
    var out: String

    @Option(help: "How long to record: 30s, 2m, 500ms or plain seconds, at least 0.1 s (default: until Ctrl-C).")
    var duration: String?

    @Flag(
        help:
            "Read the sensor directly (no daemon running), set up as repd sets it up with its built-in [sensor] defaults and --device and --rate (a repd.toml is not read: its trigger, hrtimer_trigger and force_polling do not apply)."
    )
    var direct = false

    @Option(
        help:
            "With --direct (refused without it): the sensor (name, label, iio:deviceN, syspath or /dev node; default: the first accelerometer)."
    )
    var device: String?

    @Option(
        help:
            "With --direct (refused without it: repd records at its own rate): sample rate to ask for, from 0.1 to 100000 Hz (default 100)."
    )
    var rate: Double?

    @Option(help: "repd's socket (default: /run/repd/events.sock if it exists, else the per-user path).")
    var socket: String?

    @Flag(help: "No progress line.")
    var quiet = false

    func validate() throws {
        guard !out.isEmpty else { throw ValidationError("--out must name a file (it is empty).") }
        if let duration {
            guard let seconds = Self.seconds(duration) else {
                throw ValidationError("--duration: '\(duration)' is not a duration like 30s, 2m, 500ms")
            }
            // Shorter, and no sample may arrive: a file with none is one repd refuses.
            guard seconds >= Self.minimumDuration else {
                throw ValidationError("--duration: '\(duration)' is shorter than 0.1 s (too short for a sample)")
            }
        }
        if !direct {
            for (name, given) in [("--rate", rate != nil), ("--device", device != nil)] where given {
                throw ValidationError(
                    "\(name) needs --direct: it configures the sensor read directly; from repd the recording has "
                        + "repd's sensor and rate")
            }
        }
        if let rate, !(rate >= 0.1 && rate <= 100_000) {
            throw ValidationError("--rate must be a number of Hz from 0.1 to 100000 (got \(rate)).")
        }
    }

    /// The shortest recording: 0.1 s.
    static let minimumDuration = 0.1

    /// A duration in seconds (`30s`, `2m`, `500ms`, `1h` or plain seconds): positive and finite, or nil.
    static func seconds(_ text: String) -> Double? {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        var seconds = Double(text)
        for (suffix, factor) in units where seconds == nil && text.hasSuffix(suffix) {
            seconds = Double(text.dropLast(suffix.count)).map { $0 * factor }
        }
        guard let seconds, seconds > 0, seconds.isFinite else { return nil }
        return seconds
    }

    func run() throws {
        setvbuf(stdout, nil, _IOLBF, 0)
        catchInterrupts()
        let limit = duration.flatMap(Self.seconds) ?? .infinity
        // A recording cannot be made again: refuse a name it could not be renamed to before recording.
        var info = stat()
        if stat(out, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
            printError("repctl: --out \(out) is a folder; give the recording's file name")
            throw ExitCode(1)
        }
        let writer: FixtureFileWriter
        do { writer = try FixtureFileWriter(path: out) } catch {
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        var progress = Progress(quiet: quiet)
        let ending: String
        if direct {
            ending = try recordDirect(writer, limit: limit, progress: &progress)
        } else {
            ending = try recordFromDaemon(writer, limit: limit, progress: &progress)
        }
        guard writer.sampleCount > 0 else {
            // A file without samples is one repd refuses: leave none (the writer removes its .partial).
            printError("repctl: \(ending) before any sample arrived; nothing written to \(out)")
            throw ExitCode(1)
        }
        do { try writer.finish() } catch {
            printError("repctl: \(error) (what was recorded is kept in \(out).partial)")
            throw ExitCode(1)
        }
        progress.finish()
        print("repctl: \(ending); wrote \(writer.sampleCount) samples to \(out)")
    }

    private func recordFromDaemon(_ writer: FixtureFileWriter, limit: Double, progress: inout Progress) throws -> String
    {
        let path = socketPath(socket)
        let start = monotonicNow()
        /// A connection that said hello within `wait` s and was asked for samples and reps; nil when Ctrl-C came
        /// meanwhile.
        func subscribed(wait: Double = helloTimeout) throws(ClientError) -> RepConnection? {
            let connection = try connectToDaemon(path: path)
            guard try awaitHello(connection, timeout: wait) != nil else { return nil }
            connection.sendCommand(.subscribe([.samples, .rep]))
            return connection
        }
        var connection: RepConnection
        do {
            guard let first = try subscribed() else { return "stopped (Ctrl-C)" }
            connection = first
        } catch {
            printError("repctl: \(error)")
            throw ExitCode(1)
        }
        // repd went over to a new journal file (the old one deleted or replaced) and closed every connection: it
        // goes on reading the sensor, so the recording connects again and goes on. The samples sent meanwhile are
        // not in the file: `gap` is the longest pause between two samples written across such a change.
        var replaced = 0
        var gap: Double?
        var lastBeforeFollow: Double?
        func ending(_ what: String) -> String {
            guard replaced > 0 else { return what }
            let times = replaced == 1 ? "once" : "\(replaced) times"
            let pause = gap.map { "the samples pause for up to \(format($0, decimals: 3)) s there" }
            return "\(what) (repd's journal file was replaced \(times) meanwhile"
                + (pause.map { ": repctl connected again and recorded on; \($0))" } ?? ")")
        }
        /// Connects again after repd's bye (it went over to another journal file), trying for up to 30 s and not
        /// past the recording's end: the new subscription, or the recording's last line when none could be made
        /// (Ctrl-C, the duration reached, repd out of reach).
        func reconnect() -> Result<RepConnection, Ended> {
            var delay = 0.2
            var lastError = ""
            let giveUp = min(monotonicNow() + 30, start + limit)
            while !interrupted.load(ordering: .relaxed) {
                let left = giveUp - monotonicNow()
                if left <= 0 { break }
                do {
                    guard let next = try subscribed(wait: min(helloTimeout, left)) else { break }
                    return .success(next)
                } catch {
                    lastError = "\(error)"
                    guard error.transient else { break }
                }
                sleepInterruptibly(min(delay, max(0, giveUp - monotonicNow())))
                delay = min(delay * 2, 2)
            }
            if interrupted.load(ordering: .relaxed) { return .failure(Ended(ending("stopped (Ctrl-C)"))) }
            if monotonicNow() - start >= limit {
                return .failure(Ended(ending("recorded \(format(limit, decimals: 1)) s")))
            }
            return .failure(
                Ended(
                    ending(
                        "repd closed the connection (its journal file was deleted or replaced) and could "
                            + "not be reached again: \(lastError)")))
        }
        while true {
            let elapsed = monotonicNow() - start
            if interrupted.load(ordering: .relaxed) { return ending("stopped (Ctrl-C)") }
            if elapsed >= limit { return ending("recorded \(format(limit, decimals: 1)) s") }
            switch connection.next(timeout: min(0.5, limit - elapsed)) {
            case .message(let message, _):
                switch message {
                case .samples(let batch):
                    if let before = lastBeforeFollow, let first = batch.first {
                        gap = max(gap ?? 0, first.timestamp - before)
                        lastBeforeFollow = nil
                    }
                    do { try writer.append(batch) } catch {
                        printError("repctl: \(error)")
                        throw ExitCode(1)
                    }
                    progress.samples(batch)
                case .event(let event) where event.kind == .rep: progress.reps += 1
                case .bye(let reason):
                    guard reason == "journal replaced" else { return ending("repd stopped") }
                    replaced += 1
                    lastBeforeFollow = lastBeforeFollow ?? progress.last
                    switch reconnect() {
                    case .success(let next): connection = next
                    case .failure(let ended): return ended.line
                    }
                    progress.note(
                        "repd went over to a new journal file (the old one was deleted or replaced); connected "
                            + "again, recording on")
                default: break
                }
            case .timeout: break
            case .closed: return ending("repd went away")
            }
            progress.show(elapsed: monotonicNow() - start)
        }
    }

    private func recordDirect(_ writer: FixtureFileWriter, limit: Double, progress: inout Progress) throws -> String {
        var options = LinuxIIOMotionProvider.Options()
        options.device = device ?? ""
        options.rate = rate ?? 100
        let provider = LinuxIIOMotionProvider(options: options, logger: diagnostics)
        let queue = BatchQueue()
        let samples = provider.samplePublisher.sink { queue.push($0) }
        let states = provider.statePublisher.sink { state in
            if case .failed(let error) = state { queue.fail(error.message) }
            if case .sensorLost(let reason) = state { queue.fail("sensor lost: \(reason)") }
        }
        provider.start()
        defer {
            provider.stop()
            samples.cancel()
            states.cancel()
        }
        let start = monotonicNow()
        while true {
            usleep(50_000)
            let (batches, failure) = queue.take()
            for batch in batches {
                do { try writer.append(batch) } catch {
                    printError("repctl: \(error)")
                    throw ExitCode(1)
                }
                progress.samples(batch)
            }
            if let failure {
                printError("repctl: \(failure)")
                throw ExitCode(1)
            }
            let elapsed = monotonicNow() - start
            progress.show(elapsed: elapsed)
            if interrupted.load(ordering: .relaxed) { return "stopped (Ctrl-C)" }
            if elapsed >= limit { return "recorded \(format(limit, decimals: 1)) s" }
        }
    }
}

/// How a recording ended when repd could not be subscribed to again: its last line.
struct Ended: Error {
    let line: String
    init(_ line: String) { self.line = line }
}

/// The progress line on stderr: elapsed, samples, rate, reps seen.
struct Progress {
    let quiet: Bool
    var count = 0
    var reps = 0
    var first: Double?
    var last: Double?
    var shownAt = -1.0

    mutating func samples(_ batch: [MotionSample]) {
        count += batch.count
        if first == nil { first = batch.first?.timestamp }
        last = batch.last?.timestamp ?? last
    }

    mutating func show(elapsed: Double) {
        guard !quiet, elapsed - shownAt >= 0.5 else { return }
        shownAt = elapsed
        let span = (last ?? 0) - (first ?? 0)
        let rate = span > 0 ? Double(count - 1) / span : 0
        fputs(
            "\r\u{1B}[Krecording: \(format(elapsed, decimals: 1)) s · \(count) samples · \(format(rate, decimals: 1)) Hz · \(reps) reps",
            stderr)
    }

    /// A line on stderr between progress lines (the next progress line starts below it).
    mutating func note(_ text: String) {
        if !quiet, shownAt >= 0 { fputs("\n", stderr) }
        printError("repctl: \(text)")
        shownAt = -1
    }

    func finish() { if !quiet { fputs("\n", stderr) } }
}

/// Batches handed from the provider's reader thread to the writing loop.
final class BatchQueue: Sendable {
    private let state = Locked<(batches: [[MotionSample]], failure: String?)>(([], nil))
    func push(_ batch: [MotionSample]) { state.withLock { $0.batches.append(batch) } }
    func fail(_ message: String) { state.withLock { $0.failure = message } }
    func take() -> ([[MotionSample]], String?) {
        state.withLock { s in
            defer { s.batches.removeAll() }
            return (s.batches, s.failure)
        }
    }
}
