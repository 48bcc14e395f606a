import Foundation
import LMDB
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
    ///     print(event.seq!, event.type.rawValue)
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
    /// by then is reported `.expired`.
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
    /// an answer or an observation changes the set. A time-limited approval that lapses is not an event:
    /// it shows in the next update, or ask ``LedgerView/knownHandles(subject:)`` with a clock.
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
    /// `seq` the page covers the log through: its last event's, or the head's when it reached the end.
    func page(after seq: UInt64, subject: String?, limit: Int) throws -> (events: [PermissionEvent], through: UInt64) {
        // Commits of this process still waiting for their flush are not shown yet.
        let limitSeq = watch.visibleLimit
        return try read { view in
            let end = min(view.head.seq, limitSeq ?? .max)
            var events: [PermissionEvent] = []
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
                    events.append(event)
                    entry = try cursor.next()
                }
            } else if seq < end {
                events.reserveCapacity(min(limit, Int(clamping: end - seq)))
                try view.forEachEvent(after: seq, through: min(end, seq + UInt64(limit))) { events.append($0) }
            }
            let through = events.count == limit ? events[limit - 1].seq! : max(seq, end)
            return (events, through)
        }
    }
}

/// The events of a ledger from a point on, live: see ``Ledger/events(after:subject:pollInterval:)``.
public struct LedgerEvents: AsyncSequence, Sendable {
    /// Each event comes with its `seq`, `recordedAt` and `hash`.
    public typealias Element = PermissionEvent
    /// Reading the log can throw ``LedgerError``.
    public typealias Failure = any Error

    let ledger: Ledger
    let after: UInt64
    let subject: String?
    let pollInterval: Duration
    /// How many events one read transaction fetches.
    static let pageSize = 256

    /// An iterator starting after the sequence's `seq`; each iterator reads the log on its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ledger: ledger, position: after, subject: subject, pollInterval: pollInterval)
    }

    /// Reads the log a page at a time and waits for new commits once it has read everything.
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        /// How far the log has been read: no event up to this `seq` is left to return.
        var position: UInt64
        let subject: String?
        let pollInterval: Duration
        var page: [PermissionEvent] = []
        var index = 0
        /// How far the current page covers the log.
        var through: UInt64 = 0

        /// The next event, waiting for one to be appended if need be; `nil` once the task is cancelled.
        public mutating func next() async throws -> PermissionEvent? {
            while !Task.isCancelled {
                if index < page.count {
                    let event = page[index]
                    index += 1
                    if index == page.count { position = through } else { position = event.seq! }
                    return event
                }
                (page, through) = try ledger.page(after: position, subject: subject, limit: LedgerEvents.pageSize)
                index = 0
                if page.isEmpty {
                    position = through
                    await ledger.watch.wait(after: position, timeout: pollInterval)
                }
            }
            return nil
        }
    }
}

/// A question's states as its events are recorded: see ``Ledger/questionUpdates(_:pollInterval:)``.
public struct QuestionUpdates: AsyncSequence, Sendable {
    /// The question's state as of one of its events, with its events up to that one.
    public typealias Element = QuestionStatus
    /// Reading the log can throw ``LedgerError``.
    public typealias Failure = any Error

    let ledger: Ledger
    let id: UUID
    let pollInterval: Duration

    /// An iterator that finds where the question starts when it is first advanced.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ledger: ledger, id: id, pollInterval: pollInterval)
    }

    /// Follows the question's subject's events once the question is asked, every event until then.
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        let id: UUID
        let pollInterval: Duration
        var events: LedgerEvents.Iterator?
        var finished = false

        /// The question's next state, or `nil` after its final state or once the task is cancelled.
        public mutating func next() async throws -> QuestionStatus? {
            guard !finished else { return nil }
            if events == nil {
                // Start just before the question.asked, following its subject, or live from the head.
                let (asked, head) = try ledger.read { view in (try view.question(id), view.head.seq) }
                let start = asked.map { ($0.events[0].seq - 1, $0.subject) } ?? (head, nil)
                events = ledger.events(after: start.0, subject: start.1, pollInterval: pollInterval).makeAsyncIterator()
            }
            while let event = try await events!.next() {
                guard event.questionID == id else { continue }
                guard let status = try ledger.read(asOf: .seq(event.seq!), { try $0.question(id) }) else { continue }
                if [.approved, .denied, .canceled, .failed].contains(status.state) { finished = true }
                return status
            }
            return nil
        }
    }
}

