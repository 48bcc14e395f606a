import Foundation
import PermissionLedger
import PermissionModel
import Testing

@Suite struct AcceptanceRuleTests {
    // MARK: The fixture library

    /// What the reason for rejecting each invalid fixture's last line must mention (every string, case-insensitively).
    static let reasonMentions: [String: [String]] = [
        "answer-after-cancel.jsonl": ["canceled"],
        "answer-after-expiry.jsonl": ["expiresAt"],
        "answer-after-failure.jsonl": ["failed"],
        "answer-at-expiry.jsonl": ["expiresAt"],
        "answer-conflicting-second.jsonl": ["already answered", "decline"],
        "answer-subject-mismatch.jsonl": ["subject", "kid-ben"],
        "answer-unknown-choice.jsonl": ["approve-2h"],
        "broken-json.jsonl": ["JSON"],
        "cancel-after-answer.jsonl": ["pending"],
        "choice-ids-duplicate.jsonl": ["choices", "approve"],
        "choices-no-approval.jsonl": ["choices", "approval"],
        "choices-no-denial.jsonl": ["choices", "denial"],
        "custom-handle-empty.jsonl": ["handle", "empty"],
        "default-choice-not-among-choices.jsonl": ["defaultChoice", "deny"],
        "email-two-at.jsonl": ["email", "2 @ signs"],
        "erased-value-without-commitment.jsonl": ["erased", "unknown field"],
        "erased-without-its-erasure.jsonl": ["erased", "no erasure of its subject"],
        "erasure-nothing-to-erase.jsonl": ["nothing to erase"],
        "erasure-basis-missing.jsonl": ["erasure.basis", "missing"],
        "erasure-before-without-offset.jsonl": ["erasure.before", "time zone"],
        "erasure-reference-control-character.jsonl": ["erasure.reference", "U+0007"],
        "erasure-reference-empty.jsonl": ["erasure.reference", "empty"],
        "erasure-reference-too-long.jsonl": ["erasure.reference", "128"],
        "erasure-unknown-basis.jsonl": ["basis", "becauseISaidSo"],
        "erasure-unknown-field.jsonl": ["erasure.requestedBy", "unknown field"],
        "event-id-reused-different-content.jsonl": ["inv-02"],
        "expired-after-answer.jsonl": ["pending"],
        "expires-not-after-occurred.jsonl": ["expiresAt"],
        "fail-after-cancel.jsonl": ["pending"],
        "grant-seconds-negative.jsonl": ["grantSeconds"],
        "grant-seconds-on-denial.jsonl": ["grantSeconds"],
        "grant-seconds-zero.jsonl": ["grantSeconds"],
        "hash-mismatch.jsonl": ["hash"],
        "id-empty.jsonl": ["id", "empty"],
        "id-too-long.jsonl": ["id", "128"],
        "missing-subject.jsonl": ["subject", "missing"],
        "observed-checked-empty.jsonl": ["checked"],
        "observed-known-not-subset.jsonl": ["known[1]", "custom"],
        "people-empty.jsonl": ["people"],
        "people-same-handle.jsonl": ["people[1]", "people[0]"],
        "phone-too-few-digits.jsonl": ["phone", "2 digits"],
        "question-id-not-uuid.jsonl": ["question.id", "UUID"],
        "question-id-reused.jsonl": ["6A3F1C2E-BAD0-4000-8000-000000000001", "already"],
        "recorded-at-decreasing.jsonl": ["recordedAt"],
        "seq-mismatch.jsonl": ["seq", "5"],
        "subject-control-character.jsonl": ["subject", "control"],
        "time-without-offset.jsonl": ["occurredAt"],
        "topic-both-kinds.jsonl": ["communication", "significantAppUpdate"],
        "unknown-action.jsonl": ["actions", "videoChat"],
        "unknown-cause.jsonl": ["cause", "userAction"],
        "unknown-choice-answer.jsonl": ["answer", "decline"],
        "unknown-error-code.jsonl": ["code", "networkError"],
        "unknown-event-type.jsonl": ["type", "question.approved"],
        "unknown-field.jsonl": ["responder"],
        "unknown-handle-kind.jsonl": ["kind", "username"],
        "unknown-permission-state.jsonl": ["state", "granted"],
        "unknown-permission.jsonl": ["permission", "location"],
        "unknown-question-id.jsonl": ["6A3F1C2E-BAD0-4000-8000-000000000099"],
        "unknown-via.jsonl": ["via", "screenTime"],
        "update-description-empty.jsonl": ["description"],
        "wrong-json-type.jsonl": ["grantSeconds"],
    ]

