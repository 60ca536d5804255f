#if canImport(Glibc)
    import Glibc
#endif

/// CLOCK_MONOTONIC in seconds: the clock repd captures on (`current_timestamp_clock` = `monotonic`) and times
/// polled or host-timed samples with. Unlike the wall clock, an NTP or RTC step never moves it backwards. The one
/// monotonic clock for repd, repctl and repd-bench.
public func monotonicNow() -> Double { seconds(CLOCK_MONOTONIC) }

private func seconds(_ clock: clockid_t) -> Double {
    var now = timespec()
    clock_gettime(clock, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
