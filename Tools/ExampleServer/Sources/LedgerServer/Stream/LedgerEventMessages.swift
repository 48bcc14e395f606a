import PermissionLedger

extension Ledger {
    /// The events after `seq` (of `subject` only, when given), then each new one as it is committed, as
    /// server-sent event messages; the sequence ends when the ledger closes or the iterating task is cancelled.
    func eventMessages(after seq: UInt64, subject: String?, pollInterval: Duration) -> some AsyncSequence<ServerSentEvent, any Error> & Sendable {
        events(after: seq, subject: subject, pollInterval: pollInterval).map { recorded in
            ServerSentEvent(id: recorded.seq, data: EventJSON.encode(recorded))
        }
    }
}
