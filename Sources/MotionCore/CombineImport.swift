// One place decides which Combine implementation MotionCore speaks: Apple's where it exists, OpenCombine elsewhere.
// It is re-exported so that `import MotionCore` is enough to use `AnyPublisher`, `sink` and friends.
#if canImport(Combine)
    @_exported import Combine
#else
    @_exported @preconcurrency import OpenCombine
#endif
