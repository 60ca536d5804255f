import Testing

@testable import RepDaemon

@Suite("the log line about samples the detector ignored")
struct IgnoredSamplesLogTests {
    @Test("said at once the first time, then at most once a minute with the samples since")
    func rateLimited() throws {
        var log = IgnoredSamplesLog()
        let start = ContinuousClock.now
        #expect(log.line(0, now: start) == nil, "nothing ignored")
        let first = log.line(3, now: start) ?? "none"
        #expect(first.hasPrefix("the detector ignored 3 samples (3 since the start or the last reset)"), "\(first)")
        #expect(log.line(5, now: start + .seconds(59)) == nil, "less than a minute later")
        let second = log.line(5, now: start + .seconds(61)) ?? "none"
        #expect(second.hasPrefix("the detector ignored 2 samples (5 since"), "\(second)")
        #expect(log.line(5, now: start + .seconds(200)) == nil, "nothing new")
    }

    @Test("after a reset (the count back at 0) it counts from 0, never a negative number")
    func afterReset() throws {
        var log = IgnoredSamplesLog()
        let start = ContinuousClock.now
        #expect(log.line(3, now: start) != nil)
        #expect(log.line(0, now: start + .seconds(120)) == nil, "a reset ignored nothing")
        let line = log.line(2, now: start + .seconds(240)) ?? "none"
        #expect(line.hasPrefix("the detector ignored 2 samples (2 since"), "\(line)")
    }
}
