import Foundation
import PermissionModel

extension Ledger {
    /// What ``erase(subject:_:occurredAt:id:)`` recorded.
    public struct ErasureSummary: Hashable, Sendable {
        /// The subject whose data was erased.
        public var subject: String
        /// The seq of the `subject.erased` event.
        public var seq: UInt64
        /// Whether the erasure was already in the ledger (an event with the same id and content).
        public var wasRecorded: Bool
    }

    /// Erases `subject`'s personal fields recorded before `erasure.before` (all those recorded before now when
    /// `nil`): appends a `subject.erased` event and destroys the keys of what it erases, in one step
    /// (docs/spec/PRIVACY.md). When it returns, the keys are gone from the key store.
    ///
    /// - Parameters:
    ///   - id: the event's id, the idempotency key; a new UUID when `nil`.
    /// - Throws: ``AppendRejected`` when the subject has no event to erase, or the reference is not valid.
    public func erase(subject: String, _ erasure: Erasure, occurredAt: Timestamp, id: String? = nil) async throws -> ErasureSummary {
        let event = PermissionEvent(id: id ?? UUID().uuidString, subject: subject, occurredAt: occurredAt, payload: .subjectErased(erasure))
        switch try await append(event) {
        case .appended(let seq): return ErasureSummary(subject: subject, seq: seq, wasRecorded: false)
        case .duplicate(let seq): return ErasureSummary(subject: subject, seq: seq, wasRecorded: true)
        }
    }
}