    @Test func theLibraryHasFixtures() {
        #expect(Fixtures.valid.count >= 15, "\(Fixtures.directory.path)")
        #expect(Fixtures.invalid.count >= 51)
        #expect(Set(Fixtures.invalid) == Set(Self.reasonMentions.keys), "every invalid fixture has its expected reason here")
    }

    @Test(arguments: Fixtures.invalid)
    func invalidFixtureLastLineIsRejectedAndNothingChanges(name: String) async throws {
        let lines = try Fixtures.rawLines(name, invalid: true)
        let header = try Fixtures.header(name, invalid: true)
        let bad = try #require(lines.last { !String(decoding: $0.bytes, as: UTF8.self).trimmingCharacters(in: .whitespaces).isEmpty })
        let declared = try #require(header.first { $0.hasPrefix("line:") }.flatMap { Int($0.dropFirst(5).trimmingCharacters(in: .whitespaces)) })
        #expect(declared == bad.number, "the header's `# line:` names the last line")
        #expect(header.contains { $0.hasPrefix("rejects:") })

        try await withLedger { ledger async throws in
            // Everything before the bad line is valid, in order.
            var before: [PermissionEvent] = []
            for line in lines where line.number < bad.number {
                if let event = try EventJSON.decode(line: line.bytes) { before.append(event) }
            }
            let summary = try await ledger.append(before)
            #expect(summary.appended == before.count)
            let export = try ledger.exportText()
            let head = try ledger.head()
            let digest = try await ledger.digest()
            #expect(head.seq == UInt64(before.count))

            // The bad line: rejected by the reader or by a rule.
            let reason: String
            do {
                let event = try #require(try EventJSON.decode(line: bad.bytes), "line \(bad.number) is not an event")
                let rejected = await rejections { _ = try await ledger.append([event]) }
                #expect(rejected.map(\.index) == [0])
                reason = rejected.first.map { "\($0.rejection)" } ?? ""
                // validate() agrees with append().
                #expect(throws: AppendRejected.self) { try ledger.validate([event]) }
            } catch let rejection as EventRejection {
                reason = rejection.description
            }
            for word in Self.reasonMentions[name] ?? [] {
                #expect(reason.localizedCaseInsensitiveContains(word), "\(name): \(quoted(word)) not in: \(reason)")
            }

            // Nothing was written.
            #expect(try ledger.exportText() == export)
            #expect(try ledger.head() == head)
            #expect(try await ledger.digest() == digest)
            #expect(try await ledger.verify().isIntact)
        }
    }

    @Test(arguments: Fixtures.invalid)
    func invalidFixtureImportedWholeWritesNothing(name: String) async throws {
        // Files whose last line the reader rejects never reach the ledger; the others are offered whole.
        var events: [PermissionEvent] = []
        for line in try Fixtures.rawLines(name, invalid: true) {
            do {
                if let event = try EventJSON.decode(line: line.bytes) { events.append(event) }
            } catch {
                return
            }
        }
        try await withLedger { ledger async throws in
            let rejected = await rejections { _ = try await ledger.append(events) }
            #expect(rejected.map(\.index) == [events.count - 1], "only the last event is rejected")
            #expect(try ledger.head() == .empty)
            #expect(try ledger.exportText().isEmpty)
        }
    }

    @Test(arguments: Fixtures.valid)
    func validFixtureImportsWholly(name: String) async throws {
        try await withLedger { ledger async throws in
            let events = try Fixtures.fixture(name).events
            let summary = try await ledger.importFixture(name)
            #expect(summary.outcomes.count == events.count)
            #expect(summary.appended + summary.duplicates == events.count)
            #expect(summary.head.seq == UInt64(summary.appended))
            #expect(try ledger.head() == summary.head)
            if name == "duplicate-response.jsonl" {
                #expect(summary.appended == 3)
                #expect(summary.duplicates == 3)
            } else {
                #expect(summary.duplicates == 0)
            }
            let report = try await ledger.verify()
            #expect(report.isIntact, "\(report.problem ?? "")")
            #expect(report.events == summary.head.seq)
            #expect(report.head == summary.head.hash)
        }
    }

    // MARK: Targeted rules

    static let q1 = QID.q1

