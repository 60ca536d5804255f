@testable import LinuxIIO
import MotionCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The supervisor's bookkeeping, the polled reader's failure rule and the stop signal, without a device.
@Suite("IIO supervision")
struct SupervisionTests {
    /// The states `provider` publishes from now on (the current one, sent at subscription, left out).
    private final class StateLog {
        let states = Locked<[MotionProviderState]>([])
        var subscription: AnyCancellable?

        init(_ provider: LinuxIIOMotionProvider) {
            let states = states
            subscription = provider.statePublisher.dropFirst().sink { state in states.withLock { $0.append(state) } }
        }

        var all: [MotionProviderState] { states.withLock { $0 } }
    }

    private let timing = SampleTiming(source: .host, reason: "test")

    @Test("samples that flow after a loss publish sensorBack once, count one reconnect and clear the loss")
    func backAfterLoss() {
        let provider = LinuxIIOMotionProvider()
        let log = StateLog(provider)
        let supervision = LinuxIIOMotionProvider.Supervision()
        supervision.lost = true
        supervision.reportedMissing = true
        provider.publishFlowing(timing, supervision: supervision)
        #expect(log.all == [.sensorBack])
        #expect(provider.counters.reconnects == 1)
        #expect(provider.timing == timing)
        #expect(!supervision.lost && !supervision.reportedMissing)
        // The next capture's samples (a restart without a loss): running, and no second reconnect.
        provider.publishFlowing(timing, supervision: supervision)
        #expect(log.all == [.sensorBack, .running])
        #expect(provider.counters.reconnects == 1)
    }

    @Test("the same state is published once, however many captures announce it")
    func sameStateOnce() {
        let provider = LinuxIIOMotionProvider()
        let log = StateLog(provider)
        let supervision = LinuxIIOMotionProvider.Supervision()
        for _ in 0..<5 { provider.publishFlowing(timing, polling: "no buffer", supervision: supervision) }
        #expect(log.all == [.polling(reason: "no buffer")])
        provider.publishFlowing(timing, polling: "another reason", supervision: supervision)
        #expect(log.all == [.polling(reason: "no buffer"), .polling(reason: "another reason")])
        #expect(provider.counters.reconnects == 0)
    }

    @Test(
        "IIO error kinds map to the documented provider error kinds",
        arguments: [
            (IIOError.Kind.invalidValue, MotionProviderError.Kind.invalidData), (.permissionDenied, .permissionDenied),
            (.io, .io), (.unsupported, .unsupported), (.notFound, .notFound), (.deviceLost, .notFound),
        ])
    func errorKinds(kind: IIOError.Kind, expected: MotionProviderError.Kind) {
        #expect(LinuxIIOMotionProvider.kind(of: IIOError(kind, path: "/x", "y")) == expected)
    }

    @Test("a clock for records without a timestamp channel announces the timing with the first samples, once")
    func hostClockAnnouncesOnce() {
        var clock = SampleClock(deviceTimestamps: false, rate: 50)
        var batch: [MotionSample] = []
        #expect(!clock.stamp(&batch, from: 0, readAt: 10), "nothing read, nothing to announce")
        batch = [MotionSample(timestamp: 0, ax: 0, ay: 0, az: 1)]
        #expect(clock.stamp(&batch, from: 0, readAt: 10))
        batch.append(MotionSample(timestamp: 0, ax: 0, ay: 0, az: 1))
        #expect(!clock.stamp(&batch, from: 1, readAt: 10.02))
    }

    @Test("three stalls within 10 minutes make the device polled; stalls 9 minutes apart each do not")
    func stallWindow() {
        let apart = LinuxIIOMotionProvider.Supervision()
        #expect(!apart.recordStall(at: 0))
        #expect(!apart.recordStall(at: 540))
        #expect(!apart.recordStall(at: 1080), "the first is 18 minutes old: two within the window")
        let close = LinuxIIOMotionProvider.Supervision()
        #expect(!close.recordStall(at: 0))
        #expect(!close.recordStall(at: 100))
        #expect(close.recordStall(at: 599))
    }

