import MotionCore

/// Where the timestamps of a capture's samples come from.
public struct SampleTiming: Sendable, Equatable, CustomStringConvertible {
    /// The clock behind `MotionSample.timestamp`.
    public enum Source: String, Sendable, Equatable {
        /// The device's `in_timestamp` channel (on CLOCK_MONOTONIC when `current_timestamp_clock` could be set).
        case device
        /// repd's CLOCK_MONOTONIC at read time, spread back over the records of one read at the sample rate (polling,
        /// no timestamp channel, or one that does not advance).
        case host
    }

    /// The clock behind the samples.
    public var source: Source
    /// Why, in a sentence for the log.
    public var reason: String

    /// `timestamps: SOURCE (reason)`, for the log.
    public var description: String { "timestamps: \(source.rawValue) (\(reason))" }
}

/// Decides, from the first records of a buffered capture, whether the device's timestamps can be used, and times the
/// samples on the host when they cannot.
///
/// Some drivers fill `in_timestamp` only from their own interrupt (kxcjk1013 under another trigger: always 0); the
/// detector drops every sample whose time does not advance, so such a device would count nothing. The first
/// `recordsToJudge` records are held back (a few tens of ms) until they show whether the channel advances: every
/// timestamp above 0 and above the one before. If not, those and all later samples get host times.
struct SampleClock {
    /// Records looked at before the device's timestamps are trusted.
    static let recordsToJudge = 4

    private(set) var source: SampleTiming.Source?
    private let period: Double
    private var judged = 0
    private var lastDevice = -Double.infinity
    private var lastHost = -Double.infinity
    /// Whether a call of `stamp` has returned true (the samples' timing was announced).
    private var announced = false
    /// The device's first few timestamps, for the log when they are refused.
    private(set) var seen: [Double] = []

    /// A clock for records at `rate` Hz that carry a timestamp channel or not.
    init(deviceTimestamps: Bool, rate: Double) {
        source = deviceTimestamps ? nil : .host
        period = 1 / max(rate, 0.1)
    }

    /// Whether samples may be delivered (false while the first records are being judged).
    var decided: Bool { source != nil }

    /// Times `samples[start...]`, the records of one read that ended at `now` (CLOCK_MONOTONIC seconds). While
    /// undecided, every sample from index 0 is held by the caller; when the decision is `host`, they are all retimed.
    /// Returns true once: at the first call after which samples may be delivered (the call that made the decision,
    /// or, without a timestamp channel, the first call with samples), when the caller announces the timing and the
    /// state.
    mutating func stamp(_ samples: inout [MotionSample], from start: Int, readAt now: Double) -> Bool {
        guard start < samples.count else { return false }
        switch source {
        case .device:
            break
        case .host:
            spread(&samples, from: start, endingAt: now)
        case nil:
            judge(&samples, from: start, readAt: now)
        }
        guard decided, !announced else { return false }
        announced = true
        return true
    }

    /// Looks at the device timestamps of `samples[start...]`: one that is not above 0 and above the one before
    /// decides `host` (and retimes every held sample); `recordsToJudge` good ones decide `device`.
    private mutating func judge(_ samples: inout [MotionSample], from start: Int, readAt now: Double) {
        for index in start..<samples.count {
            let t = samples[index].timestamp
            if seen.count < Self.recordsToJudge { seen.append(t) }
            if !(t > 0 && t > lastDevice) {
                source = .host
                spread(&samples, from: 0, endingAt: now)
                return
            }
            lastDevice = t
            judged += 1
        }
        if judged >= Self.recordsToJudge { source = .device }
    }

    /// Gives `samples[start...]` times ending at `now`, one period apart, and always after the last time given.
    private mutating func spread(_ samples: inout [MotionSample], from start: Int, endingAt now: Double) {
        let last = samples.count - 1
        for index in start...last {
            let t = max(now - Double(last - index) * period, lastHost + 1e-6)
            samples[index].timestamp = t
            lastHost = t
        }
    }
}
