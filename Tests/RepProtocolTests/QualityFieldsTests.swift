import RepDetection
import RepProtocol
import Testing

@Suite("quality fields on rep and set_end lines")
struct QualityFieldsTests {
    private let quality = RepQuality(
        start: 10, end: 13.5, startsAtTop: true, concentric: 0.8123, eccentric: 1.2, pauseBottom: 0.1, pauseTop: nil,
        velocity: RepVelocity(rangeOfMotion: 0.5012, meanConcentric: 0.6234, peakConcentric: 1.0491, loss: 12.34))

    @Test("a rep measured on the bar carries tempo, range of motion, velocities and its loss after the old fields")
    func barRep() {
        let rep = RepEvent(
            setNumber: 1, repInSet: 2, totalReps: 2, timestamp: 13.6, duration: 3.5, amplitude: 0.4, quality: quality)
        let line = ServerMessage.event(.rep(rep), wall: 100)
        #expect(
            line.hasPrefix(
                "{\"type\":\"rep\",\"set\":1,\"rep\":2,\"total\":2,\"t\":13.6,\"wall\":100,\"duration\":3.5,\"amplitude\":0.4,"
            ))
        #expect(
            line.contains(
                "\"start_t\":10,\"end_t\":13.5,\"starts_at\":\"top\",\"eccentric_s\":1.2,\"concentric_s\":0.812,\"pause_bottom_s\":0.1,"
            ))
        #expect(
            line.contains(
                "\"rom_m\":0.501,\"mean_velocity_m_s\":0.623,\"peak_velocity_m_s\":1.049,\"velocity_loss_pct\":12.3}"))
        #expect(!line.contains("pause_top_s"), "a set's first rep has no pause before it")
    }

    @Test("a rep without velocities says why, and a wrist rep has tempo only")
    func noVelocity() {
        var slow = quality
        slow.velocity = nil
        slow.velocityUnavailable = "sample rate too low"
        let line = ServerMessage.event(
            .rep(
                RepEvent(
                    setNumber: 1, repInSet: 1, totalReps: 1, timestamp: 1, duration: 1, amplitude: 1, quality: slow)),
            wall: 0)
        #expect(line.contains("\"velocity_unavailable\":\"sample rate too low\""))
        #expect(!line.contains("mean_velocity_m_s"))
        var wrist = quality
        wrist.velocity = nil
        let tempo = ServerMessage.event(
            .rep(
                RepEvent(
                    setNumber: 1, repInSet: 1, totalReps: 1, timestamp: 1, duration: 1, amplitude: 1, quality: wrist)),
            wall: 0)
        #expect(tempo.contains("\"concentric_s\":0.812") && !tempo.contains("velocity"))
        let bare = ServerMessage.event(
            .rep(RepEvent(setNumber: 1, repInSet: 1, totalReps: 1, timestamp: 1, duration: 1, amplitude: 1)), wall: 0)
        #expect(
            bare
                == "{\"type\":\"rep\",\"set\":1,\"rep\":1,\"total\":1,\"t\":1,\"wall\":0,\"duration\":1,\"amplitude\":1}\n"
        )
    }

    @Test("set_end carries the fastest rep's velocity, the set's velocity loss and every rep's quality")
    func setEnd() {
        var second = quality
        second.velocity = RepVelocity(rangeOfMotion: 0.5, meanConcentric: 0.5, peakConcentric: 0.9)
        let set = SetQuality(reps: [quality, second])
        #expect(set.fastestMeanVelocity == 0.6234)
        #expect(abs((set.velocityLoss ?? 0) - 19.79) < 0.01)
        let line = ServerMessage.event(
            .setEnded(SetEvent(setNumber: 1, timestamp: 20, repCount: 2, quality: set)), wall: 5)
        #expect(
            line.hasPrefix(
                "{\"type\":\"set_end\",\"set\":1,\"reps\":2,\"t\":20,\"wall\":5,\"fastest_mean_velocity_m_s\":0.623,\"velocity_loss_pct\":19.8,\"quality\":[{\"start_t\":10,"
            ))
        #expect(line.contains("\"mean_velocity_m_s\":0.5,\"peak_velocity_m_s\":0.9,\"velocity_loss_pct\":19.8}]}"))
    }
}
