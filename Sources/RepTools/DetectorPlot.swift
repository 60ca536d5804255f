import MotionCore
import RepDetection
import RepProtocol

/// Draws a recording as an SVG picture: the three axes, the detector's signal with its threshold, every counted
/// rep, the sets, and each moment a set could have started (green: it did; red: the cycles were in rhythm but did
/// not look alike enough, with their periodicity, or moved like steps, marked "steps" with their step similarity)
/// — what an engineer looks at to see why a set was miscounted.
public enum DetectorPlot {
    /// Runs the detector over `samples` and returns the picture and the events it found.
    public static func render(
        samples: [MotionSample], title: String, configuration: RepDetectorConfiguration = .init(),
        trueReps: Int? = nil, width: Double = 1400
    ) -> (svg: String, events: [WorkoutEvent]) {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var signal: [(Double, Double, Double)] = []
        var candidates: [SetCandidate] = []
        signal.reserveCapacity(samples.count)
        for sample in samples {
            let before = detector.setCandidates
            detector.process(sample, into: &events)
            signal.append((sample.timestamp, detector.signal, detector.threshold))
            if detector.setCandidates != before, let candidate = detector.lastSetCandidate { candidates.append(candidate) }
        }
        detector.finish(into: &events)

        let t0 = samples.first?.timestamp ?? 0
        let t1 = max(samples.last?.timestamp ?? 1, t0 + 1e-3)
        let left = 60.0, right = 20.0, panel = 220.0, gap = 50.0, top = 50.0
        let height = top + 2 * panel + gap + 40
        func x(_ t: Double) -> Double { left + (min(max(t, t0), t1) - t0) / (t1 - t0) * (width - left - right) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" \
            font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>

            """
        let reps = events.compactMap { event -> RepEvent? in if case .rep(let r) = event { return r } else { return nil } }
        var heading = "\(escape(title)) — counted \(reps.count) reps"
        if let trueReps { heading += " (true \(trueReps))" }
        svg += "<text x=\"\(n(left))\" y=\"24\" font-size=\"16\">\(heading)</text>\n"

        // Sets: shaded spans from their start to their end.
        var openSet: Double?
        for event in events {
            switch event {
            case .setStarted(let s): openSet = s.timestamp
            case .setEnded(let s):
                if let start = openSet {
                    let y0 = top
                    svg += "<rect x=\"\(n(x(start)))\" y=\"\(n(y0))\" width=\"\(n(max(1, x(s.timestamp) - x(start))))\" "
                    svg += "height=\"\(n(2 * panel + gap))\" fill=\"#fff3c4\"/>\n"
                    svg += "<text x=\"\(n(x(start) + 3))\" y=\"\(n(y0 + 14))\">set \(s.setNumber): \(s.repCount)</text>\n"
                }
                openSet = nil
            case .rep: break
            }
        }

        // Panel 1: raw axes.
        let raw: [(String, (MotionSample) -> Double)] = [("#d62728", \.ax), ("#2ca02c", \.ay), ("#1f77b4", \.az)]
        let rawValues = samples.flatMap { [$0.ax, $0.ay, $0.az] }
        let rawRange = (rawValues.min() ?? -1, rawValues.max() ?? 1)
        svg += axisFrame(top: top, height: panel, left: left, width: width - left - right, range: rawRange, label: "g (x red, y green, z blue)")
        for (color, value) in raw {
            svg += polyline(samples.map { ($0.timestamp, value($0)) }, color: color, x: x, top: top, height: panel, range: rawRange)
        }

        // Panel 2: the detector's signal and threshold.
        let top2 = top + panel + gap
        let extent = max(signal.map { max(abs($0.1), $0.2) }.max() ?? 0.1, 1e-3)
        let range = (-extent, extent)
        svg += axisFrame(top: top2, height: panel, left: left, width: width - left - right, range: range, label: "signal along the motion axis (g), ±threshold; ▲ cycles in rhythm, with their periodicity (green: a set started; steps: walking)")
        svg += polyline(signal.map { ($0.0, $0.2) }, color: "#17becf", x: x, top: top2, height: panel, range: range)
        svg += polyline(signal.map { ($0.0, -$0.2) }, color: "#17becf", x: x, top: top2, height: panel, range: range)
        svg += polyline(signal.map { ($0.0, $0.1) }, color: "#000000", x: x, top: top2, height: panel, range: range)
        for rep in reps {
            let px = n(x(rep.timestamp))
            svg += "<line x1=\"\(px)\" x2=\"\(px)\" y1=\"\(n(top))\" y2=\"\(n(top2 + panel))\" stroke=\"#e377c2\" stroke-width=\"1.2\"/>\n"
            svg += "<text x=\"\(px)\" y=\"\(n(top2 + panel + 14))\" text-anchor=\"middle\" font-size=\"10\">\(rep.repInSet)</text>\n"
        }
        // Moments when cycles were in rhythm: green where a set started, red where the cycles did not look alike
        // enough (periodicity below minimum_periodicity), each with its periodicity; or red with "steps" and the
        // step similarity where they moved up and down like walking (at or above maximum_step_similarity).
        for candidate in candidates {
            let px = n(x(candidate.timestamp))
            let color = candidate.started ? "#2ca02c" : "#d62728"
            var value = candidate.periodicity.map { format($0, decimals: 2) } ?? "–"
            if candidate.refusedAsWalking, let steps = candidate.stepSimilarity {
                value = "steps " + format(steps, decimals: 2)
            }
            svg += "<path class=\"candidate\" d=\"M\(px),\(n(top2 + panel - 10)) l-5,10 l10,0 z\" fill=\"\(color)\"/>\n"
            svg += "<text x=\"\(px)\" y=\"\(n(top2 + panel - 13))\" text-anchor=\"middle\" font-size=\"10\" "
            svg += "fill=\"\(color)\">\(value)</text>\n"
        }
        svg += "<text x=\"\(n(left))\" y=\"\(n(height - 6))\">time (s): \(format(t0, decimals: 1)) … \(format(t1, decimals: 1))</text>\n"
        svg += "</svg>\n"
        return (svg, events)
    }

    private static func axisFrame(top: Double, height: Double, left: Double, width: Double, range: (Double, Double), label: String) -> String {
        var s = "<rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"none\" stroke=\"#999\"/>\n"
        s += "<text x=\"\(n(left + 4))\" y=\"\(n(top - 6))\">\(escape(label))</text>\n"
        s += "<text x=\"\(n(left - 4))\" y=\"\(n(top + 10))\" text-anchor=\"end\">\(format(range.1, decimals: 2))</text>\n"
        s += "<text x=\"\(n(left - 4))\" y=\"\(n(top + height))\" text-anchor=\"end\">\(format(range.0, decimals: 2))</text>\n"
        return s
    }

    private static func polyline(
        _ points: [(Double, Double)], color: String, x: (Double) -> Double, top: Double, height: Double,
        range: (Double, Double)
    ) -> String {
        let span = max(range.1 - range.0, 1e-9)
        let stride = max(1, points.count / 5000)
        var s = "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1\" points=\""
        var index = 0
        while index < points.count {
            let (t, v) = points[index]
            let y = top + height - (min(max(v, range.0), range.1) - range.0) / span * height
            s += "\(n(x(t))),\(n(y)) "
            index += stride
        }
        return s + "\"/>\n"
    }

    private static func n(_ value: Double) -> String { format(value, decimals: 1) }

    private static func escape(_ s: String) -> String {
        s.replacingAll("&", "&amp;").replacingAll("<", "&lt;").replacingAll(">", "&gt;")
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
