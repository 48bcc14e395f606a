import Foundation
import PermissionModel

extension Ledger {
    /// The ledger seen from one child (or one user, for system permissions): records what PermissionKit
    /// reports about them and answers `CommunicationLimits`-style queries, as of now or any point.
    ///
    /// ```swift
    /// let child = ledger.subject("kid-1")
    /// let question = try PermissionQuestion(handle: CommunicationHandle(value: "+14155550100", kind: .phoneNumber))
    /// try await child.recordAsk(question)
    /// try await child.recordResponse(to: question.id, choice: .approve, via: .messages)
    /// let known = try await child.isKnownHandle(question.topic.handles[0])   // true
    /// ```
    public func subject(_ subject: String) -> SubjectLedger {
        SubjectLedger(ledger: self, subject: subject)
    }

    /// The state of question `id` as of a point, or `nil` if it had not been asked by then.
    public func question(_ id: UUID, asOf: AsOf = .now) async throws -> QuestionStatus? {
        try read(asOf: asOf) { try $0.question(id) }
    }
}

/// One subject's events, recorded and queried in PermissionKit's terms. Obtain it from
/// ``Ledger/subject(_:)``; it is a lightweight value, safe to share and to make as often as needed.
///
/// Every `record…` method appends one event and returns once it is durable on disk (group-committed
/// with other tasks' appends). `occurredAt` defaults to the ledger's clock. The event id defaults to
/// one derived from the question for `question.asked`, `question.sendCanceled`, `question.askFailed`
/// and `question.expired`, so that retrying the same call (with the same `at:`; a retry at another time is
/// rejected as a conflict) is a no-op rather than a second event, and to
/// a random UUID for answers, observations and permission changes (repeated answers are folded by the
/// ledger's rules anyway). Pass `id` to use your own, for example the id of the message that carried it.
///
/// Each `record…` method throws ``AppendRejected`` when the ledger's rules reject the event (for
/// example an answer to a canceled question), and ``LedgerError`` when the ledger cannot be written.
public struct SubjectLedger: Sendable {
    /// The ledger written to and read from.
    public let ledger: Ledger
    /// The child (or user) the events are about.
    public let subject: String

    // MARK: Recording questions and their outcomes

    /// Records that the app asked the child to send `question` (PermissionKit's `AskCenter.ask`):
    /// a `question.asked` event.
    @discardableResult
    public func recordAsk(_ question: PermissionQuestion, at occurredAt: Timestamp? = nil, id: String? = nil) async throws -> AppendOutcome {
        try await record(.questionAsked(question), at: occurredAt, id: id ?? Self.eventID("asked", question.id))
    }

    /// Records that the child canceled the send flow: a `question.sendCanceled` event.
    @discardableResult
    public func recordSendCanceled(_ questionID: UUID, at occurredAt: Timestamp? = nil, id: String? = nil) async throws -> AppendOutcome {
        try await record(.questionSendCanceled(questionID: questionID), at: occurredAt, id: id ?? Self.eventID("sendCanceled", questionID))
    }

    /// Records that `AskCenter.ask` threw `error`, so the question was never sent: a `question.askFailed` event.
    @discardableResult
    public func recordAskFailed(_ questionID: UUID, error: AskError, at occurredAt: Timestamp? = nil, id: String? = nil) async throws -> AppendOutcome {
        try await record(.questionAskFailed(questionID: questionID, error: error), at: occurredAt, id: id ?? Self.eventID("askFailed", questionID))
    }

    /// Records the guardian's response (PermissionKit's `PermissionResponse`): a `question.answered` event.
    /// The same response delivered again is a no-op; a different choice for an answered question is rejected.
    @discardableResult
    public func recordResponse(
        to questionID: UUID, choice: PermissionChoice, via: AnswerVia = .messages, at occurredAt: Timestamp? = nil, id: String? = nil
    ) async throws -> AppendOutcome {
        try await recordResponse(to: questionID, choiceID: choice.id, via: via, at: occurredAt, id: id)
    }

    /// Records the guardian's response by the choice's id: a `question.answered` event.
    @discardableResult
    public func recordResponse(
        to questionID: UUID, choiceID: String, via: AnswerVia = .messages, at occurredAt: Timestamp? = nil, id: String? = nil
    ) async throws -> AppendOutcome {
        try await record(.questionAnswered(questionID: questionID, choiceID: choiceID, via: via), at: occurredAt, id: id ?? UUID().uuidString)
    }

    /// Records that the app stopped waiting for an answer: a `question.expired` event. To expire every
    /// question whose `expiresAt` has passed, use ``Ledger/expireOverdueQuestions(now:limit:)``.
    @discardableResult
    public func recordExpiry(_ questionID: UUID, at occurredAt: Timestamp? = nil, id: String? = nil) async throws -> AppendOutcome {
        try await record(.questionExpired(questionID: questionID), at: occurredAt, id: id ?? Self.eventID("expired", questionID))
    }

