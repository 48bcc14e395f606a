import Foundation
import PermissionModel

/// One event of a question's history, as the `question` command lists it.
public struct EventSummary: Hashable, Sendable {
    /// The event's position in the log.
    public var seq: UInt64
    /// The event's type.
    public var type: EventType
    /// The event's id.
    public var id: String
    /// When it happened, as the device reported it.
    public var occurredAt: Timestamp
    /// When the ledger recorded it.
    public var recordedAt: Timestamp
}

/// A question and its state at a point of the log.
public struct QuestionStatus: Hashable, Sendable {
    /// The question as it was asked.
    public var question: PermissionQuestion
    /// The child who was asked to send it.
    public var subject: String
    /// Where it stands at the point, by its events and the point's clock (a pending question whose
    /// `expiresAt` is at or before the clock is `.expired`).
    public var state: QuestionState
    /// Whether the answer came after the app stopped waiting, or was recorded at or after `expiresAt`.
    public var late: Bool
    /// When it was asked: the `occurredAt` of its `question.asked`.
    public var askedAt: Timestamp
    /// When the current state was reached (`occurredAt` of its event; `expiresAt` when expired by the clock alone).
    public var resolvedAt: Timestamp?
    /// The choice the guardian picked, once answered.
    public var choice: PermissionChoice?
    /// How the answer reached the app, once answered.
    public var via: AnswerVia?
    /// Why the ask failed, for a `.failed` question.
    public var error: AskError?
    /// The question's events up to the point, in `seq` order (empty in listings).
    public var events: [EventSummary]
}

/// A handle a subject may talk to at a point of the log.
public struct KnownHandle: Hashable, Sendable {
    /// The handle, normalized.
    public var handle: CommunicationHandle
    /// When it became known (the answer's or the observation's `occurredAt`).
    public var since: Timestamp
    /// When a time-limited approval lapses, else `nil`.
    public var until: Timestamp?
    /// What made it known: an approved question or a `handles.observed` event.
    public var source: HandleSource
    /// Set when an erasure made the handle's value unreadable: which erasure. ``handle`` then has an empty value,
    /// and only its kind; the membership (`since`, `until`, `source`) is what it was.
    public var erased: ErasureMark? = nil
}

/// A system permission's state for a subject at a point of the log.
public struct PermissionStatus: Hashable, Sendable {
    /// The system permission.
    public var permission: SystemPermission
    /// Its latest state at the point.
    public var state: SystemPermission.State
    /// `occurredAt` of the change that set it.
    public var since: Timestamp
    /// What caused that change, when it was recorded.
    public var cause: SystemPermission.Cause?
    /// Whether the app may prompt: only in `notDetermined` and `askAgain`.
    public var canPrompt: Bool { state.canPrompt }
}
