import Foundation
import PermissionLedger
import PermissionModel

/// A builder for scenarios written in Swift: each call records one event, at a clock the scenario controls.
///
/// Every event gets a deterministic id (`ev-1`, `ev-2`, …), `occurredAt` = the clock and `recordedAt` = the
/// clock plus ``recordingDelay`` (one second by default). Questions get deterministic uppercase UUIDs
/// derived from a counter (`5CE4A210-0000-4000-8000-000000000001`, …). The events are exactly those of the
/// JSON form: ``jsonLines`` decodes back to ``events``, and both replay to the same digest.
///
/// ```swift
/// var s = Scenario(subject: "kid-1", start: try Timestamp(rfc3339: "2026-11-20T09:00:00Z"))
/// let q = try s.asked(about: [.custom("dragonslayer42")], expiresIn: .seconds(3600))
/// s.advance(by: .seconds(300))
/// s.answered(q, choice: "approve", via: .messages)
/// s.permission(.camera, .authorized, cause: .systemPrompt)
///
/// try s.replay { replayed in
///     replayed.expectQuestion(q, state: .approved, late: false)
///     replayed.expectKnownHandles(subject: "kid-1", [("dragonslayer42", .custom)])
///     replayed.expectQuestion(q, state: .pending, asOf: .seq(1))
/// }
/// ```
///
/// The builder does not apply the ledger's acceptance rules: it can write an answer to a canceled
/// question, to see the ledger reject it. It does keep every event valid in the JSON form (an
/// `expiresAt` later than the ask, `known` a subset of `checked`, valid ids and subjects), and it keeps
/// `recordedAt` from decreasing: an event whose clock plus delay is earlier than the previous event's
/// `recordedAt` is recorded at that previous `recordedAt`.
public struct Scenario: Sendable {
    /// The subject of new questions, observations and permission changes when a call names none.
    /// Follow-up events (answers, cancels, failures, expiries) take their question's subject.
    public var subject: String
    /// The scenario's clock: the `occurredAt` of the next event.
    public private(set) var clock: Timestamp
    /// How long after it occurs an event is recorded, unless a call says otherwise.
    public var recordingDelay: Duration
    /// What event ids start with; the event's number follows.
    public let idPrefix: String
    /// The first 32 bits of the question UUIDs, so that scenarios replayed into one ledger can keep theirs apart.
    public let questionNamespace: UInt32
    /// The events recorded so far, in order, each with its `recordedAt`.
    public private(set) var events: [PermissionEvent] = []

    private var questionSubjects: [UUID: String] = [:]
    private var eventCount = 0
    private var questionCount: UInt64 = 0

    /// Starts an empty scenario.
    ///
    /// - Parameters:
    ///   - subject: the default subject (1 to 256 bytes, no control characters).
    ///   - start: the clock's first reading.
    ///   - recordingDelay: how long after it occurs each event is recorded (not negative).
    ///   - idPrefix: what event ids start with (at most 100 bytes, no control characters).
    ///   - questionNamespace: the first 32 bits of question UUIDs.
    /// - Precondition: the subject and prefix are valid as above; a scenario with invalid ones is a bug in the test.
    public init(
        subject: String = "kid-1", start: Timestamp, recordingDelay: Duration = .seconds(1),
        idPrefix: String = "ev-", questionNamespace: UInt32 = 0x5CE4_A210
    ) {
        Self.check(subject, field: "subject", maxBytes: 256)
        Self.check(idPrefix.isEmpty ? "x" : idPrefix, field: "idPrefix", maxBytes: 100)
        precondition(recordingDelay >= .zero, "Scenario: recordingDelay must not be negative, not \(recordingDelay)")
        self.subject = subject
        self.clock = start
        self.recordingDelay = recordingDelay
        self.idPrefix = idPrefix
        self.questionNamespace = questionNamespace
    }

    // MARK: The clock

    /// Moves the clock on (or back, for a negative duration).
    public mutating func advance(by duration: Duration) {
        clock = clock.adding(duration)
    }

    /// Sets the clock. Moving it back is allowed: `occurredAt` may go back, `recordedAt` does not.
    public mutating func at(_ time: Timestamp) {
        clock = time
    }

    // MARK: Questions

