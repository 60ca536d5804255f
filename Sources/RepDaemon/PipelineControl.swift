import Synchronization

/// Requests from clients to the detection pipeline (thread-safe): `reset` is flagged and the pipeline is woken.
final class PipelineControl: Sendable {
    private let resetFlag = Atomic<Bool>(false)
    let doorbell: Doorbell

    init(doorbell: Doorbell) { self.doorbell = doorbell }

    func requestReset() {
        resetFlag.store(true, ordering: .releasing)
        doorbell.ringAlways()
    }

    /// Whether a reset was asked for since the last call (clears the request).
    func takeReset() -> Bool { resetFlag.exchange(false, ordering: .acquiringAndReleasing) }

    var resetPending: Bool { resetFlag.load(ordering: .acquiring) }
}
