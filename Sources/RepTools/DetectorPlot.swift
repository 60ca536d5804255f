import MotionCore
import RepDetection
import RepProtocol

/// Draws a recording as an SVG picture: the three axes; the tracked period, the periodicity and, inside sets, how
/// well each moment matched the set's cycle template, with the thresholds; every matched cycle (rep) and the sets
/// with their final and live counts; moments judged as walking — what an engineer looks at to see why a set was
/// miscounted. Each rep of a set's final count is marked with its measured window (brown) and its mean concentric
/// velocity (placement `bar`) or its eccentric and concentric durations, and the set with its velocity loss.
public enum DetectorPlot {
    /// Runs the detector over `samples` and returns the picture and the events it found.
    public static func render(
        samples: [MotionSample], title: String, configuration: RepDetectorConfiguration = .init(),
        trueReps: Int? = nil, width: Double = 1400
    ) -> (svg: String, events: [WorkoutEvent]) {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        // Per grid point: time, period (s), periodicity, match (nan outside sets), walking-like.
        var trace: [(t: Double, period: Double, periodicity: Double, match: Double, walking: Bool, exercise: Double)] =
            []
        trace.reserveCapacity(samples.count / 2)
        for sample in samples {
            let before = detector.gridPoints
            detector.process(sample, into: &events)
            if detector.gridPoints != before {
                let walking = detector.isWalking
                trace.append(
                    (
                        sample.timestamp, detector.period, detector.periodicity, detector.match ?? .nan, walking,
                        detector.exerciseLikelihood ?? .nan
                    ))
            }
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
        let reps = events.compactMap { event -> RepEvent? in
            if case .rep(let r) = event { return r } else { return nil }
        }
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
                    svg +=
                        "<rect x=\"\(n(x(start)))\" y=\"\(n(y0))\" width=\"\(n(max(1, x(s.timestamp) - x(start))))\" "
                    svg += "height=\"\(n(2 * panel + gap))\" fill=\"#fff3c4\"/>\n"
                    let live = s.liveRepCount.map { " (live \($0))" } ?? ""
                    var loss = ""
                    if let l = s.quality?.velocityLoss, let f = s.quality?.fastestMeanVelocity {
                        loss = ", fastest \(format(f, decimals: 2)) m/s, loss \(format(l, decimals: 0)) %"
                    } else if let why = s.quality?.velocityUnavailable {
                        loss = ", no velocity: \(escape(why))"
                    }
                    svg +=
                        "<text x=\"\(n(x(start) + 3))\" y=\"\(n(y0 + 14))\">set \(s.setNumber): \(s.repCount)\(live)\(loss)</text>\n"
                    // Each measured rep: its window, and its mean concentric velocity (bar) or tempo.
                    for q in s.quality?.reps ?? [] {
                        let label =
                            q.velocity.map { "\(format($0.meanConcentric, decimals: 2)) m/s" }
                            ?? "\(q.eccentric.map { "e" + format($0, decimals: 1) } ?? "")\(q.concentric.map { " c" + format($0, decimals: 1) } ?? "")"
                        svg +=
                            "<rect x=\"\(n(x(q.start)))\" y=\"\(n(y0 + 20))\" width=\"\(n(max(1, x(q.end) - x(q.start) - 1)))\" "
                        svg += "height=\"3\" fill=\"#8c564b\"/>\n"
                        svg +=
                            "<text x=\"\(n((x(q.start) + x(q.end)) / 2))\" y=\"\(n(y0 + 36))\" text-anchor=\"middle\" "
                        svg += "font-size=\"10\" fill=\"#8c564b\">\(label)</text>\n"
                    }
                }
                openSet = nil
            case .rep: break
            }
        }

        // Panel 1: raw axes.
        let raw: [(String, (MotionSample) -> Double)] = [("#d62728", \.ax), ("#2ca02c", \.ay), ("#1f77b4", \.az)]
        let rawValues = samples.flatMap { [$0.ax, $0.ay, $0.az] }
        let rawRange = (rawValues.min() ?? -1, rawValues.max() ?? 1)
        svg += axisFrame(
            top: top, height: panel, left: left, width: width - left - right, range: rawRange,
            label: "g (x red, y green, z blue)")
        for (color, value) in raw {
            svg += polyline(
                samples.map { ($0.timestamp, value($0)) }, color: color, x: x, top: top, height: panel, range: rawRange)
        }

        // Panel 2: periodicity and match (−1…1) with their thresholds; the tracked period (0–max s) in orange.
        let top2 = top + panel + gap
        let range = (-1.0, 1.0)
        let maxPeriod = configuration.maximumRepPeriod
        svg += axisFrame(
            top: top2, height: panel, left: left, width: width - left - right, range: range,
            label:
                "periodicity (black), match in a set (purple), thresholds (dashed); period (orange, 0–\(format(maxPeriod, decimals: 0)) s); | matched cycles; grey: walking\(configuration.minimumExerciseLikelihood > 0 ? "; exercise gate 0–1 (green)" : "")"
        )
        for (value, color) in [(configuration.minimumPeriodicity, "#555555"), (configuration.minimumMatch, "#9467bd")] {
            svg += polyline(
                [(t0, value), (t1, value)], color: color, x: x, top: top2, height: panel, range: range, dashed: true)
        }
        svg += polyline(
            trace.map { ($0.t, 2 * $0.period / maxPeriod - 1) }, color: "#ff7f0e", x: x, top: top2, height: panel,
            range: range)
        svg += polyline(
            trace.map { ($0.t, $0.periodicity) }, color: "#000000", x: x, top: top2, height: panel, range: range)
        // The exercise gate (when on): its probability, 0–1 drawn over −1…1, where it judged; its threshold dashed.
        if configuration.minimumExerciseLikelihood > 0 {
            let threshold = 2 * configuration.minimumExerciseLikelihood - 1
            svg += polyline(
                [(t0, threshold), (t1, threshold)], color: "#2ca02c", x: x, top: top2, height: panel, range: range,
                dashed: true)
            var judged: [(Double, Double)] = []
            for point in trace {
                if point.exercise.isNaN {
                    if !judged.isEmpty {
                        svg += polyline(judged, color: "#2ca02c", x: x, top: top2, height: panel, range: range)
                    }
                    judged.removeAll()
                } else {
                    judged.append((point.t, 2 * point.exercise - 1))
                }
            }
            if !judged.isEmpty {
                svg += polyline(judged, color: "#2ca02c", x: x, top: top2, height: panel, range: range)
            }
        }
        var inSet: [(Double, Double)] = []
        for point in trace {
            if point.match.isNaN {
                if !inSet.isEmpty {
                    svg += polyline(inSet, color: "#9467bd", x: x, top: top2, height: panel, range: range)
                }
                inSet.removeAll()
            } else {
                inSet.append((point.t, point.match))
            }
        }
        if !inSet.isEmpty { svg += polyline(inSet, color: "#9467bd", x: x, top: top2, height: panel, range: range) }
        for point in trace where point.walking {
            svg +=
                "<rect x=\"\(n(x(point.t)))\" y=\"\(n(top2 + panel - 6))\" width=\"2\" height=\"6\" fill=\"#999\"/>\n"
        }
        for rep in reps {
            let px = n(x(rep.timestamp))
            svg +=
                "<line x1=\"\(px)\" x2=\"\(px)\" y1=\"\(n(top))\" y2=\"\(n(top2 + panel))\" stroke=\"#e377c2\" stroke-width=\"1.2\"/>\n"
            svg +=
                "<text x=\"\(px)\" y=\"\(n(top2 + panel + 14))\" text-anchor=\"middle\" font-size=\"10\">\(rep.repInSet)</text>\n"
        }
        svg +=
            "<text x=\"\(n(left))\" y=\"\(n(height - 6))\">time (s): \(format(t0, decimals: 1)) … \(format(t1, decimals: 1))</text>\n"
        svg += "</svg>\n"
        return (svg, events)
    }

    /// The detector's view at every grid point (25 per second) as CSV: `t,period_s,periodicity,match,walking`
    /// (match empty outside sets, walking 1 where the rhythm was judged walking), then one `# event` line per event.
    public static func traceCSV(samples: [MotionSample], configuration: RepDetectorConfiguration = .init()) -> String {
        var detector = RepDetector(configuration: configuration)
        var events: [WorkoutEvent] = []
        var out = "t,period_s,periodicity,match,walking,likeness,exercise,"
        out += ExerciseGateFeatures.names.map { "gate_" + $0 }.joined(separator: ",") + "\n"
        for sample in samples {
            let before = detector.gridPoints
            let seen = events.count
            detector.process(sample, into: &events)
            if detector.gridPoints != before {
                let walking = detector.isWalking
                out += "\(format(sample.timestamp, decimals: 2)),\(format(detector.period, decimals: 2)),"
                out +=
                    "\(format(detector.periodicity, decimals: 3)),\(detector.match.map { format($0, decimals: 3) } ?? ""),"
                out += walking ? "1," : "0,"
                out += detector.walkingLikeness.map { format($0, decimals: 2) } ?? ""
                out += "," + (detector.exerciseLikelihood.map { format($0, decimals: 3) } ?? "")
                let features = detector.gateFeatures
                for n in 0..<ExerciseGateFeatures.count {
                    out += "," + (features.map { format($0[n], decimals: 4) } ?? "")
                }
                out += "\n"
            }
            for event in events[seen...] { out += "# \(event)\n" }
        }
        let seen = events.count
        detector.finish(into: &events)
        for event in events[seen...] { out += "# \(event)\n" }
        return out
    }

    private static func axisFrame(
        top: Double, height: Double, left: Double, width: Double, range: (Double, Double), label: String
    ) -> String {
        var s =
            "<rect x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"none\" stroke=\"#999\"/>\n"
        s += "<text x=\"\(n(left + 4))\" y=\"\(n(top - 6))\">\(escape(label))</text>\n"
        s +=
            "<text x=\"\(n(left - 4))\" y=\"\(n(top + 10))\" text-anchor=\"end\">\(format(range.1, decimals: 2))</text>\n"
        s +=
            "<text x=\"\(n(left - 4))\" y=\"\(n(top + height))\" text-anchor=\"end\">\(format(range.0, decimals: 2))</text>\n"
        return s
    }

    private static func polyline(
        _ points: [(Double, Double)], color: String, x: (Double) -> Double, top: Double, height: Double,
        range: (Double, Double), dashed: Bool = false
    ) -> String {
        let span = max(range.1 - range.0, 1e-9)
        let stride = max(1, points.count / 5000)
        let dash = dashed ? " stroke-dasharray=\"4 3\"" : ""
        var s = "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1\"\(dash) points=\""
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
