/// What a motion provider is doing, published so that clients can be told when a sensor is missing or vanishes.
public enum MotionProviderState: Sendable, Equatable {
    /// Created, not started yet.
    case idle
    /// Delivering samples.
    case running
    /// Stopped by `stop()`; `start()` may resume.
    case stopped
    /// The data came to its end (a fixture without `loop`); nothing more will be delivered.
    case finished
    /// The sensor went away (unplugged, driver unbound); the provider is watching for it to return.
    case sensorLost(reason: String)
    /// The sensor came back after `sensorLost` and samples flow again.
    case sensorBack
    /// The provider delivers samples by polling because buffered capture is not usable; `reason` says why.
    case polling(reason: String)
    /// The provider cannot deliver samples; the error says what and where.
    case failed(MotionProviderError)
}

/// Why a provider cannot deliver samples, with enough context for a user to act on it.
public struct MotionProviderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broad kind of failure.
    public enum Kind: String, Sendable, Equatable {
        /// No suitable sensor was found.
        case notFound
        /// The sensor or one of its files may not be opened by this user.
        case permissionDenied
        /// The sensor reports a configuration repd cannot read.
        case unsupported
        /// An I/O error while reading.
        case io
        /// Bad input data (a fixture file, a sysfs value).
        case invalidData
    }

    /// The broad kind of failure.
    public var kind: Kind
    /// A sentence naming what failed and where (device path, file, attribute).
    public var message: String

    /// Creates an error of `kind` with a message that names what failed and where.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message alone (the kind is left out).
    public var description: String { message }
}
