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

    /// The state of question `id` as of a point, or `nil` if it had not been asked by then: O(log n).
    ///
    /// Question look-ups have one shape everywhere: `question(_:asOf:)` and `questions(subject:state:asOf:)` here,
    /// `question(_:asOf:)` and `questions(state:asOf:)` on ``SubjectLedger`` (for its subject), and the same without `asOf:` on a ``LedgerView``, which is
    /// already as of a point.
    public func question(_ id: UUID, asOf: AsOf = .now) async throws -> QuestionStatus? {
        try read(asOf: asOf, retries: Ledger.readRetries) { try $0.question(id) }
    }

    /// The questions as of a point (every subject's, or one's), ordered by `askedAt` then id, optionally only
    /// those in `state`.
    public func questions(subject: String? = nil, state: QuestionState? = nil, asOf: AsOf = .now) async throws -> [QuestionStatus] {
        try read(asOf: asOf, retries: Ledger.readRetries) { try $0.questions(subject: subject, state: state) }
    }
}

/// One subject's events, recorded and queried in PermissionKit's terms. Obtain it from
/// ``Ledger/subject(_:)``; it is a lightweight value, safe to share and to make as often as needed.
///
/// Every `record…` method appends one event and returns once it is durable on disk (group-committed
/// with other tasks' appends). `occurredAt` defaults to the ledger's clock.
///
/// Retries are safe. The event id of `question.asked`, `question.sendCanceled`, `question.askFailed`
/// and `question.expired` defaults to one derived from the question (`asked:<question id>`, ...): a
/// retried call finds the event it recorded before (the same subject and content, whatever its `at:`) and
/// returns ``AppendOutcome/duplicate(of:)`` instead of appending a second event. Answers, observations and
/// permission changes get a random UUID; the same answer delivered again is folded by the ledger's rules,
/// and an observation or permission change recorded twice says the same thing twice. Pass `id` to use your
/// own, for example the id of the message that carried it: then the ledger's rules for ids apply as they
/// are (the same id with other content is rejected).
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
        try await record(.questionAsked(question), at: occurredAt, id: id, derivedID: Self.eventID("asked", question.id))
    }

    /// Records that the child canceled the send flow: a `question.sendCanceled` event.
    @discardableResult
    public func recordSendCanceled(_ questionID: UUID, at occurredAt: Timestamp? = nil, id: String? = nil) async throws -> AppendOutcome {
        try await record(.questionSendCanceled(questionID: questionID), at: occurredAt, id: id, derivedID: Self.eventID("sendCanceled", questionID))
    }

    /// Records that `AskCenter.ask` threw `error`, so the question was never sent: a `question.askFailed` event.
    @discardableResult
    public func recordAskFailed(_ questionID: UUID, error: AskError, at occurredAt: Timestamp? = nil, id: String? = nil) async throws -> AppendOutcome {
        try await record(.questionAskFailed(questionID: questionID, error: error), at: occurredAt, id: id, derivedID: Self.eventID("askFailed", questionID))
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
        try await record(.questionExpired(questionID: questionID), at: occurredAt, id: id, derivedID: Self.eventID("expired", questionID))
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

    /// Records an event of the kind a question has one of, under `id` when given, else under `derivedID`: then a
    /// stored event with that id, this subject and this payload is this call's earlier success (a retry), and
    /// its `seq` is returned as a duplicate, whatever the times it was recorded with.
    private func record(_ payload: PermissionEvent.Payload, at occurredAt: Timestamp?, id: String?, derivedID: String) async throws -> AppendOutcome {
        if let id { return try await record(payload, at: occurredAt, id: id) }
        if let seq = try earlierRecord(payload, id: derivedID) { return .duplicate(of: seq) }
        do {
            return try await record(payload, at: occurredAt, id: derivedID)
        } catch let rejected as AppendRejected {
            // A retry running at the same time may have recorded it first.
            if let seq = try earlierRecord(payload, id: derivedID) { return .duplicate(of: seq) }
            throw rejected
        }
    }

    /// The `seq` of the stored event with id `id` when it is this subject's and has this payload.
    private func earlierRecord(_ payload: PermissionEvent.Payload, id: String) throws -> UInt64? {
        try ledger.read(retries: Ledger.readRetries) { view in
            guard let stored = try view.txn.event(ledger.tables, id: id) else { return nil }
            return stored.subject == subject && stored.payload == payload ? stored.seq : nil
        }
    }

    /// The id of the one event of `kind` a question can have: `<kind>:<question id>`.
    static func eventID(_ kind: String, _ questionID: UUID) -> String { "\(kind):\(questionID.uuidString)" }

    // MARK: Queries (CommunicationLimits)

    /// Whether the child may talk to `handle` as of a point: PermissionKit's
    /// `CommunicationLimits.isKnownHandle(_:)`, asked of the ledger.
    public func isKnownHandle(_ handle: CommunicationHandle, asOf: AsOf = .now) async throws -> Bool {
        try ledger.read(asOf: asOf, retries: Ledger.readRetries) { try $0.isKnownHandle(handle, subject: subject) }
    }

    /// The members of `handles` the child may talk to as of a point: PermissionKit's
    /// `CommunicationLimits.knownHandles(in:)`, asked of the ledger.
    public func knownHandles(in handles: Set<CommunicationHandle>, asOf: AsOf = .now) async throws -> Set<CommunicationHandle> {
        try ledger.read(asOf: asOf, retries: Ledger.readRetries) { view in
            try handles.filter { try view.isKnownHandle($0, subject: subject) }
        }
    }

    /// Every handle the child may talk to as of a point, with since when, until when and on whose answer.
    public func knownHandles(asOf: AsOf = .now) async throws -> [KnownHandle] {
        try ledger.read(asOf: asOf, retries: Ledger.readRetries) { try $0.knownHandles(subject: subject) }
    }

    // MARK: Queries (questions and permissions)

    /// The state of the child's question `id` as of a point, or `nil` when it had not been asked by then
    /// (or is another subject's).
    public func question(_ id: UUID, asOf: AsOf = .now) async throws -> QuestionStatus? {
        try await ledger.question(id, asOf: asOf).flatMap { $0.subject == subject ? $0 : nil }
    }

    /// The child's questions as of a point, ordered by `askedAt` then id, optionally only those in `state`.
    public func questions(state: QuestionState? = nil, asOf: AsOf = .now) async throws -> [QuestionStatus] {
        try ledger.read(asOf: asOf, retries: Ledger.readRetries) { try $0.questions(subject: subject, state: state) }
    }

    /// The latest state of each of the subject's system permissions as of a point.
    public func permissions(asOf: AsOf = .now) async throws -> [PermissionStatus] {
        try ledger.read(asOf: asOf, retries: Ledger.readRetries) { try $0.permissions(subject: subject) }
    }

    /// The state of one system permission as of a point, or `nil` when none was recorded by then.
    public func permission(_ permission: SystemPermission, asOf: AsOf = .now) async throws -> PermissionStatus? {
        try await permissions(asOf: asOf).first { $0.permission == permission }
    }

    // MARK: Live updates

    // Each is the ledger's subscription of the same name for this subject, with the same options.

    /// The guardians' responses to this subject's questions recorded after `seq`, then live:
    /// PermissionKit's `AskCenter.responses(for:)`, from the ledger. See ``Ledger/responses(subject:after:pollInterval:)``.
    public func responses(after seq: UInt64 = 0, pollInterval: Duration = .seconds(1)) -> ResponseUpdates {
        ledger.responses(subject: subject, after: seq, pollInterval: pollInterval)
    }

    /// The subject's known handles now, then after every change. See ``Ledger/knownHandleUpdates(subject:pollInterval:)``.
    public func knownHandleUpdates(pollInterval: Duration = .seconds(1)) -> KnownHandleUpdates {
        ledger.knownHandleUpdates(subject: subject, pollInterval: pollInterval)
    }

    /// The subject's events after `seq`, then live. See ``Ledger/events(after:subject:pollInterval:)``.
    public func events(after seq: UInt64 = 0, pollInterval: Duration = .seconds(1)) -> LedgerEvents {
        ledger.events(after: seq, subject: subject, pollInterval: pollInterval)
    }

    /// The states of question `id` as its events are recorded. See ``Ledger/questionUpdates(_:pollInterval:)``.
    public func questionUpdates(_ id: UUID, pollInterval: Duration = .seconds(1)) -> QuestionUpdates {
        ledger.questionUpdates(id, pollInterval: pollInterval)
    }
}
