import Foundation
internal import LMDB
import PermissionModel

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
        /// The question's subject once it is asked, and whether its status was last given with its values erased.
        var asked: (subject: String, erased: Bool)?

        /// How far the log has been read (see ``LedgerEvents/Iterator/position``); 0 before the first `next()`.
        public var position: UInt64 { events?.position ?? 0 }

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
                // The question's own events, and an erasure of its subject's that erases its values: the status
                // then shows them erased (``Erasable``), its state unchanged.
                let erasesIt = event.type == .subjectErased && asked.map { $0.subject == event.subject && !$0.erased } == true
                guard event.questionID == id || erasesIt else { continue }
                guard let status = try ledger.read(asOf: .seq(event.seq), retries: Ledger.readRetries, { try $0.question(id) }) else { continue }
                let erased = status.erased != nil
                if erasesIt && !erased { continue }
                asked = (status.subject, erased)
                if [.approved, .denied, .canceled, .failed].contains(status.state) { finished = true }
                return status
            }
            return nil
        }
    }
}