    @Test func answerAfterAnExpiredEventIsAcceptedAndLate() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "10:00:00"),
                JSONLine.expired("e2", question: Self.q1, at: "09:30:00", recorded: "09:30:01"))
            let summary = try await ledger.append(json: JSONLine.answered("e3", question: Self.q1, choice: "approve", at: "09:45:00", recorded: "09:45:01"))
            #expect(summary.outcomes == [.appended(seq: 3)])
            let status = try #require(try ledger.read { try $0.question(QID.uuid(Self.q1)) })
            #expect(status.state == .approved)
            #expect(status.late)
            #expect(status.choice?.id == "approve")
            #expect(status.resolvedAt == (try time("2026-11-20T09:45:00Z")))
            #expect(try ledger.read { try $0.isKnownHandle(try CommunicationHandle(value: "dragonslayer42", kind: .custom), subject: "kid-ava") })
        }
    }

    @Test func answerAfterAnExpiredEventWithoutExpiresAtIsLate() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.expired("e2", question: Self.q1, at: "09:30:00", recorded: "09:30:01"),
                JSONLine.answered("e3", question: Self.q1, choice: "decline", at: "11:45:00", recorded: "11:45:01"))
            let status = try #require(try ledger.read { try $0.question(QID.uuid(Self.q1)) })
            #expect(status.state == .denied)
            #expect(status.late)
        }
    }

    @Test(arguments: ["10:00:00", "10:00:00.000001", "10:30:00"])
    func answerOccurringBeforeExpiryButRecordedAtOrAfterItIsAcceptedAndLate(recorded: String) async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "10:00:00"),
                JSONLine.answered("e2", question: Self.q1, choice: "decline", at: "09:59:59", recorded: recorded))
            let status = try #require(try ledger.read { try $0.question(QID.uuid(Self.q1)) })
            #expect(status.state == .denied)
            #expect(status.late)
            #expect(status.resolvedAt == (try time("2026-11-20T09:59:59Z")))
        }
    }

    @Test func answerRecordedBeforeExpiryIsNotLate() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "10:00:00"),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:59:58", recorded: "09:59:59.999999"))
            let status = try #require(try ledger.read { try $0.question(QID.uuid(Self.q1)) })
            #expect(status.state == .approved)
            #expect(!status.late)
        }
    }

    @Test(arguments: ["10:00:00", "10:00:01"])
    func answerOccurringAtOrAfterExpiryIsRejected(occurred: String) async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json: JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "10:00:00"))
            let rejected = await rejections {
                try await ledger.append(json: JSONLine.answered("e2", question: Self.q1, choice: "approve", at: occurred, recorded: "10:05:00"))
            }
            #expect(rejected.count == 1)
            #expect(rejected.first?.rejection.reason.contains("expiresAt") == true)
            #expect(try ledger.head().seq == 1)
        }
    }

    @Test func theSameAnswerUnderANewEventIDIsADuplicate() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"))
            let head = try ledger.head()
            let export = try ledger.exportText()
            let again = try await ledger.append(json: JSONLine.answered("e3", question: Self.q1, choice: "approve", via: "inPerson", at: "09:07:00", recorded: "09:07:01"))
            #expect(again.appended == 0)
            #expect(again.duplicates == 1)
            #expect(again.outcomes == [.duplicate(of: 2)])
            #expect(again.head == head)
            #expect(try ledger.exportText() == export)
            let status = try #require(try ledger.read { try $0.question(QID.uuid(Self.q1)) })
            #expect(status.resolvedAt == (try time("2026-11-20T09:05:00Z")), "the first delivery stands")
            #expect(status.via == .messages)
        }
    }

    @Test func theSameAnswerDeliveredAgainWithAnOlderRecordedAtIsStillADuplicate() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"),
                JSONLine.permission("p1", "camera", "authorized", at: "09:30:00", recorded: "09:30:01"))
            let export = try ledger.exportText()
            // recordedAt 09:05:02 is older than the head's (09:30:01): the response, delivered again, is folded
            // into the first all the same.
            let again = try await ledger.append(json: JSONLine.answered("e3", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:02"))
            #expect(again.outcomes == [.duplicate(of: 2)])
            #expect(try ledger.exportText() == export)
            // Another choice with an older recordedAt is still out of order.
            let rejected = await rejections {
                try await ledger.append(json: JSONLine.answered("e4", question: Self.q1, choice: "decline", at: "09:05:00", recorded: "09:05:02"))
            }
            #expect(rejected.first?.rejection.reason.contains("recordedAt") == true, "\(rejected)")
            #expect(try ledger.exportText() == export)
        }
    }

    @Test func aReusedIDWhoseSubjectIsSpelledInAnotherUnicodeFormIsAConflict() async throws {
        try await withLedger { ledger async throws in
            let precomposed = "caf\u{E9}", combining = "cafe\u{301}"
            #expect(precomposed == combining, "Swift strings: equal")
            try await ledger.append(json: JSONLine.permission("p1", subject: precomposed, "camera", "authorized", at: "09:00:00", recorded: "09:00:01"))
            let export = try ledger.exportText()
            let rejected = await rejections {
                try await ledger.append(json: JSONLine.permission("p1", subject: combining, "camera", "authorized", at: "09:00:00", recorded: "09:00:01"))
            }
            #expect(rejected.count == 1)
            #expect(rejected.first?.rejection.reason.contains("already used by seq 1") == true, "\(rejected)")
            #expect(try ledger.exportText() == export)
            // The very same bytes are a duplicate.
            let again = try await ledger.append(json: JSONLine.permission("p1", subject: precomposed, "camera", "authorized", at: "09:00:00", recorded: "09:00:01"))
            #expect(again.outcomes == [.duplicate(of: 1)])
        }
    }

    @Test func aDifferentSecondAnswerIsRejectedAsConflicting() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"))
            let rejected = await rejections {
                try await ledger.append(json: JSONLine.answered("e3", question: Self.q1, choice: "decline", at: "09:07:00", recorded: "09:07:01"))
            }
            #expect(rejected.count == 1)
            #expect(rejected.first?.rejection.eventType == "question.answered")
        }
    }

    @Test func anIdenticalEventIDAndContentIsADuplicateWhateverItsRecordedAt() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.permission("p1", "camera", "askAgain", cause: "prePrompt", at: "09:00:00", recorded: "09:00:01"),
                JSONLine.permission("p2", "microphone", "authorized", at: "09:01:00", recorded: "09:01:01"))
            let export = try ledger.exportText()
            for recorded in ["09:00:01", "09:30:00", "08:00:00"] {
                let again = try await ledger.append(json: JSONLine.permission("p1", "camera", "askAgain", cause: "prePrompt", at: "09:00:00", recorded: recorded))
                #expect(again.outcomes == [.duplicate(of: 1)], "recordedAt \(recorded)")
                #expect(again.appended == 0)
                #expect(again.duplicates == 1)
            }
            // Without recordedAt, and with the seq and hash it was given: still the same event.
            var stored: [PermissionEvent] = []
            stored += try storedEvents(ledger).map(\.event)
            let summary = try await ledger.append(stored)
            #expect(summary.outcomes == [.duplicate(of: 1), .duplicate(of: 2)])
            var bare = try decodeEvent(JSONLine.permission("p2", "microphone", "authorized", at: "09:01:00", recorded: "09:01:01"))
            bare.recordedAt = nil
            #expect(try await ledger.append([bare]).outcomes == [.duplicate(of: 2)])
            #expect(try ledger.exportText() == export)
        }
    }

    @Test func theSameEventTwiceInOneBatchIsAppendedOnce() async throws {
        try await withLedger { ledger async throws in
            let summary = try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:02"),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"),
                JSONLine.answered("e3", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:02"))
            #expect(summary.outcomes == [.appended(seq: 1), .duplicate(of: 1), .appended(seq: 2), .duplicate(of: 2)])
            #expect(summary.appended == 2)
            #expect(summary.duplicates == 2)
            #expect(try ledger.head().seq == 2)
        }
    }

    @Test(arguments: [
        JSONLine.permission("p1", "camera", "authorized", cause: "prePrompt", at: "09:00:00", recorded: "09:10:00"),
        JSONLine.permission("p1", "camera", "askAgain", at: "09:00:00", recorded: "09:10:00"),
        JSONLine.permission("p1", "camera", "askAgain", cause: "prePrompt", at: "09:00:00.000001", recorded: "09:10:00"),
        JSONLine.permission("p1", subject: "kid-ben", "camera", "askAgain", cause: "prePrompt", at: "09:00:00", recorded: "09:10:00"),
        JSONLine.expired("p1", question: QID.q1, at: "09:00:00", recorded: "09:10:00"),
    ])
    func theSameEventIDWithDifferentContentIsRejected(line: String) async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.permission("p1", "camera", "askAgain", cause: "prePrompt", at: "09:00:00", recorded: "09:00:01"))
            let export = try ledger.exportText()
            let rejected = await rejections { try await ledger.append(json: line) }
            #expect(rejected.count == 1)
            #expect(rejected.first?.rejection.reason.contains("p1") == true, "\(String(describing: rejected.first?.rejection))")
            #expect(try ledger.exportText() == export)
        }
    }

    @Test func aBatchWithOneBadEventWritesNothingAndNamesIt() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json: JSONLine.permission("p0", "camera", "notDetermined", at: "08:00:00", recorded: "08:00:01"))
            let export = try ledger.exportText()
            let head = try ledger.head()
            let batch = try [
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.permission("e2", "camera", "authorized", at: "09:01:00", recorded: "09:01:01"),
                JSONLine.answered("e3", question: Self.q1, choice: "approve-2h", at: "09:05:00", recorded: "09:05:01"),
                JSONLine.answered("e4", question: Self.q1, choice: "approve", at: "09:06:00", recorded: "09:06:01"),
                JSONLine.permission("e5", "microphone", "authorized", at: "09:07:00", recorded: "09:07:01"),
            ].map { try decodeEvent($0) }
            let rejected = await rejections { _ = try await ledger.append(batch) }
            #expect(rejected.map(\.index) == [2])
            #expect(rejected.first?.rejection.reason.contains("approve-2h") == true)
            #expect(try ledger.exportText() == export)
            #expect(try ledger.head() == head)
            #expect(try ledger.read { try $0.question(QID.uuid(Self.q1)) } == nil)
            #expect(try ledger.read { try $0.permissions(subject: "kid-ava") }.map(\.state) == [.notDetermined])
            // The message points at the event, 1-based.
            do {
                _ = try await ledger.append(batch)
            } catch let error as AppendRejected {
                #expect(error.description.hasPrefix("event 3: question.answered: "), "\(error)")
            }
            // Without the bad event the batch goes in whole: the later events relied on earlier ones of the same batch.
            var good = batch
            good.remove(at: 2)
            #expect(try await ledger.append(good).outcomes == [.appended(seq: 2), .appended(seq: 3), .appended(seq: 4), .appended(seq: 5)])
        }
    }

    @Test func everyBadEventOfABatchIsReported() async throws {
        try await withLedger { ledger async throws in
            let batch = try [
                JSONLine.answered("e0", question: Self.q1, choice: "approve", at: "08:59:00", recorded: "08:59:01"),  // unknown question
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.asked("e2", question: Self.q1, at: "09:01:00", recorded: "09:01:01"),  // question id reused
                JSONLine.permission("e3", "camera", "authorized", at: "09:02:00", recorded: "09:02:01"),
                JSONLine.permission("e4", "camera", "denied", at: "09:03:00", recorded: "09:00:00"),  // recordedAt decreases
                JSONLine.answered("e5", question: Self.q1, choice: "nope", at: "09:04:00", recorded: "09:04:01"),  // unknown choice
            ].map { try decodeEvent($0) }
            let rejected = await rejections { _ = try await ledger.append(batch) }
            #expect(rejected.map(\.index) == [0, 2, 4, 5])
            #expect(rejected.map(\.rejection.eventType) == ["question.answered", "question.asked", "permission.changed", "question.answered"])
            #expect(try ledger.head() == .empty)
            // validate() reports the same and writes nothing either.
            let validated = await rejections { _ = try ledger.validate(batch) }
            #expect(validated.map(\.index) == [0, 2, 4, 5])
            // The report can be capped.
            let capped = await rejections { _ = try await ledger.append(batch, maxRejections: 2) }
            #expect(capped.map(\.index) == [0, 2])
            #expect(try ledger.head() == .empty)
        }
    }

    @Test func validateChecksWithoutWriting() async throws {
        try await withLedger { ledger async throws in
            let batch = try [
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"),
                JSONLine.answered("e2", question: Self.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"),
                JSONLine.answered("e3", question: Self.q1, choice: "approve", at: "09:06:00", recorded: "09:06:01"),
            ].map { try decodeEvent($0) }
            let summary = try ledger.validate(batch)
            #expect(summary.appended == 2)
            #expect(summary.duplicates == 1)
            #expect(summary.head.seq == 2)
            #expect(try ledger.head() == .empty)
            #expect(try ledger.exportText().isEmpty)
        }
    }

    @Test func recordedAtMayRepeatButNotDecrease() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.permission("p1", "camera", "askAgain", at: "09:00:00", recorded: "09:00:01"),
                JSONLine.permission("p2", "microphone", "askAgain", at: "09:00:00", recorded: "09:00:01"))
            let rejected = await rejections {
                try await ledger.append(json: JSONLine.permission("p3", "contacts", "askAgain", at: "09:00:00", recorded: "09:00:00.999999"))
            }
            #expect(rejected.first?.rejection.reason.contains("recordedAt") == true)
            #expect(try ledger.head().seq == 2)
        }
    }

    @Test func missingRecordedAtIsTakenFromTheClockAndNeverGoesBack() async throws {
        try await withTemporaryDirectory { directory async throws in
            let clock = try time("2026-11-20T12:00:00Z")
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false, clock: { clock }))
            var first = try decodeEvent(JSONLine.permission("p1", "camera", "askAgain", at: "09:00:00", recorded: "09:00:00"))
            first.recordedAt = nil
            var second = try decodeEvent(JSONLine.permission("p3", "camera", "denied", at: "09:00:00", recorded: "09:00:00"))
            second.recordedAt = nil
            _ = try await ledger.append([first])
            #expect(try ledger.head().recordedAt == clock)
            // An explicit recordedAt after the clock, then a clock-stamped event: stamped no earlier than the head.
            try await ledger.append(json: JSONLine.permission("p2", "camera", "authorized", at: "13:00:00", recorded: "13:00:00"))
            _ = try await ledger.append([second])
            #expect(try ledger.head().recordedAt == (try time("2026-11-20T13:00:00Z")))
            #expect(try ledger.head().seq == 3)
        }
    }

    @Test func followUpsNeedTheQuestionsSubject() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json: JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"))
            for line in [
                JSONLine.expired("e2", question: Self.q1, subject: "kid-ben", at: "09:01:00", recorded: "09:01:01"),
                JSONLine.canceled("e2", question: Self.q1, subject: "kid-ben", at: "09:01:00", recorded: "09:01:01"),
                JSONLine.failed("e2", question: Self.q1, code: "unknown", subject: "kid-ben", at: "09:01:00", recorded: "09:01:01"),
            ] {
                let rejected = await rejections { try await ledger.append(json: line) }
                #expect(rejected.first?.rejection.reason.contains("subject") == true)
            }
        }
    }

    @Test(arguments: [
        ("question.sendCanceled", QuestionState.canceled),
        ("question.askFailed", .failed),
        ("question.expired", .expired),
    ])
    func cancelFailureAndExpiryOnlyWhilePending(type: String, state: QuestionState) async throws {
        try await withLedger { ledger async throws in
            let line: (String, String) -> String = { id, at in
                type == "question.askFailed"
                    ? JSONLine.failed(id, question: Self.q1, code: "notAvailable", at: at, recorded: at)
                    : JSONLine.simple(type, id, question: Self.q1, at: at, recorded: at)
            }
            try await ledger.append(json: JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01"), line("e2", "09:01:00"))
            #expect(try ledger.read { try $0.question(QID.uuid(Self.q1)) }?.state == state)
            // Not again, and no other of them either, once it left pending.
            for other in ["question.sendCanceled", "question.expired"] {
                let rejected = await rejections {
                    try await ledger.append(json: JSONLine.simple(other, "e3", question: Self.q1, at: "09:02:00", recorded: "09:02:00"))
                }
                #expect(rejected.first?.rejection.reason.contains("pending") == true)
            }
            let rejected = await rejections {
                try await ledger.append(json: JSONLine.failed("e3", question: Self.q1, code: "unknown", at: "09:02:00", recorded: "09:02:00"))
            }
            #expect(rejected.first?.rejection.reason.contains("pending") == true)
        }
    }

    @Test func cancelIsAcceptedForAQuestionExpiredOnlyByTheClock() async throws {
        // "Pending" means no answer, cancel, failure or expiry event: the clock never makes an event rejectable.
        try await withLedger { ledger async throws in
            try await ledger.append(json:
                JSONLine.asked("e1", question: Self.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "09:10:00"),
                JSONLine.permission("e2", "camera", "denied", at: "09:20:00", recorded: "09:20:00"))
            #expect(try ledger.read(asOf: .seq(2)) { try $0.question(QID.uuid(Self.q1)) }?.state == .expired)
            try await ledger.append(json: JSONLine.expired("e3", question: Self.q1, at: "09:30:00", recorded: "09:30:01"))
            let status = try #require(try ledger.read { try $0.question(QID.uuid(Self.q1)) })
            #expect(status.state == .expired)
            #expect(status.resolvedAt == (try time("2026-11-20T09:30:00Z")), "the event's time, not expiresAt")
        }
    }
}