    // MARK: Recording observations

    /// Records what `CommunicationLimits.knownHandles(in: checked)` returned: `known` among `checked`
    /// (a `handles.observed` event). `known` must be a subset of `checked`.
    ///
    /// - Throws: ``/PermissionModel/PermissionModelError`` when `checked` is empty or `known` is not a
    ///   subset of it (nothing is written); otherwise as the other `record…` methods.
    @discardableResult
    public func recordKnownHandles(
        _ known: Set<CommunicationHandle>, among checked: Set<CommunicationHandle>, at occurredAt: Timestamp? = nil, id: String? = nil
    ) async throws -> AppendOutcome {
        let payload = try PermissionEvent.Payload.handlesObserved(checking: checked.sorted(), known: known.sorted())
        return try await record(payload, at: occurredAt, id: id ?? UUID().uuidString)
    }

    /// Records that a system permission's state changed: a `permission.changed` event.
    @discardableResult
    public func recordPermission(
        _ permission: SystemPermission, state: SystemPermission.State, cause: SystemPermission.Cause? = nil,
        at occurredAt: Timestamp? = nil, id: String? = nil
    ) async throws -> AppendOutcome {
        try await record(.permissionChanged(permission, state: state, cause: cause), at: occurredAt, id: id ?? UUID().uuidString)
    }

    private func record(_ payload: PermissionEvent.Payload, at occurredAt: Timestamp?, id: String) async throws -> AppendOutcome {
        let event = PermissionEvent(id: id, subject: subject, occurredAt: occurredAt ?? ledger.options.clock(), payload: payload)
        return try await ledger.append(event)
    }

    /// The id of the one event of `kind` a question can have: `<kind>:<question id>`.
    static func eventID(_ kind: String, _ questionID: UUID) -> String { "\(kind):\(questionID.uuidString)" }

    // MARK: Queries (CommunicationLimits)

    /// Whether the child may talk to `handle` as of a point: PermissionKit's
    /// `CommunicationLimits.isKnownHandle(_:)`, asked of the ledger.
    public func isKnownHandle(_ handle: CommunicationHandle, asOf: AsOf = .now) async throws -> Bool {
        try ledger.read(asOf: asOf) { try $0.isKnownHandle(handle, subject: subject) }
    }

    /// The members of `handles` the child may talk to as of a point: PermissionKit's
    /// `CommunicationLimits.knownHandles(in:)`, asked of the ledger.
    public func knownHandles(in handles: Set<CommunicationHandle>, asOf: AsOf = .now) async throws -> Set<CommunicationHandle> {
        try ledger.read(asOf: asOf) { view in
            try handles.filter { try view.isKnownHandle($0, subject: subject) }
        }
    }

    /// Every handle the child may talk to as of a point, with since when, until when and on whose answer.
    public func knownHandles(asOf: AsOf = .now) async throws -> [KnownHandle] {
        try ledger.read(asOf: asOf) { try $0.knownHandles(subject: subject) }
    }

    // MARK: Queries (questions and permissions)

    /// The child's questions as of a point, ordered by `askedAt` then id, optionally only those in `state`.
    public func questions(state: QuestionState? = nil, asOf: AsOf = .now) async throws -> [QuestionStatus] {
        try ledger.read(asOf: asOf) { try $0.questions(subject: subject, state: state) }
    }

    /// The latest state of each of the subject's system permissions as of a point.
    public func permissions(asOf: AsOf = .now) async throws -> [PermissionStatus] {
        try ledger.read(asOf: asOf) { try $0.permissions(subject: subject) }
    }

    /// The state of one system permission as of a point, or `nil` when none was recorded by then.
    public func permission(_ permission: SystemPermission, asOf: AsOf = .now) async throws -> PermissionStatus? {
        try await permissions(asOf: asOf).first { $0.permission == permission }
    }

    // MARK: Live updates

    /// The guardians' responses to this subject's questions recorded after `seq`, then live:
    /// PermissionKit's `AskCenter.responses(for:)`, from the ledger.
    public func responses(after seq: UInt64 = 0) -> ResponseUpdates {
        ledger.responses(subject: subject, after: seq)
    }

    /// The subject's known handles now, then after every change.
    public func knownHandleUpdates() -> KnownHandleUpdates {
        ledger.knownHandleUpdates(subject: subject)
    }

    /// The subject's events after `seq`, then live.
    public func events(after seq: UInt64 = 0) -> LedgerEvents {
        ledger.events(after: seq, subject: subject)
    }
}