    @Test("a polled batch holds latency worth of samples, from 1 to 100000, for any rate (1e300 trapped)")
    func polledBatchSize() {
        #expect(PolledCapture.samplesPerBatch(rate: 100, latency: 0.02) == 2)
        #expect(PolledCapture.samplesPerBatch(rate: 1, latency: 0.02) == 1)
        #expect(PolledCapture.samplesPerBatch(rate: 1e-320, latency: 0.02) == 1)
        #expect(PolledCapture.samplesPerBatch(rate: 1e300, latency: 0.02) == 100_000)
        #expect(PolledCapture.samplesPerBatch(rate: .infinity, latency: 0.02) == 100_000)
        #expect(PolledCapture.samplesPerBatch(rate: .nan, latency: 0.02) == 1)
        #expect(PolledCapture.samplesPerBatch(rate: 100, latency: .nan) == 1)
    }

    @Test("the stall timeout is 5 s, the delivery deadline or ten watermark periods, whichever is longest")
    func stallTimeout() {
        // 100 Hz, 20 ms latency: watermark 2 records, 20 ms; ten of them and the 2 s deadline are below 5 s.
        #expect(BufferedCapture.stallTimeout(rate: 100, latency: 0.02, deliveryDeadline: 2) == 5)
        #expect(BufferedCapture.stallTimeout(rate: 100, latency: 0.02, deliveryDeadline: 7) == 7)
        // 0.5 Hz: a watermark of one record takes 2 s.
        #expect(BufferedCapture.stallTimeout(rate: 0.5, latency: 0.02, deliveryDeadline: 2) == 20)
        // 50 Hz with 1 s latency: 50 records, 1 s.
        #expect(BufferedCapture.stallTimeout(rate: 50, latency: 1, deliveryDeadline: 2) == 10)
    }

    @Test(
        "a raw read failing with ENODEV or ENXIO, or with the sysfs directory gone, is a lost device at once",
        arguments: [(ENODEV, false), (ENXIO, false), (EIO, true), (EAGAIN, true)])
    func lostAtOnce(code: Int32, gone: Bool) {
        var failures = RawReadFailures()
        guard case .lost(let why) = failures.failed(code, deviceGone: gone) else {
            Issue.record("errno \(code), gone \(gone): not lost")
            return
        }
        #expect(why.hasPrefix(String(cString: strerror(code))))
    }

    @Test(
        "other raw read failures skip a sample; only enough of them in a row make the device lost",
        arguments: [EIO, EAGAIN, ETIMEDOUT, EISDIR, 0])
    func lostAfterARow(code: Int32) {
        var failures = RawReadFailures()
        for _ in 1..<RawReadFailures.limit - 1 { #expect(failures.failed(code, deviceGone: false) == .skip) }
        failures.succeeded()  // a whole sample in between starts the count again
        for _ in 1..<RawReadFailures.limit { #expect(failures.failed(code, deviceGone: false) == .skip) }
        let what = code == 0 ? "read nothing" : String(cString: strerror(code))
        #expect(
            failures.failed(code, deviceGone: false)
                == .lost("\(what) (\(RawReadFailures.limit) reads in a row failed)"))
    }

    @Test("a wake signal whose eventfd cannot be made fails at construction, naming eventfd and the reason")
    func eventfdFailure() {
        #expect {
            _ = try WakeSignal(creating: {
                errno = EMFILE
                return -1
            })
        } throws: { error in
            guard let error = error as? IIOError else { return false }
            return error.kind == .io && error.message.contains("eventfd")
                && error.message.contains(String(cString: strerror(EMFILE)))
        }
        let signal = try? WakeSignal.make()
        #expect(signal.map { $0.fd >= 0 } == true)
        signal?.fire()
        #expect(signal?.fired == true)
    }
}
