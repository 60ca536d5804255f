import MotionCore

/// Samples at a steady rate with a recognizable value in each (ax = index).
func rampSamples(count: Int, interval: Double = 0.01, start: Double = 0) -> [MotionSample] {
    (0..<count).map { MotionSample(timestamp: start + Double($0) * interval, ax: Double($0), ay: 0, az: 1) }
}
