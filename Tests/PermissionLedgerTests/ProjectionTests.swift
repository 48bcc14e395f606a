import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct ProjectionTests {
    static let q1 = QID.q1, q2 = QID.q2, q3 = QID.q3
    static let alex = try! CommunicationHandle(value: "dragonslayer42", kind: .custom)

    static func question(_ ledger: Ledger, _ id: String, asOf: AsOf = .now) throws -> QuestionStatus? {
        try ledger.read(asOf: asOf) { try $0.question(QID.uuid(id)) }
    }

    static func known(_ ledger: Ledger, _ subject: String = "kid-ava", asOf: AsOf = .now) throws -> [KnownGrant] {
        try ledger.read(asOf: asOf) { try $0.knownHandles(subject: subject) }.map(KnownGrant.init)
    }

    static func handle(_ value: String, _ kind: CommunicationHandle.Kind) -> CommunicationHandle {
        try! CommunicationHandle(value: value, kind: kind)
    }

    // MARK: Question states

    struct Resolution: Sendable, CustomTestStringConvertible {
        var line: String
        var state: QuestionState
        var choice: String?
        var via: AnswerVia?
        var error: AskError?
        var testDescription: String { "\(state)" + (via.map { " via \($0)" } ?? "") }
    }

    static let resolutions: [Resolution] = [
        Resolution(line: JSONLine.answered("e2", question: q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"),
                   state: .approved, choice: "approve", via: .messages),
        Resolution(line: JSONLine.answered("e2", question: q1, choice: "approve", via: "inPerson", at: "09:05:00", recorded: "09:05:01"),
                   state: .approved, choice: "approve", via: .inPerson),
        Resolution(line: JSONLine.answered("e2", question: q1, choice: "decline", via: "default", at: "09:05:00", recorded: "09:05:01"),
                   state: .denied, choice: "decline", via: .default),
        Resolution(line: JSONLine.canceled("e2", question: q1, at: "09:05:00", recorded: "09:05:01"), state: .canceled),
        Resolution(line: JSONLine.failed("e2", question: q1, code: "systemError", message: "boom", at: "09:05:00", recorded: "09:05:01"),
                   state: .failed, error: AskError(code: .systemError, message: "boom")),
        Resolution(line: JSONLine.failed("e2", question: q1, code: "contactSyncNotSetup", at: "09:05:00", recorded: "09:05:01"),
                   state: .failed, error: AskError(code: .contactSyncNotSetup)),
        Resolution(line: JSONLine.expired("e2", question: q1, at: "09:05:00", recorded: "09:05:01"), state: .expired),
    ]

    @Test(arguments: resolutions)
    func questionMovesFromPendingToItsResolution(resolution: Resolution) async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "12:00:00"),
                resolution.line)
            let pending = try #require(try Self.question(ledger, Self.q1, asOf: .seq(1)))
            #expect(pending.state == .pending)
            #expect(pending.resolvedAt == nil)
            #expect(pending.choice == nil)
            #expect(pending.via == nil)
            #expect(pending.error == nil)
            #expect(!pending.late)
            #expect(pending.askedAt == (try time("2026-11-20T09:00:00Z")))
            #expect(pending.subject == "kid-ava")
            #expect(pending.events.map(\.seq) == [1])

            let status = try #require(try Self.question(ledger, Self.q1, asOf: .seq(2)))
            #expect(status.state == resolution.state)
            #expect(status.choice?.id == resolution.choice)
            #expect(status.via == resolution.via)
            #expect(status.error == resolution.error)
            #expect(!status.late)
            #expect(status.resolvedAt == (try time("2026-11-20T09:05:00Z")))
            #expect(status.askedAt == pending.askedAt)
            #expect(status.question.id == QID.uuid(Self.q1))
            #expect(status.question.expiresAt == (try time("2026-11-20T12:00:00Z")))
            #expect(status.events.map(\.seq) == [1, 2])
            #expect(status.events.map(\.type) == [.questionAsked, try decodeEvent(resolution.line).type])
            #expect(status.events.map(\.id) == ["e1", "e2"])
            #expect(status.events.map(\.recordedAt) == [try time("2026-11-20T09:00:01Z"), try time("2026-11-20T09:05:01Z")])
            #expect(status.state.isFinal == (resolution.state != .expired))
        }
    }

    @Test func aQuestionNotYetAskedIsAbsent() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.permission("p1", "camera", "denied", at: "08:00:00", recorded: "08:00:01"),
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"))
            #expect(try Self.question(ledger, Self.q1, asOf: .seq(1)) == nil)
            #expect(try Self.question(ledger, Self.q2) == nil)
            #expect(try ledger.read(asOf: .seq(1)) { try $0.questions() }.isEmpty)
            #expect(try ledger.read { try $0.questions() }.count == 1)
        }
    }

    @Test func questionsAreOrderedByAskedAtThenIDAndFiltered() async throws {
        try await withLedger { ledger async throws in
            // Appended Q2, Q3, Q1; asked at 09:10, 09:00, 09:10.
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q2, at: "09:10:00", recorded: "09:10:01"),
                JSONLine.asked("e2", question: Self.q3, subject: "kid-ben", at: "09:00:00", recorded: "09:10:02"),
                JSONLine.asked("e3", question: Self.q1, at: "09:10:00", recorded: "09:10:03"),
                JSONLine.answered("e4", question: Self.q2, choice: "approve", at: "09:11:00", recorded: "09:11:01"))
            let all = try ledger.read { try $0.questions() }
            #expect(all.map(\.question.id) == [QID.uuid(Self.q3), QID.uuid(Self.q1), QID.uuid(Self.q2)])
            #expect(all.allSatisfy { $0.events.isEmpty }, "listings carry no events")
            #expect(try ledger.read { try $0.questions(subject: "kid-ava") }.map(\.question.id) == [QID.uuid(Self.q1), QID.uuid(Self.q2)])
            #expect(try ledger.read { try $0.questions(subject: "kid-ben") }.map(\.question.id) == [QID.uuid(Self.q3)])
            #expect(try ledger.read { try $0.questions(state: .approved) }.map(\.question.id) == [QID.uuid(Self.q2)])
            #expect(try ledger.read { try $0.questions(subject: "kid-ava", state: .pending) }.map(\.question.id) == [QID.uuid(Self.q1)])
            #expect(try ledger.read { try $0.questions(subject: "kid-cleo") }.isEmpty)
            #expect(try ledger.read(asOf: .seq(3)) { try $0.questions(state: .approved) }.isEmpty)
        }
    }

    // MARK: Expiry by the clock

    @Test func aPendingQuestionExpiresByTheClock() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "09:30:00"),
                JSONLine.permission("p1", "camera", "denied", at: "09:29:58", recorded: "09:29:59.999999"),
                JSONLine.permission("p2", "camera", "authorized", at: "09:29:59", recorded: "09:30:00"),
                JSONLine.permission("p3", "camera", "limited", at: "09:44:59", recorded: "09:45:00"))
            let before = try #require(try Self.question(ledger, Self.q1, asOf: .seq(2)))
            #expect(before.state == .pending)
            #expect(before.resolvedAt == nil)

            for point in [AsOf.seq(3), .seq(4), .time(try time("2026-11-20T09:30:00Z")), .time(try time("2026-11-21T00:00:00Z"))] {
                let after = try #require(try Self.question(ledger, Self.q1, asOf: point))
                #expect(after.state == .expired, "as of \(point)")
                #expect(after.resolvedAt == (try time("2026-11-20T09:30:00Z")), "resolvedAt is expiresAt")
                #expect(!after.late)
                #expect(after.choice == nil)
                #expect(after.events.map(\.seq) == [1], "no event was needed")
            }
            #expect(try Self.question(ledger, Self.q1, asOf: .time(try time("2026-11-20T09:29:59.999999Z")))?.state == .pending)
            #expect(try ledger.read(asOf: .seq(3)) { try $0.questions(state: .expired) }.count == 1)
            #expect(try ledger.read(asOf: .seq(2)) { try $0.questions(state: .expired) }.isEmpty)
            #expect(try ledger.read(asOf: .seq(2)) { try $0.questions(state: .pending) }.count == 1)
        }
    }

    @Test func nowUsesTheLedgersClock() async throws {
        try await withTemporaryDirectory { directory async throws in
            let clock = try time("2026-11-20T09:45:00Z")
            let ledger = try Ledger(path: directory + "/l", options: .init(durable: false, clock: { clock }))
            _ = try await ledger.append([try decodeEvent(JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "09:30:00"))])
            let status = try #require(try Self.question(ledger, Self.q1))
            #expect(status.state == .expired)
            let point = try ledger.read { $0.point }
            #expect(point.seq == 1)
            #expect(point.time == clock)
            #expect(try Self.question(ledger, Self.q1, asOf: .seq(1))?.state == .pending, "as of seq 1 the clock is its recordedAt")
        }
    }

    // MARK: Known handles

    @Test func anApprovalMakesEveryHandleKnownFromTheAnswersOccurredAt() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01",
                               people: [("dragonslayer42", "custom"), ("+1 (555) 010-9999", "phoneNumber"), ("Mom@Example.com", "emailAddress")]),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:07:00"))
            #expect(try Self.known(ledger, asOf: .seq(1)).isEmpty)
            let known = try Self.known(ledger)
            #expect(known.map(\.handle) == [Self.alex, Self.handle("mom@example.com", .emailAddress), Self.handle("+15550109999", .phoneNumber)])
            for h in known {
                #expect(h.since == (try time("2026-11-20T09:05:00Z")), "occurredAt, not recordedAt")
                #expect(h.until == nil)
                #expect(h.source == .question(QID.uuid(Self.q1)))
            }
            #expect(try ledger.read { try $0.isKnownHandle(Self.handle("+1.555.010.9999", .phoneNumber), subject: "kid-ava") })
            #expect(try ledger.read { try $0.isKnownHandle(Self.handle(" MOM@example.COM", .emailAddress), subject: "kid-ava") })
            #expect(try !ledger.read { try $0.isKnownHandle(Self.alex, subject: "kid-ben") }, "per subject")
            #expect(try Self.known(ledger, "kid-ben").isEmpty)
            #expect(try !ledger.read { try $0.isKnownHandle(Self.handle("DragonSlayer42", .custom), subject: "kid-ava") })
        }
    }

    @Test func aDenialChangesNothing() async throws {
        try await withLedger { ledger async throws in
            // A question about dragonslayer42 every ten minutes from 09:00, each answered five minutes later.
            var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T09:00:00Z"))
            @discardableResult func askAndAnswer(_ choice: String) throws -> UUID {
                let question = try s.asked(about: [Self.alex])
                s.advance(by: .seconds(300))
                s.answered(question, choice: choice)
                s.advance(by: .seconds(300))
                return question
            }
            try askAndAnswer("decline")
            _ = try await ledger.append(s.events)
            #expect(try Self.known(ledger).isEmpty, "declined: never known")
            let approved = try askAndAnswer("approve")  // answered at 09:15
            try askAndAnswer("decline")
            _ = try await ledger.append(Array(s.events.dropFirst(2)))
            let known = try Self.known(ledger)
            #expect(known == [KnownGrant(handle: Self.alex, since: try time("2026-11-20T09:15:00Z"), until: nil, source: .question(approved))])
        }
    }

    @Test func aTimeLimitedApprovalLapses() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:55:00", recorded: "09:55:01", choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e2", question: Self.q1, choice: "approve-1h", at: "10:00:00", recorded: "10:00:01"))
            let expected = KnownGrant(handle: Self.alex, since: try time("2026-11-20T10:00:00Z"), until: try time("2026-11-20T11:00:00Z"), source: .question(QID.uuid(Self.q1)))
            for t in ["2026-11-20T10:00:01Z", "2026-11-20T10:30:00Z", "2026-11-20T10:59:59.999999Z"] {
                #expect(try Self.known(ledger, asOf: .time(try time(t))) == [expected], "as of \(t)")
                #expect(try ledger.read(asOf: .time(try time(t))) { try $0.isKnownHandle(Self.alex, subject: "kid-ava") })
            }
            #expect(try Self.known(ledger, asOf: .seq(2)) == [expected])
            for t in ["2026-11-20T11:00:00Z", "2026-11-20T12:00:00Z"] {
                #expect(try Self.known(ledger, asOf: .time(try time(t))).isEmpty, "lapsed as of \(t)")
                #expect(try !ledger.read(asOf: .time(try time(t))) { try $0.isKnownHandle(Self.alex, subject: "kid-ava") })
            }
            // The question itself stays approved.
            #expect(try Self.question(ledger, Self.q1, asOf: .time(try time("2026-11-20T12:00:00Z")))?.state == .approved)
        }
    }

    /// Two approvals of the same handle, in order, and what the handle looks like afterwards.
    struct GrantCase: Sendable, CustomTestStringConvertible {
        var first: String, second: String
        var since: String, until: String?, source: String
        var testDescription: String { "\(first) then \(second)" }
    }

    static let grantCases: [GrantCase] = [
        // A time-limited approval never shortens a current one that lasts longer...
        GrantCase(first: "approve", second: "approve-1h", since: "10:00:00", until: nil, source: q1),
        GrantCase(first: "approve-2h", second: "approve-1h", since: "10:00:00", until: "12:00:00", source: q1),
        // ...but otherwise each approval replaces what came before.
        GrantCase(first: "approve-1h", second: "approve", since: "10:30:00", until: nil, source: q2),
        GrantCase(first: "approve-1h", second: "approve-2h", since: "10:30:00", until: "12:30:00", source: q2),
        GrantCase(first: "approve", second: "approve", since: "10:30:00", until: nil, source: q2),
    ]

    @Test(arguments: grantCases)
    func approvalsOfTheSameHandle(grant: GrantCase) async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:55:00", recorded: "09:55:01", choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e2", question: Self.q1, choice: grant.first, at: "10:00:00", recorded: "10:00:01"),
                JSONLine.asked("e3", question: Self.q2, at: "10:25:00", recorded: "10:25:01", choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e4", question: Self.q2, choice: grant.second, at: "10:30:00", recorded: "10:30:01"))
            let expected = KnownGrant(
                handle: Self.alex, since: try time(JSONLine.at(grant.since)), until: try grant.until.map { try time(JSONLine.at($0)) },
                source: .question(QID.uuid(grant.source)))
            #expect(try Self.known(ledger, asOf: .seq(4)) == [expected])
            // Still known at 11:45 unless the grant that stands lapsed by then.
            let later = try Self.known(ledger, asOf: .time(try time("2026-11-20T11:45:00Z")))
            #expect(later == (expected.until.map { $0 > (try! time("2026-11-20T11:45:00Z")) } ?? true ? [expected] : []))
        }
    }

    @Test func aLapsedGrantIsReplacedByANewTimeLimitedOne() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:55:00", recorded: "09:55:01", choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e2", question: Self.q1, choice: "approve-2h", at: "10:00:00", recorded: "10:00:01"),
                JSONLine.asked("e3", question: Self.q2, at: "12:55:00", recorded: "12:55:01", choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e4", question: Self.q2, choice: "approve-1h", at: "13:00:00", recorded: "13:00:01"))
            #expect(try Self.known(ledger, asOf: .seq(3)).isEmpty, "the 2 h grant lapsed at 12:00")
            #expect(try Self.known(ledger, asOf: .seq(4)) == [
                KnownGrant(handle: Self.alex, since: try time("2026-11-20T13:00:00Z"), until: try time("2026-11-20T14:00:00Z"), source: .question(QID.uuid(Self.q2))),
            ])
        }
    }

    @Test func anObservationReplacesApprovalsForTheHandlesItChecked() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "10:00:00", recorded: "10:00:01",
                               people: [("robo_rex", "custom"), ("555-010-4477", "phoneNumber")]),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "10:05:00", recorded: "10:05:01"),
                JSONLine.observed("e3", checked: [("robo_rex", "custom"), ("+1 555 010 7788", "phoneNumber")],
                                  known: [("+1.555.010.7788", "phoneNumber")], at: "10:30:00", recorded: "10:30:01"),
                JSONLine.observed("e4", checked: [("unknown.caller@example.com", "emailAddress")], known: [], at: "11:00:00", recorded: "11:00:01"))
            #expect(try Self.known(ledger, asOf: .seq(2)).map(\.handle) == [Self.handle("robo_rex", .custom), Self.handle("5550104477", .phoneNumber)])
            let known = try Self.known(ledger)
            #expect(known == [
                KnownGrant(handle: Self.handle("+15550107788", .phoneNumber), since: try time("2026-11-20T10:30:00Z"), until: nil, source: .observation(3)),
                KnownGrant(handle: Self.handle("5550104477", .phoneNumber), since: try time("2026-11-20T10:05:00Z"), until: nil, source: .question(QID.uuid(Self.q1))),
            ])
            #expect(try !ledger.read { try $0.isKnownHandle(Self.handle("robo_rex", .custom), subject: "kid-ava") }, "revoked by the observation")
            #expect(try !ledger.read { try $0.isKnownHandle(Self.handle("unknown.caller@example.com", .emailAddress), subject: "kid-ava") })
        }
    }

    @Test func anObservationIsReplacedByALaterApprovalUnlessItLastsLonger() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.observed("e1", checked: [("dragonslayer42", "custom"), ("quietfox", "custom")], known: [("dragonslayer42", "custom")],
                                  at: "09:00:00", recorded: "09:00:01"),
                JSONLine.asked("e2", question: Self.q1, at: "09:55:00", recorded: "09:55:01",
                               people: [("dragonslayer42", "custom"), ("quietfox", "custom")], choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e3", question: Self.q1, choice: "approve-1h", at: "10:00:00", recorded: "10:00:01"))
            #expect(try Self.known(ledger, asOf: .seq(3)) == [
                // Known without limit by the observation: a 1 h approval does not shorten it.
                KnownGrant(handle: Self.alex, since: try time("2026-11-20T09:00:00Z"), until: nil, source: .observation(1)),
                // Not known by the observation: the approval makes it known for an hour.
                KnownGrant(handle: Self.handle("quietfox", .custom), since: try time("2026-11-20T10:00:00Z"), until: try time("2026-11-20T11:00:00Z"), source: .question(QID.uuid(Self.q1))),
            ])
            // An observation, in turn, replaces a time-limited approval (and may make it permanent).
            try await ledger.append(json:
                JSONLine.observed("e4", checked: [("quietfox", "custom")], known: [("quietfox", "custom")], at: "10:10:00", recorded: "10:10:01"))
            #expect(try Self.known(ledger, asOf: .time(try time("2026-11-20T12:00:00Z"))).map(\.source) == [.observation(1), .observation(4)])
        }
    }

    @Test(arguments: [Int64(315_576_000_000), .max])
    func aVeryLongGrantIsWrittenAsTheTimeItLapses(seconds: Int64) async throws {
        try await withLedger { ledger async throws in
            let choices = #"[{"id":"long","title":"Approve for a long time","answer":"approval","grantSeconds":\#(seconds)},{"id":"decline","title":"Decline","answer":"denial"}]"#
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", choices: choices),
                JSONLine.answered("e2", question: Self.q1, choice: "long", at: "10:00:00", recorded: "10:00:01"))
            let known = try ledger.read(asOf: .seq(2)) { try $0.knownHandles(subject: "kid-ava") }
            let until = try #require(known.first?.until)
            // What the JSON says must be what the ledger means: the written time reads back as the same instant.
            let written = try Timestamp(rfc3339: until.description)
            #expect(written.microseconds == until.microseconds, "until is written as \(until.description)")
        }
    }

    /// Handle keys are `subject NUL kind value NUL`: they are prefix-free only if no value holds a NUL.
    /// Custom handles and phone numbers cannot; an email address either must be rejected, or be kept apart.
    @Test
    func anEmailWithANulByteIsKeptApartFromItsPrefix() async throws {
        guard (try? CommunicationHandle(value: "a@b\u{0}c", kind: .emailAddress)) != nil else { return }  // rejecting it is fine
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01",
                               people: [("a@b", "emailAddress"), ("a@b\\u0000c", "emailAddress")], choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "10:00:00", recorded: "10:00:01"),
                JSONLine.asked("e3", question: Self.q2, at: "10:01:00", recorded: "10:01:01", people: [("a@b", "emailAddress")], choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e4", question: Self.q2, choice: "approve-1h", at: "10:02:00", recorded: "10:02:01"))
            let known = try Self.known(ledger, asOf: .seq(4))
            #expect(known.map(\.handle.value) == ["a@b", "a@b\u{0}c"])
            #expect(known.map(\.until) == [nil, nil], "the 1 h approval does not shorten the permanent one")
            #expect(known.map(\.source) == [.question(QID.uuid(Self.q1)), .question(QID.uuid(Self.q1))])
            let report = try await ledger.verify()
            #expect(report.isIntact, "\(report.problem ?? "")")
        }
    }

    /// "café" written precomposed (U+00E9) and decomposed (e U+0301): whether these are one custom handle or two,
    /// the ledger has to answer the same way in its kept projections and in a rebuild.
    @Test
    func canonicallyEquivalentCustomHandlesAreTreatedConsistently() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", people: [("caf\\u00e9", "custom")], choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "10:00:00", recorded: "10:00:01"),
                JSONLine.asked("e3", question: Self.q2, at: "10:01:00", recorded: "10:01:01", people: [("cafe\\u0301", "custom")], choices: JSONLine.timeLimitedChoices),
                JSONLine.answered("e4", question: Self.q2, choice: "approve-1h", at: "10:02:00", recorded: "10:02:01"))
            let report = try await ledger.verify()
            #expect(report.isIntact, "\(report.problem ?? "")")
            let known = try Self.known(ledger, asOf: .seq(4)).map(\.handle)
            #expect(Set(known).count == known.count, "no two listed handles are the same handle: \(known)")
        }
    }

    @Test func anUpdateQuestionMakesNoHandleKnown() async throws {
        try await withLedger { ledger async throws in
            var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T09:00:00Z"))
            let update = try s.asked(appUpdate: "Version 5 adds chat.")
            s.advance(by: .seconds(300))
            s.answered(update, choice: "approve")
            _ = try await ledger.append(s.events)
            #expect(try ledger.read { try $0.question(update) }?.state == .approved)
            #expect(try ledger.read { try $0.question(update) }?.question.topic.name == "significantAppUpdate")
            #expect(try Self.known(ledger).isEmpty)
        }
    }

    @Test func knownHandlesAreOrderedByKindThenValueByCodePoint() async throws {
        let people = [
            ("5550100002", "phoneNumber"), ("alpha", "custom"), ("b@example.com", "emailAddress"), ("Zed", "custom"),
            ("+15550100001", "phoneNumber"), ("a@example.com", "emailAddress"), ("é-handle", "custom"), ("zed", "custom"),
        ]
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", people: people),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"))
            let known = try Self.known(ledger)
            #expect(known.map(\.handle.kind.rawValue) == ["custom", "custom", "custom", "custom", "emailAddress", "emailAddress", "phoneNumber", "phoneNumber"])
            #expect(known.map(\.handle.value) == ["Zed", "alpha", "zed", "é-handle", "a@example.com", "b@example.com", "+15550100001", "5550100002"])
            // The question keeps its people's order.
            #expect(try Self.question(ledger, Self.q1)?.question.topic.handles.map(\.value) == people.map(\.0))
        }
    }

    // MARK: Permissions

    @Test func permissionsShowTheLatestStatePerPermission() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.permission("p1", "camera", "notDetermined", cause: "inferred", at: "08:00:00", recorded: "08:00:01"),
                JSONLine.permission("p2", "camera", "askAgain", cause: "prePrompt", at: "08:01:00", recorded: "08:01:01"),
                JSONLine.permission("p3", "microphone", "authorized", cause: "systemPrompt", at: "08:02:00", recorded: "08:02:01"),
                JSONLine.permission("p4", "contacts", "denied", cause: "systemPrompt", at: "08:03:00", recorded: "08:03:01"),
                JSONLine.permission("p5", subject: "kid-ben", "camera", "authorized", at: "08:04:00", recorded: "08:04:01"),
                JSONLine.permission("p6", "camera", "doNotAskAgain", cause: "prePrompt", at: "08:05:00", recorded: "08:05:01"),
                JSONLine.permission("p7", "contacts", "notDetermined", cause: "reset", at: "08:06:00", recorded: "08:06:01"),
                JSONLine.permission("p8", "bluetooth", "unsupported", at: "08:07:00", recorded: "08:07:01"))
            let ava = try ledger.read { try $0.permissions(subject: "kid-ava") }
            #expect(ava.map(\.permission) == [.bluetooth, .camera, .contacts, .microphone], "ordered by name")
            #expect(ava.map(\.state) == [.unsupported, .doNotAskAgain, .notDetermined, .authorized])
            #expect(ava.map(\.canPrompt) == [false, false, true, false])
            #expect(ava.map(\.cause) == [nil, .prePrompt, .reset, .systemPrompt])
            #expect(ava.map(\.since) == [try time("2026-11-20T08:07:00Z"), try time("2026-11-20T08:05:00Z"), try time("2026-11-20T08:06:00Z"), try time("2026-11-20T08:02:00Z")])

            let early = try ledger.read(asOf: .seq(2)) { try $0.permissions(subject: "kid-ava") }
            #expect(early.map(\.state) == [.askAgain])
            #expect(early.map(\.canPrompt) == [true])
            #expect(try ledger.read(asOf: .seq(4)) { try $0.permissions(subject: "kid-ava") }.map(\.permission) == [.camera, .contacts, .microphone])

            let ben = try ledger.read { try $0.permissions(subject: "kid-ben") }
            #expect(ben.map(\.permission) == [.camera])
            #expect(ben.map(\.state) == [.authorized])
            #expect(try ledger.read { try $0.permissions(subject: "kid-cleo") }.isEmpty)
            #expect(try ledger.read { try $0.permissions(subject: "kid") }.isEmpty, "subjects are not prefixes of each other")
        }
    }

    /// The permissions query seeks each permission by name and skips the names a subject has no rows for, by
    /// the key its seek lands on. Checked at every point of a seeded log against a fold of the changes, for
    /// subjects that hold one, a few or all permissions (the first and last names in key order among them, and
    /// `photoLibrary` with `photoLibraryAddOnly`, whose name starts with it), and for subjects whose names
    /// start each other's.
    @Test func permissionsAsOfEveryPointEqualAFoldOfTheChanges() async throws {
        let inOrder = SystemPermission.allCases.sorted()
        let pools: [(subject: String, permissions: [SystemPermission])] = [
            ("kid", [.photoLibrary, .photoLibraryAddOnly]),
            ("kid-a", SystemPermission.allCases),
            ("kid-ab", [inOrder.first!, inOrder.last!]),
            ("kid-b", [.photoLibraryAddOnly, .camera, .siri, .bluetooth, .tracking]),
            ("kid-c", [.health]),
        ]
        var random = SeededRandom(seed: 11)
        var lines: [String] = []
        var changes: [(subject: String, status: PermissionAnswer)] = []
        for i in 0..<600 {
            let pool = pools[Int(random.next() % UInt64(pools.count))]
            let permission = pool.permissions[Int(random.next() % UInt64(pool.permissions.count))]
            let state = SystemPermission.State.allCases[Int(random.next() % UInt64(SystemPermission.State.allCases.count))]
            let clock = String(format: "%02d:%02d:%02d", 8 + i / 3600, i / 60 % 60, i % 60)
            lines.append(JSONLine.permission("p\(i)", subject: pool.subject, permission.rawValue, state.rawValue, at: clock, recorded: clock))
            changes.append((pool.subject, PermissionAnswer(permission: permission, state: state, since: try time("2026-11-20T\(clock)Z"), cause: nil)))
        }
        try await withLedger { ledger async throws in
            try await ledger.append(lines.map { try decodeEvent($0) })
            var folded: [String: [SystemPermission: PermissionAnswer]] = [:]
            for seq in 0...changes.count {
                if seq > 0 { folded[changes[seq - 1].subject, default: [:]][changes[seq - 1].status.permission] = changes[seq - 1].status }
                for (subject, _) in pools + [("ki", []), ("kid-", []), ("kid-abc", [])] {
                    let expected = (folded[subject] ?? [:]).values.sorted { $0.permission < $1.permission }
                    let actual = try ledger.read(asOf: .seq(UInt64(seq))) { try $0.permissions(subject: subject) }
                        .map { PermissionAnswer(permission: $0.permission, state: $0.state, since: $0.since, cause: $0.cause) }
                    #expect(actual == expected, "\(subject) as of seq \(seq)")
                }
            }
        }
    }

    @Test func subjectsAreListedByCodePointAsOfThePoint() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.permission("p1", subject: "kid-ben", "camera", "denied", at: "08:00:00", recorded: "08:00:01"),
                JSONLine.permission("p2", subject: "kid-é", "camera", "denied", at: "08:01:00", recorded: "08:01:01"),
                JSONLine.asked("e1", question: Self.q1, subject: "Kid-Zed", at: "08:02:00", recorded: "08:02:01"),
                JSONLine.permission("p3", subject: "kid-ava", "camera", "denied", at: "08:03:00", recorded: "08:03:01"),
                JSONLine.permission("p4", subject: "kid-ben", "camera", "authorized", at: "08:04:00", recorded: "08:04:01"),
                JSONLine.permission("p5", subject: "kid", "camera", "authorized", at: "08:05:00", recorded: "08:05:01"))
            #expect(try ledger.read { try $0.subjects() } == ["Kid-Zed", "kid", "kid-ava", "kid-ben", "kid-é"])
            #expect(try ledger.read(asOf: .seq(3)) { try $0.subjects() } == ["Kid-Zed", "kid-ben", "kid-é"])
            #expect(try ledger.read(asOf: .seq(0)) { try $0.subjects() }.isEmpty)
        }
    }

    // MARK: The fixtures' stated final states

    @Test func timeLimitedFixture() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("time-limited.jsonl")
            let final = try Self.known(ledger, "kid-ben", asOf: .seq(7))
            #expect(final == [KnownGrant(handle: Self.handle("aunt.jo@example.net", .emailAddress), since: try time("2026-11-20T10:05:00Z"), until: nil,
                                          source: .question(QID.uuid("6A3F1C2E-0009-4000-8000-000000000002")))])
            let atSix = try Self.known(ledger, "kid-ben", asOf: .seq(6))
            #expect(atSix.map(\.handle.value) == ["pixelpal", "aunt.jo@example.net"])
            #expect(atSix.first?.until == (try time("2026-11-20T11:00:00Z")))
            let permissions = try ledger.read(asOf: .seq(7)) { try $0.permissions(subject: "kid-ben") }
            #expect(permissions.map(\.permission) == [.notifications])
            #expect(permissions.map(\.state) == [.authorized])
        }
    }

    @Test func lateAnswerFixture() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("late-answer.jsonl")
            let ids = (1...3).map { "6A3F1C2E-0005-4000-8000-00000000000\($0)" }
            let final = try ids.map { try #require(try Self.question(ledger, $0, asOf: .seq(7))) }
            #expect(final.map(\.state) == [.approved, .denied, .expired])
            #expect(final.map(\.late) == [true, true, false])
            #expect(final.map(\.resolvedAt) == [try time("2026-11-20T14:45:00Z"), try time("2026-11-20T14:35:00Z"), try time("2026-11-20T14:55:00Z")])
            #expect(try ids.map { try Self.question(ledger, $0, asOf: .seq(4))?.state } == [.expired, .pending, .pending])
            let q2 = try #require(try Self.question(ledger, ids[1], asOf: .time(try time("2026-11-20T14:45:00Z"))))
            #expect(q2.state == .expired)
            #expect(q2.resolvedAt == (try time("2026-11-20T14:40:00Z")))
            #expect(try Self.known(ledger, "kid-ben", asOf: .seq(7)).map(\.handle) == [Self.handle("sk8rboi", .custom)])
        }
    }

    @Test func expiryByClockFixture() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("expiry-by-clock.jsonl")
            let ids = (1...3).map { "6A3F1C2E-0006-4000-8000-00000000000\($0)" }
            let final = try ids.map { try #require(try Self.question(ledger, $0, asOf: .seq(5))) }
            #expect(final.map(\.state) == [.expired, .pending, .expired])
            #expect(final.map(\.resolvedAt) == [try time("2026-11-20T16:30:00Z"), nil, try time("2026-11-20T16:45:01Z")])
            #expect(try ids.map { try Self.question(ledger, $0, asOf: .seq(3))?.state } == [.pending, .pending, .pending])
            #expect(try ids.map { try Self.question(ledger, $0, asOf: .seq(4))?.state } == [.expired, .pending, .pending])
            let permissions = try ledger.read(asOf: .seq(5)) { try $0.permissions(subject: "kid-ava") }
            #expect(permissions.map(\.permission) == [.camera, .microphone])
            #expect(permissions.map(\.canPrompt) == [false, true])
        }
    }

    @Test func severalHandlesFixture() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("several-handles.jsonl")
            let q = try #require(try Self.question(ledger, "6A3F1C2E-000A-4000-8000-000000000001"))
            #expect(q.question.topic.handles.map(\.value) == ["+14155550132", "grandma.rose@example.com", "Skater_Girl.99"])
            guard case .communication(let topic) = q.question.topic else { Issue.record("not a communication topic"); return }
            #expect(topic.orderedActions == [.message, .audioCall, .videoCall, .chat])
            #expect(topic.personInformation.first?.nameComponents?.nickname == "Aunt May")
            #expect(try Self.known(ledger, "kid-cleo", asOf: .seq(2)).count == 3)
            let final = try Self.known(ledger, "kid-cleo", asOf: .seq(3))
            #expect(final.map(\.handle) == [Self.handle("Skater_Girl.99", .custom), Self.handle("+14155550132", .phoneNumber)])
            #expect(final.map(\.source) == [.question(q.question.id), .observation(3)])
        }
    }

    @Test func permissionsFixture() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("permissions.jsonl")
            let ava = try ledger.read(asOf: .seq(15)) { try $0.permissions(subject: "kid-ava") }
            #expect(ava.map(\.permission) == [.camera, .contacts, .microphone, .notifications, .photoLibrary])
            #expect(ava.map(\.state) == [.doNotAskAgain, .notDetermined, .authorized, .provisional, .limited])
            #expect(ava.map(\.canPrompt) == [false, true, false, false, false])
            let ben = try ledger.read(asOf: .seq(15)) { try $0.permissions(subject: "kid-ben") }
            #expect(ben.map(\.permission) == [.camera, .health, .locationWhenInUse, .tracking])
            #expect(ben.map(\.state) == [.denied, .unsupported, .authorized, .restricted])
            #expect(ben.allSatisfy { !$0.canPrompt })
            #expect(try ledger.read(asOf: .seq(2)) { try $0.permissions(subject: "kid-ava") }.first { $0.permission == .camera }?.state == .askAgain)
            #expect(try ledger.read(asOf: .seq(11)) { try $0.permissions(subject: "kid-ava") }.first { $0.permission == .contacts }?.state == .denied)
            #expect(QueryJSON.missingPermissions([.camera, .microphone], in: ava) == [.camera])
            #expect(QueryJSON.missingPermissions([.microphone, .notifications, .photoLibrary], in: ava).isEmpty)
        }
    }

    @Test func familyDayFixture() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("family-day.jsonl")
            #expect(try ledger.head().seq == 1200)
            let counts = try ledger.read(asOf: .seq(1200)) { view in
                try ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"].map { try view.knownHandles(subject: $0).count }
            }
            #expect(counts == [6, 6, 5, 8])
            let midway = try ledger.read(asOf: .seq(600)) { view in
                try ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"].map { try view.knownHandles(subject: $0).count }
            }
            #expect(midway == [4, 7, 5, 7])
            let questions = try ledger.read(asOf: .seq(1200)) { try $0.questions() }
            #expect(questions.count == 375)
            let ava = questions.filter { $0.subject == "kid-ava" }
            // approved 13 + 7 late, canceled 13, denied 20 + 8 late, expired 4 + 1 by the clock, failed 6, pending 5.
            #expect(ava.count { $0.state == .approved } == 20)
            #expect(ava.count { $0.state == .approved && $0.late } == 7)
            #expect(ava.count { $0.state == .denied } == 28)
            #expect(ava.count { $0.state == .denied && $0.late } == 8)
            #expect(ava.count { $0.state == .canceled } == 13)
            #expect(ava.count { $0.state == .expired } == 5)
            #expect(ava.count { $0.state == .failed } == 6)
            #expect(ava.count { $0.state == .pending } == 5)
            let dev = try ledger.read(asOf: .seq(1200)) { try $0.knownHandles(subject: "kid-dev") }
            #expect(dev.map(\.handle.value) == ["gr8_gamer", "mysterygamer77", "quietfox", "oliver.bennett@example.co.uk",
                                                "+15550100101", "+15550100102", "+15550100141", "+15550100142"])
            let ben = try ledger.read(asOf: .seq(1200)) { try $0.knownHandles(subject: "kid-ben") }
            #expect(ben.last?.until == (try time("2026-11-20T20:30:12.750000Z")))
        }
    }
}
