import Foundation
internal import LMDB
import PermissionModel

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
    /// Whether the answer came after the question expired (see docs/spec/EVENTS.md).
    public var late: Bool
    /// Set when the question's personal fields (its handles' values, names, description and choice titles) are
    /// erased: which erasure. They are then empty in ``question`` and ``choice``: read them through ``handles``
    /// and ``choiceTitle``, which say so.
    public var erased: ErasureMark? = nil

    /// Each person's handle: its value, or the erasure that made it unreadable.
    public var handles: [Erasable<CommunicationHandle>] {
        question.topic.handles.map { handle in erased.map { .erased($0) } ?? .readable(handle) }
    }

    /// The picked choice's title, or the erasure that made it unreadable.
    public var choiceTitle: Erasable<String> {
        erased.map { .erased($0) } ?? .readable(choice.title)
    }
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

        /// How far the log has been read: every response up to this `seq` has been returned (see
        /// ``LedgerEvents/Iterator/position``).
        public var position: UInt64 { events.position }

        /// The next response, waiting for one if need be; `nil` once the task is cancelled.
        public mutating func next() async throws -> RecordedResponse? {
            while let event = try await events.next() {
                guard case .questionAnswered(let id, let choiceID, let via) = event.payload else { continue }
                guard let status = try ledger.read(asOf: .seq(event.seq), retries: Ledger.readRetries, { try $0.question(id) }),
                    let choice = status.question.choice(id: choiceID)
                else {
                    throw LedgerError(.damaged, "the answer's question or choice is missing", seq: event.seq)
                }
                return RecordedResponse(
                    question: status.question, subject: status.subject, choice: choice, via: via,
                    occurredAt: event.occurredAt, recordedAt: event.recordedAt, seq: event.seq, late: status.late, erased: status.erased)
            }
            return nil
        }
    }
}
