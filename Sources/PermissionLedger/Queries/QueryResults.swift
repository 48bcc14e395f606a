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
    /// Set when the question's personal fields (its handles' values, names, description and choice titles) are
    /// erased: which erasure. They are then empty, and shown as erased (``handles``, ``appUpdateDescription``, ``choiceTitle``).
    public var erased: ErasureMark? = nil
    /// Set when the ask failure's message is erased: which erasure.
    public var errorErased: ErasureMark? = nil

    /// Each person's handle: its value, or the erasure that made it unreadable.
    public var handles: [Erasable<CommunicationHandle>] {
        question.topic.handles.map { handle in erased.map { .erased($0) } ?? .readable(handle) }
    }

    /// A significant app update's description, or the erasure that made it unreadable; `nil` for other topics.
    public var appUpdateDescription: Erasable<String>? {
        guard case .significantAppUpdate(let topic) = question.topic else { return nil }
        return erased.map { .erased($0) } ?? .readable(topic.description)
    }

    /// The picked choice's title, or the erasure that made it unreadable; `nil` before an answer.
    public var choiceTitle: Erasable<String>? {
        guard let choice else { return nil }
        return erased.map { .erased($0) } ?? .readable(choice.title)
    }

    /// The ask failure's message, or the erasure that made it unreadable; `nil` when it has none.
    public var errorMessage: Erasable<String>? {
        if let errorErased { return .erased(errorErased) }
        return error?.message.map { .readable($0) }
    }
}

/// A personal value as a query sees it: readable, or erased by a `subject.erased` event (docs/spec/PRIVACY.md).
public enum Erasable<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The value, readable.
    case readable(Value)
    /// The value is gone: the erasure that made it unreadable.
    case erased(ErasureMark)

    /// The readable value transformed; an erased one stays erased.
    public func map<T: Hashable & Sendable>(_ transform: (Value) -> T) -> Erasable<T> {
        switch self {
        case .readable(let value): .readable(transform(value))
        case .erased(let mark): .erased(mark)
        }
    }

    /// The value when it is readable.
    public var value: Value? {
        if case .readable(let value) = self { value } else { nil }
    }
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

    /// The handle's value, or the erasure that made it unreadable.
    public var value: Erasable<String> { erased.map { .erased($0) } ?? .readable(handle.value) }
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
