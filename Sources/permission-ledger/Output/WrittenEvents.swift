import PermissionLedger

/// Which events of an export have reached standard output, so that an export cut short by a full disk can say
/// how far it got: the `seq` of each event given to ``Output`` with the byte count at its end, until its bytes
/// are written.
struct WrittenEvents {
    /// The last event whose line was written whole.
    private(set) var last: UInt64?
    /// The events given but perhaps not yet written: their `seq` and ``Output/given`` after their line.
    private var pending: [(seq: UInt64, end: Int)] = []
    private var firstPending = 0

    /// Writes `event` as a line of JSON.
    mutating func write(_ event: RecordedEvent, to out: inout Output) throws(OutputFailure) {
        let line = EventJSON.encode(event) + "\n"
        pending.append((event.seq, out.given + line.utf8.count))
        defer { settle(upTo: out.written) }
        try out.write(line)
    }

    /// Moves the events whose lines end within the first `written` bytes from pending to ``last``.
    private mutating func settle(upTo written: Int) {
        while firstPending < pending.count, pending[firstPending].end <= written {
            last = pending[firstPending].seq
            firstPending += 1
        }
        if firstPending > 4096 {
            pending.removeFirst(firstPending)
            firstPending = 0
        }
    }

    /// What was written of the export once `written` bytes reached standard output.
    mutating func said(upTo written: Int) -> String {
        settle(upTo: written)
        guard let last else { return "no event was written" }
        return "the events up to seq \(last) were written, not those after it"
    }
}
