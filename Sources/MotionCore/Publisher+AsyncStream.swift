extension Publisher where Failure == Never, Output: Sendable {
    /// Bridges a never-failing publisher into an `AsyncStream` that ends when the publisher completes.
    ///
    /// The stream buffers without bound so that no value is lost; termination cancels the subscription.
    public func asyncStream() -> AsyncStream<Output> {
        AsyncStream { continuation in
            // AnyCancellable.cancel() is thread-safe and idempotent, which is all the termination handler needs.
            nonisolated(unsafe) let subscription = self.sink(
                receiveCompletion: { _ in continuation.finish() },
                receiveValue: { continuation.yield($0) }
            )
            continuation.onTermination = { _ in subscription.cancel() }
        }
    }
}
