/// What went wrong with an IIO device, with where: the device, the sysfs attribute or file, and what to do.
public struct IIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The broad kind, so callers can react (e.g. lost vs. misconfigured).
    public enum Kind: String, Sendable, Equatable {
        /// No suitable device.
        case notFound
        /// The user may not open or write a file.
        case permissionDenied
        /// A value or channel type repd cannot use.
        case unsupported
        /// A sysfs value that does not parse.
        case invalidValue
        /// An I/O error (including the device going away).
        case io
        /// The device disappeared (ENODEV/EIO while reading).
        case deviceLost
    }

    /// The broad kind.
    public var kind: Kind
    /// The file or device concerned.
    public var path: String
    /// What happened, and what fixes it when that is known.
    public var message: String

    /// Creates the error.
    public init(_ kind: Kind, path: String, _ message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    /// `path: message`, or the message alone when there is no path.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
