/// The open set's events that wait. With the exercise gate on, a rep at which the gate's judgements of the set would
/// not keep it if it ended then (fewer than 4, or dismissing it) is held; the held reps go out together (each with its
/// own time) at the set's fourth judgement when the four keep it, at the first rep whose judgements keep the set, or
/// when the set ends kept, and when the set is dismissed at its end they are dropped: its `setEnded` then takes back
/// only the reps it sent (docs/DETECTOR.md, "Live reps the set's end would take back" and "A set's first reps wait for
/// its first judgements").
///
/// Appending to the held events allocates only when a set holds more events than any before (32 are reserved).
struct HeldSetEvents {
    /// The events held, in order.
    private var events: [WorkoutEvent] = []
    /// Whether events are held now (else they go out as they come).
    private(set) var holding = false
    /// `rep` events held now.
    private(set) var heldReps = 0
    /// `rep` events of the set sent.
    private(set) var sentReps = 0

    init() { events.reserveCapacity(32) }

    /// A set starts: nothing is held, and its events go out as they come.
    mutating func startSet() {
        events.removeAll(keepingCapacity: true)
        holding = false
        heldReps = 0
        sentReps = 0
    }

    /// Sends `event` (appends it to `out`), or holds it.
    mutating func emit(_ event: WorkoutEvent, into out: inout [WorkoutEvent]) {
        if holding {
            events.append(event)
            if case .rep = event { heldReps += 1 }
        } else {
            send(event, into: &out)
        }
    }

    /// Holds the events that come from now on.
    mutating func hold() { holding = true }

    /// Sends the events held, in order, and the later ones as they come.
    mutating func release(into out: inout [WorkoutEvent]) {
        holding = false
        for event in events { send(event, into: &out) }
        events.removeAll(keepingCapacity: true)
        heldReps = 0
    }

    /// Forgets the events held (a dismissed set's).
    mutating func drop() {
        events.removeAll(keepingCapacity: true)
        heldReps = 0
    }

    private mutating func send(_ event: WorkoutEvent, into out: inout [WorkoutEvent]) {
        if case .rep = event { sentReps += 1 }
        out.append(event)
    }
}