/// A subject's known handles after each change: see ``Ledger/knownHandleUpdates(subject:pollInterval:)``.
public struct KnownHandleUpdates: AsyncSequence, Sendable {
    /// The known handles as of one event.
    public struct Update: Hashable, Sendable {
        /// The event after which the set holds (the head when iteration started, for the first update).
        public var seq: UInt64
        /// The handles the subject may talk to, ordered by kind, then value.
        public var handles: [KnownHandle]
    }

    /// The set of known handles after one event.
    public typealias Element = Update
    /// Reading the log can throw ``LedgerError``.
    public typealias Failure = any Error

    let ledger: Ledger
    let subject: String
    let pollInterval: Duration

    /// An iterator whose first element is the set at the head when it is first advanced.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ledger: ledger, subject: subject, pollInterval: pollInterval)
    }

    /// Reads the subject's events and reports the set when it differs from the last one reported.
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        let subject: String
        let pollInterval: Duration
        var events: LedgerEvents.Iterator?
        var last: [CommunicationHandle]?

        /// The next set of known handles that differs from the last, or `nil` once the task is cancelled.
        public mutating func next() async throws -> Update? {
            guard var events else {
                let subject = subject
                let first = try ledger.read { view in
                    Update(seq: view.head.seq, handles: try view.knownHandles(subject: subject))
                }
                events = ledger.events(after: first.seq, subject: subject, pollInterval: pollInterval).makeAsyncIterator()
                last = first.handles.map(\.handle)
                return first
            }
            defer { self.events = events }
            while let event = try await events.next() {
                switch event.type {
                case .questionAnswered, .handlesObserved: break
                default: continue
                }
                let subject = subject
                let handles = try ledger.read(asOf: .seq(event.seq!)) { try $0.knownHandles(subject: subject) }
                guard handles.map(\.handle) != last else { continue }
                last = handles.map(\.handle)
                return Update(seq: event.seq!, handles: handles)
            }
            return nil
        }
    }
}

/// A guardian's response as the ledger recorded it: PermissionKit's `PermissionResponse` (question and
/// choice) with what the ledger adds: how and when it arrived, and where it is in the log.
public struct RecordedResponse: Hashable, Sendable {
    /// The question answered.
    public var question: PermissionQuestion
    /// The child the question was about.
    public var subject: String
    /// The choice the guardian picked.
    public var choice: PermissionChoice
    /// How the answer reached the app.
    public var via: AnswerVia
    /// When the guardian answered, as the device reported it.
    public var occurredAt: Timestamp
    /// When the ledger recorded the answer.
    public var recordedAt: Timestamp
    /// The answer's position in the log.
    public var seq: UInt64
    /// Whether the answer came after the question expired (see EVENTS.md).
    public var late: Bool
}

/// The responses recorded from a point on, live: see ``Ledger/responses(subject:after:pollInterval:)``.
public struct ResponseUpdates: AsyncSequence, Sendable {
    /// One guardian's response, with its question and where it is in the log.
    public typealias Element = RecordedResponse
    /// Reading the log can throw ``LedgerError``.
    public typealias Failure = any Error

    let events: LedgerEvents

    /// An iterator starting after the sequence's `seq`; each iterator reads the log on its own.
    public func makeAsyncIterator() -> Iterator {
        Iterator(ledger: events.ledger, events: events.makeAsyncIterator())
    }

    /// Picks the `question.answered` events out of the log and pairs each with its question.
    public struct Iterator: AsyncIteratorProtocol {
        let ledger: Ledger
        var events: LedgerEvents.Iterator

        /// The next response, waiting for one if need be; `nil` once the task is cancelled.
        public mutating func next() async throws -> RecordedResponse? {
            while let event = try await events.next() {
                guard case .questionAnswered(let id, let choiceID, let via) = event.payload else { continue }
                guard let status = try ledger.read(asOf: .seq(event.seq!), { try $0.question(id) }),
                    let choice = status.question.choice(id: choiceID)
                else {
                    throw LedgerError(.damaged, "the answer's question or choice is missing", seq: event.seq)
                }
                return RecordedResponse(
                    question: status.question, subject: status.subject, choice: choice, via: via,
                    occurredAt: event.occurredAt, recordedAt: event.recordedAt!, seq: event.seq!, late: status.late)
            }
            return nil
        }
    }
}