    /// Records `question.asked` about a communication with people given by their handles.
    ///
    /// ```swift
    /// let q = try s.asked(about: [.custom("dragonslayer42"), .phoneNumber("+1 555 0100")],
    ///                     actions: [.message, .audioCall], expiresIn: .seconds(86_400))
    /// ```
    ///
    /// - Parameters:
    ///   - handles: the people's handles (at least one, all different).
    ///   - actions: what the child wants to do with them; default `[.message]`.
    ///   - choices: default `[.approve, .decline]`; at least one approval and one denial.
    ///   - defaultChoice: the id of the default choice; default the first denial.
    ///   - expiresIn: when given, `expiresAt` is the clock plus this (it must be positive).
    ///   - id: the question's id; default the next deterministic one.
    ///   - subject: who asks; default ``subject``.
    /// - Returns: the question's id.
    /// - Throws: ``/PermissionModel/PermissionModelError`` when the question is not valid.
    @discardableResult
    public mutating func asked(
        about handles: [CommunicationHandle], actions: Set<CommunicationTopic.Action> = [.message],
        choices: [PermissionChoice] = [.approve, .decline], defaultChoice: String? = nil,
        expiresIn: Duration? = nil, id: UUID? = nil, subject: String? = nil
    ) throws(PermissionModelError) -> UUID {
        try asked(.communication(CommunicationTopic(handles: handles, actions: actions)), choices: choices,
                  defaultChoice: defaultChoice, expiresIn: expiresIn, id: id, subject: subject)
    }

    /// Records `question.asked` about a significant update of the app.
    ///
    /// - Returns: the question's id.
    /// - Throws: ``/PermissionModel/PermissionModelError`` when the question is not valid.
    @discardableResult
    public mutating func asked(
        appUpdate description: String, choices: [PermissionChoice] = [.approve, .decline], defaultChoice: String? = nil,
        expiresIn: Duration? = nil, id: UUID? = nil, subject: String? = nil
    ) throws(PermissionModelError) -> UUID {
        try asked(.significantAppUpdate(SignificantAppUpdateTopic(description: description)), choices: choices,
                  defaultChoice: defaultChoice, expiresIn: expiresIn, id: id, subject: subject)
    }

    /// Records `question.asked` about any topic (for example people with names).
    ///
    /// - Returns: the question's id.
    /// - Throws: ``/PermissionModel/PermissionModelError`` when the question is not valid.
    @discardableResult
    public mutating func asked(
        _ topic: QuestionTopic, choices: [PermissionChoice] = [.approve, .decline], defaultChoice: String? = nil,
        expiresIn: Duration? = nil, id: UUID? = nil, subject: String? = nil
    ) throws(PermissionModelError) -> UUID {
        var expiresAt: Timestamp?
        if let expiresIn {
            guard expiresIn > .zero else {
                throw PermissionModelError("must be positive, so that expiresAt is later than occurredAt, not \(expiresIn)", field: "expiresIn")
            }
            expiresAt = clock.adding(expiresIn)
        }
        let question = try PermissionQuestion(
            id: id ?? nextQuestionID(), topic: topic, choices: choices, defaultChoiceID: defaultChoice, expiresAt: expiresAt)
        let subject = subject ?? self.subject
        questionSubjects[question.id] = subject
        record(.questionAsked(question), subject: subject)
        return question.id
    }

    /// Records `question.answered`: the guardian picked `choice` (or the system applied it, `via: .default`).
    ///
    /// - Parameters:
    ///   - question: the question's id; the answer takes its subject.
    ///   - choice: the choice's id (not empty).
    ///   - via: how the answer came; default `.messages`.
    ///   - recordingDelay: how long after the answer occurred it is recorded, for this event only; a delay that
    ///     reaches the question's `expiresAt` makes the answer late.
    public mutating func answered(
        _ question: UUID, choice: String, via: AnswerVia = .messages, recordingDelay: Duration? = nil
    ) {
        precondition(!choice.isEmpty, "Scenario.answered: the choice id must not be empty")
        record(.questionAnswered(questionID: question, choiceID: choice, via: via), subject: questionSubjects[question],
               recordingDelay: recordingDelay)
    }

    /// Records `question.sendCanceled`: the child cancelled the send flow.
    public mutating func canceled(_ question: UUID) {
        record(.questionSendCanceled(questionID: question), subject: questionSubjects[question])
    }

    /// Records `question.askFailed`: the ask threw `code` (with the system's `message`, if any).
    public mutating func failed(_ question: UUID, _ code: AskError.Code, message: String? = nil) {
        record(.questionAskFailed(questionID: question, error: AskError(code: code, message: message)), subject: questionSubjects[question])
    }

    /// Records `question.expired`: the app stopped waiting for an answer.
    public mutating func expired(_ question: UUID) {
        record(.questionExpired(questionID: question), subject: questionSubjects[question])
    }

    // MARK: Handles and permissions

    /// Records `handles.observed`: what `CommunicationLimits.knownHandles(in:)` returned for `checked`.
    ///
    /// Repeated handles are folded, as the JSON form does.
    ///
    /// - Throws: ``/PermissionModel/PermissionModelError`` when `checked` is empty or `known` is not a subset of it.
    public mutating func observed(
        checked: [CommunicationHandle], known: [CommunicationHandle], subject: String? = nil
    ) throws(PermissionModelError) {
        record(try .handlesObserved(checking: checked, known: known), subject: subject)
    }

