import Foundation
import PermissionModel

/// One contact of a child in an audit report's timeline: the intervals in which the ledger knew it, and the
/// questions asked about it.
public struct ContactLane: Hashable, Sendable {
    /// The contact, or the erasure that made its value unreadable.
    public var handle: Erasable<CommunicationHandle>
    /// Its kind, which an erasure leaves readable.
    public var kind: CommunicationHandle.Kind
    /// Each interval in which the contact was known, in log order.
    public var intervals: [KnownInterval]
    /// The questions asked about the contact and their outcomes, in time order.
    public var marks: [QuestionMark]
}

/// An interval in which a contact was known: from the answer or observation that made it known until the next
/// change, the end of a time-limited approval, or (while it still holds) the report's as-of point.
public struct KnownInterval: Hashable, Sendable {
    /// How the contact became known.
    public enum Source: String, Hashable, Sendable, CaseIterable {
        /// The guardian approved a question sent through Messages.
        case messages
        /// The guardian approved a question in person, on the child's device.
        case inPerson
        /// The question's default choice, an approval, applied.
        case byDefault
        /// A `handles.observed` event said the contact was known.
        case observation
    }

    /// When it became known (the `occurredAt` of the answer or observation).
    public var start: Timestamp
    /// When it stopped being known; `nil` while it still is, as of the report's point.
    public var end: Timestamp?
    /// How it became known.
    public var source: Source
    /// The event that made it known.
    public var seq: UInt64
    /// The question whose approval made it known, for an approval.
    public var question: UUID?
    /// When a time-limited approval runs out, else `nil`.
    public var until: Timestamp?
    /// Whether it ended because a time-limited approval ran out.
    public var lapsed: Bool
    /// The erasure that made the event that made it known unreadable, if any.
    public var erased: ErasureMark?
}

/// A question about a contact as a mark on its lane: when it was asked, and when and how it ended.
public struct QuestionMark: Hashable, Sendable {
    /// The question.
    public var question: UUID
    /// When it was asked.
    public var askedAt: Timestamp
    /// Its state as of the report's point.
    public var state: QuestionState
    /// When it was answered, canceled, failed or expired; `nil` while pending.
    public var resolvedAt: Timestamp?
    /// Whether the answer came after the question had expired.
    public var late: Bool
}

/// One system permission of a child in an audit report's timeline: its states over time.
public struct PermissionLane: Hashable, Sendable {
    /// The permission.
    public var permission: SystemPermission
    /// Each state the permission was in, in log order.
    public var intervals: [PermissionInterval]
}

/// A state a permission was in, from a change until the next one (or the report's as-of point).
public struct PermissionInterval: Hashable, Sendable {
    /// The state it was in.
    public var state: SystemPermission.State
    /// What changed it to that state, when the event said.
    public var cause: SystemPermission.Cause?
    /// When the change happened.
    public var start: Timestamp
    /// When the next change happened; `nil` for the state that holds at the report's point.
    public var end: Timestamp?
    /// The `permission.changed` event.
    public var seq: UInt64
}
