import MotionCore

/// Sends `READY=1` once both the socket listens and the sensor delivers, and keeps `STATUS=` current.
final class Readiness: Sendable {
    private let flags = Locked<(socket: Bool, sensor: Bool, sent: Bool)>((false, false, false))
    private let notifier: SystemdNotifier
    private let onReady: @Sendable () -> Void

    init(notifier: SystemdNotifier, onReady: @escaping @Sendable () -> Void) {
        self.notifier = notifier
        self.onReady = onReady
    }

    func socketListening() { update { $0.socket = true } }
    func sensorRunning() { update { $0.sensor = true } }

    private func update(_ change: (inout (socket: Bool, sensor: Bool, sent: Bool)) -> Void) {
        let fire = flags.withLock { f -> Bool in
            change(&f)
            guard f.socket, f.sensor, !f.sent else { return false }
            f.sent = true
            return true
        }
        if fire {
            notifier.notify("READY=1")
            onReady()
        }
    }
}
