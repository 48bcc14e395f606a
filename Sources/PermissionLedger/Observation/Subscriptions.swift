import Foundation
internal import LMDB
import PermissionModel

// Subscriptions read the log itself, a page at a time, and wait only when they have read all of it.
// Nothing is buffered per subscriber beyond one page, so a slow subscriber costs writers nothing and its
// memory stays bounded; catching up and continuing live are the same loop, so there is no switch-over
// at which an event could be missed or seen twice.

extension Ledger {
    /// Every event after `seq`, in log order, and then every event appended later, as it is committed.
    ///
    /// The sequence never ends on its own; it ends (returns `nil`) when the task iterating it is cancelled.
    /// Events appended by this process wake it at once, and appear only once they are durable; events
    /// appended by other processes are found within `pollInterval`.
    ///
    /// ```swift
    /// for try await event in ledger.events(after: lastSeen) {
    ///     print(event.seq, event.type.rawValue)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - seq: the last `seq` already seen; `0` starts at the beginning of the log.
    ///   - subject: only the events of this subject (read through the subject index).
    ///   - pollInterval: how often to look for events written by other processes.
    public func events(after seq: UInt64 = 0, subject: String? = nil, pollInterval: Duration = .seconds(1)) -> LedgerEvents {
        LedgerEvents(ledger: self, after: seq, subject: subject, pollInterval: pollInterval)
    }

    /// The state of question `id` after each of its events, starting with its `question.asked` (or, when
    /// it has not been asked yet, from the moment it is), up to and including its final state.
    ///
    /// The sequence ends after the question is approved, denied, canceled or has failed. An expired
    /// question may still be answered late, so the sequence goes on after `.expired`.
    /// Each state is the question's as of its event: a pending question whose `expiresAt` had passed
    /// by then is reported `.expired`. An erasure of its subject's that erases the question's values is
    /// reported too, once, as of the erasure: the same state, its values ``Erasable/erased(_:)``.
    ///
    /// - Parameters:
    ///   - id: the question's id.
    ///   - pollInterval: how often to look for events written by other processes.
    public func questionUpdates(_ id: UUID, pollInterval: Duration = .seconds(1)) -> QuestionUpdates {
        QuestionUpdates(ledger: self, id: id, pollInterval: pollInterval)
    }

    /// `subject`'s known handles now, and again after every event that changes them.
    ///
    /// The first element is the set at the head when iteration starts; later elements come only when
    /// an answer, an observation or an erasure (which makes values erased) changes the set. A time-limited
    /// approval that lapses is not an event: it shows in the next update, or ask
    /// ``LedgerView/knownHandles(subject:)`` with a clock.
    ///
    /// - Parameters:
    ///   - subject: the child (or user) whose handles to follow.
    ///   - pollInterval: how often to look for events written by other processes.
    public func knownHandleUpdates(subject: String, pollInterval: Duration = .seconds(1)) -> KnownHandleUpdates {
        KnownHandleUpdates(ledger: self, subject: subject, pollInterval: pollInterval)
    }

    /// The guardians' responses recorded after `seq`, then each new one as it is recorded: the ledger's
    /// counterpart of PermissionKit's `AskCenter.responses(for:)`.
    ///
    /// - Parameters:
    ///   - subject: only the responses to this subject's questions.
    ///   - seq: the last `seq` already seen; `0` starts at the beginning of the log.
    ///   - pollInterval: how often to look for events written by other processes.
    public func responses(subject: String? = nil, after seq: UInt64 = 0, pollInterval: Duration = .seconds(1)) -> ResponseUpdates {
        ResponseUpdates(events: events(after: seq, subject: subject, pollInterval: pollInterval))
    }

    /// Up to `limit` stored events after `seq` (of `subject` only, when given), in log order, and the
    /// `seq` the page covers the log through: its last event's, or the head's when it reached the end; and
    /// the head, visible or not.
    func page(after seq: UInt64, subject: String?, limit: Int) throws -> (events: [RecordedEvent], through: UInt64, head: UInt64) {
        // Commits of this process still waiting for their flush are not shown yet.
        let limitSeq = watch.visibleLimit
        return try read(retries: Self.readRetries) { view in
            let end = min(view.head.seq, limitSeq ?? .max)
            var events: [RecordedEvent] = []
            if let subject {
                let prefix = Keys.subjectPrefix(subject)
                let cursor = try view.txn.cursor(tables.subjectEvents)
                var entry = try cursor.seek(atOrAfter: prefix + Keys.seq(seq &+ 1))
                while let e = entry, events.count < limit, e.key.count == prefix.count + 8, e.key.starts(with: prefix) {
                    let n = Keys.decodeSeq(e.key)
                    if n > end { break }
                    guard let event = try view.txn.event(tables, seq: n) else {
                        throw LedgerError(.damaged, "event missing from the log", seq: n)
                    }
                    events.append(RecordedEvent(stored: event))
                    entry = try cursor.next()
                }
            } else if seq < end {
                events.reserveCapacity(min(limit, Int(clamping: end - seq)))
                try view.forEachEvent(after: seq, through: min(end, seq + UInt64(limit))) { events.append($0) }
            }
            let through = events.count == limit ? events[limit - 1].seq : max(seq, end)
            return (events, through, view.head.seq)
        }
    }
}
