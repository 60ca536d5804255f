import MotionCore
import RepProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Counters and facts any part of the daemon may read for `status`, updated without locks where it matters.
public final class DaemonState: Sendable {
    /// What the daemon reads from.
    public let sensor: ServerMessage.SensorInfo
    let startedAt = ContinuousClock.now
    let samples = Atomic<Int>(0)
    let reps = Atomic<Int>(0)
    let sets = Atomic<Int>(0)
    let inSet = Atomic<Bool>(false)
    private let sensorStateText = Locked<String>("idle")
    private let ringStatistics = Locked<SPSCRingStatistics?>(nil)

    /// Reads the IIO reader's counters (nil for other sensors).
    let sensorCounters: (@Sendable () -> ServerMessage.SensorCounters)?
    /// Where the IIO reader's sample times come from (`device`/`host`) and why (nil for other sensors).
    let sensorTiming: (@Sendable () -> (source: String, reason: String)?)?

    /// The uplink's state, acknowledged id and backlog (`status`'s `uplink`).
    let uplinkStatus: @Sendable () -> ServerMessage.UplinkInfo

    init(
        sensor: ServerMessage.SensorInfo, sensorCounters: (@Sendable () -> ServerMessage.SensorCounters)? = nil,
        sensorTiming: (@Sendable () -> (source: String, reason: String)?)? = nil,
        uplinkStatus: @escaping @Sendable () -> ServerMessage.UplinkInfo = { .init(state: "disabled") }
    ) {
        self.sensor = sensor
        self.sensorCounters = sensorCounters
        self.sensorTiming = sensorTiming
        self.uplinkStatus = uplinkStatus
    }

    var sensorState: String {
        get { sensorStateText.withLock { $0 } }
        set { sensorStateText.withLock { $0 = newValue } }
    }

    func updateRing(_ statistics: SPSCRingStatistics) { ringStatistics.withLock { $0 = statistics } }

    var uptime: Double {
        let elapsed = ContinuousClock.now - startedAt
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    func status(clients: Int) -> ServerMessage.Status {
        let ring = ringStatistics.withLock { $0 }
        return ServerMessage.Status(
            uptime: uptime, sensor: sensor, sensorState: sensorState, samples: samples.load(ordering: .relaxed),
            ringCapacity: ring?.capacity ?? 0, ringDroppedBatches: ring?.droppedBatches ?? 0,
            ringDroppedSamples: ring?.droppedElements ?? 0, clients: clients, reps: reps.load(ordering: .relaxed),
            sets: sets.load(ordering: .relaxed), inSet: inSet.load(ordering: .relaxed), iio: sensorCounters?(),
            uplink: uplinkStatus())
    }
}