    /// Records `permission.changed`.
    public mutating func permission(
        _ permission: SystemPermission, _ state: SystemPermission.State, cause: SystemPermission.Cause? = nil,
        subject: String? = nil
    ) {
        record(.permissionChanged(permission, state: state, cause: cause), subject: subject)
    }

    /// Records `subject.erased`: the subject's personal fields recorded before the erasure (or before `before`)
    /// are erased (docs/spec/PRIVACY.md). A `reference` must be what the ledger takes: 1 to 128 bytes, without
    /// control, format or separator characters; another stops the test, as an invalid subject does.
    public mutating func erased(
        _ basis: Erasure.Basis = .guardianRequest, reference: String? = nil, before: Timestamp? = nil, subject: String? = nil
    ) {
        if let reference { Self.check(reference, field: "erasure.reference", maxBytes: 128, identifier: true) }
        record(.subjectErased(Erasure(basis: basis, reference: reference, before: before)), subject: subject)
    }

    /// Records any event as given: its id, times and subject are not touched, so it may break any rule.
    /// For scenarios about rejections.
    public mutating func record(_ event: PermissionEvent) {
        eventCount += 1
        if case .questionAsked(let question) = event.payload { questionSubjects[question.id] = event.subject }
        events.append(event)
    }

    // MARK: The result

    /// The events as JSON Lines (one line per event, each ending in `\n`), as ``/PermissionLedger/EventJSON`` writes them.
    public var jsonLines: String {
        events.map { EventJSON.encode($0) + "\n" }.joined()
    }

    /// The events as a fixture named `name`; event `i` is on line `i + 1` of ``jsonLines``.
    public func fixture(name: String = "scenario") -> Fixture {
        Fixture(events: events, name: name)
    }

    /// Replays the events into a throwaway ledger, runs `body` with it, and removes the ledger afterwards.
    ///
    /// - Throws: ``FixtureError`` naming the event (as its line of ``jsonLines``) of every rejection; what `body` throws.
    public func replay<T>(
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ReplayedLedger) async throws -> T
    ) async throws -> T {
        try await withReplayedLedger(fixture(), clock: clock, isolation: isolation, body)
    }

    /// The synchronous form of ``replay(clock:isolation:_:)``.
    public func replay<T>(
        clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
        _ body: (ReplayedLedger) throws -> T
    ) throws -> T {
        try withReplayedLedger(fixture(), clock: clock, body)
    }

    // MARK: Internals

    private mutating func record(_ payload: PermissionEvent.Payload, subject: String?, recordingDelay: Duration? = nil) {
        let subject = subject ?? self.subject
        Self.check(subject, field: "subject", maxBytes: 256)
        let delay = recordingDelay ?? self.recordingDelay
        precondition(delay >= .zero, "Scenario: a recording delay must not be negative, not \(delay)")
        var recordedAt = clock.adding(delay)
        if let previous = events.last?.recordedAt, recordedAt < previous { recordedAt = previous }
        record(PermissionEvent(
            id: "\(idPrefix)\(eventCount + 1)", subject: subject, occurredAt: clock, recordedAt: recordedAt, payload: payload))
    }

    private mutating func nextQuestionID() -> UUID {
        questionCount += 1
        let namespace = String(questionNamespace, radix: 16, uppercase: true)
        let counter = String(questionCount, radix: 16, uppercase: true)
        let text = String(repeating: "0", count: 8 - namespace.count) + namespace + "-0000-4000-8000-"
            + String(repeating: "0", count: max(0, 12 - counter.count)) + counter
        return UUID(uuidString: text)!
    }

    private static func check(_ text: String, field: String, maxBytes: Int, identifier: Bool = false) {
        do {
            if identifier {
                try validateIdentifier(text, field: field, maxBytes: maxBytes)
            } else {
                try validateText(text, field: field, maxBytes: maxBytes)
            }
        } catch {
            preconditionFailure("Scenario: \(error)")
        }
    }
}

extension Timestamp {
    /// The time `duration` later, at microsecond precision (sub-microsecond parts are dropped).
    func adding(_ duration: Duration) -> Timestamp {
        let (seconds, attoseconds) = duration.components
        return adding(seconds: seconds).advanced(microseconds: attoseconds / 1_000_000_000_000)
    }

    private func advanced(microseconds delta: Int64) -> Timestamp {
        Timestamp(microseconds: min(max(microseconds + delta, Timestamp.earliest.microseconds), Timestamp.latest.microseconds))
    }
}
