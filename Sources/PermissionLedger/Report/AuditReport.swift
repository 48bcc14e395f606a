import Foundation
import PermissionModel

/// What happened to one child's contacts and permissions over a period, as the ledger knew it at one point, with
/// the proof that the child's records are the ledger's: the content of the audit report that
/// `permission-ledger report` writes, and that ``html(bundleDirectory:)`` renders as one self-contained HTML file.
///
/// ```swift
/// let report = try AuditReport(ledger: ledger, subject: "kid-ben", period: ReportPeriod(from: start, to: end))
/// try report.html().write(toFile: "kid-ben.html", atomically: true, encoding: .utf8)
/// ```
///
/// Making a report reads the child's events and rows in one read transaction and checks each of the child's
/// events against the Merkle tree: its cost grows with the child's events, not with the ledger's. It blocks the
/// calling thread; from async code, use ``Ledger/auditReport(subject:period:asOf:signer:verification:)``.
public struct AuditReport: Hashable, Sendable {
    /// The child (or user) the report is about.
    public var subject: String
    /// The period's first instant, resolved (see ``ReportPeriod``).
    public var from: Timestamp
    /// The period's last instant, resolved (see ``ReportPeriod``).
    public var to: Timestamp
    /// The point of the log the report answers for: what the ledger knew then.
    public var point: AsOfPoint
    /// The log's head when the report was made.
    public var head: LogHead
    /// The contacts known at the start of the period: `known-handles` as of its first instant.
    public var knownAtStart: [KnownHandle]
    /// The contacts known at the end of the period: `known-handles` as of its last instant.
    public var knownAtEnd: [KnownHandle]
    /// Each contact of the child with a row up to the point, with the intervals in which it was known.
    public var contacts: [ContactLane]
    /// Each system permission of the child changed up to the point, with its states.
    public var permissions: [PermissionLane]
    /// The questions asked by the end of the period and not ended before its start, as of the point, by `askedAt`.
    public var questions: [QuestionStatus]
    /// The child's events that happened in the period, in log order.
    public var events: [RecordedEvent]
    /// For each readable contact with an approval or observation, what `who-approved` says of it.
    public var approvals: [CommunicationHandle: [HandleRecord]]
    /// The proof of the child's records.
    public var integrity: ReportIntegrity

    /// Reads the report of `subject` over `period`, as the ledger knew it as of `asOf`.
    ///
    /// - Parameters:
    ///   - ledger: the ledger to read, in one read transaction.
    ///   - subject: the child (or user) the report is about.
    ///   - period: the span of time the report covers (default: the subject's whole history up to the point).
    ///   - asOf: the point of the log the report answers for (default: now).
    ///   - signer: signs the checkpoint the child's events are checked against; without one, the report shows the
    ///     tree's root unsigned.
    ///   - verification: the result of ``Ledger/verify(progress:)``, to show in the report when the caller ran it.
    /// - Throws: ``LedgerError``: `.notFound` when the subject has no event by the point, or for a period that
    ///   ends before it starts or after the point; `.keyUnavailable` without the ledger's key.
    public init(
        ledger: Ledger, subject: String, period: ReportPeriod = .everything, asOf: AsOf = .now,
        signer: CheckpointSigner? = nil, verification: VerificationReport? = nil
    ) throws {
        self = try ledger.read(asOf: asOf, retries: Ledger.readRetries) { view in
            try AuditReport(view: view, subject: subject, period: period, signer: signer, verification: verification)
        }
    }

    init(view: LedgerView, subject: String, period: ReportPeriod, signer: CheckpointSigner?, verification: VerificationReport?) throws {
        let point = view.point
        var all: [RecordedEvent] = []
        try view.history(subject: subject, toSeq: point.seq) { all.append($0) }
        guard let first = all.first else {
            throw LedgerError(.notFound, "\(subject) has no event as of seq \(point.seq)")
        }
        let from = period.from ?? min(first.occurredAt, first.recordedAt)
        let to = period.to ?? point.time
        guard from <= to else { throw LedgerError(.notFound, "the period ends (\(to)) before it starts (\(from))") }
        guard to <= point.time else {
            throw LedgerError(.notFound, "the period ends (\(to)) after the point the report answers for (\(point.time))")
        }
        self.subject = subject
        self.from = from
        self.to = to
        self.point = point
        head = view.head
        knownAtStart = try view.at(.time(from)).knownHandles(subject: subject)
        knownAtEnd = try (to == point.time ? view : view.at(.time(to))).knownHandles(subject: subject)

        var asked: [QuestionStatus] = []
        for recorded in all where recorded.type == .questionAsked {
            guard let id = recorded.questionID, let status = try view.question(id) else { continue }
            asked.append(status)
        }
        questions = asked
            .filter { $0.askedAt <= to && ($0.resolvedAt ?? point.time) >= from }
            .sorted { ($0.askedAt, $0.question.id.uuidString) < ($1.askedAt, $1.question.id.uuidString) }
        events = all.filter { $0.occurredAt >= from && $0.occurredAt <= to }
        contacts = try view.contactLanes(subject: subject, questions: asked)
        permissions = try view.permissionLanes(subject: subject)
        var approvals: [CommunicationHandle: [HandleRecord]] = [:]
        for lane in contacts {
            guard case .readable(let handle) = lane.handle else { continue }
            approvals[handle] = try view.handleRecords(handle, subject: subject)
        }
        self.approvals = approvals
        integrity = try ReportIntegrity(view: view, seqs: all.map(\.seq), signer: signer, verification: verification)
    }

    /// The questions by their state as of the point.
    public var questionsByState: [QuestionState: Int] {
        questions.reduce(into: [:]) { counts, status in counts[status.state, default: 0] += 1 }
    }

    /// The `subject.erased` events of the period.
    public var erasures: [RecordedEvent] { events.filter { $0.type == .subjectErased } }
}

extension Ledger {
    /// ``AuditReport/init(ledger:subject:period:asOf:signer:verification:)`` off the cooperative pool.
    public func auditReport(
        subject: String, period: ReportPeriod = .everything, asOf: AsOf = .now,
        signer: CheckpointSigner? = nil, verification: VerificationReport? = nil
    ) async throws -> AuditReport {
        try await offPool("ledger-report") { [self] _ in
            try AuditReport(ledger: self, subject: subject, period: period, asOf: asOf, signer: signer, verification: verification)
        }
    }
}
