import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// Each expectation passes on the right values, and on wrong ones records one issue, at the caller's line,
/// whose message shows the expected and the actual value side by side and names the point of the log.
@Suite struct ExpectationTests {
    static let q1 = UUID(uuidString: "6A3F1C2E-0005-4000-8000-000000000001")!
    static let q2 = UUID(uuidString: "6A3F1C2E-0005-4000-8000-000000000002")!
    static let q3 = UUID(uuidString: "6A3F1C2E-0005-4000-8000-000000000003")!

    static func pointsHere(_ issue: Issue, line: Int) -> Bool {
        issue.sourceLocation?.line == line && issue.sourceLocation?.fileName == "ExpectationTests.swift"
    }

    // MARK: Questions

    @Test func questionPassesOnTheRightState() throws {
        try Fixture(contentsOf: Fixtures.url("late-answer.jsonl")).replay { replayed throws in
            #expect(replayed.expectQuestion(Self.q1, state: .approved, late: true, choice: "approve", via: .messages))
            #expect(replayed.expectQuestion(Self.q2, state: .denied, late: true, choice: "decline"))
            #expect(replayed.expectQuestion(Self.q3, state: .expired, late: false))
            #expect(replayed.expectQuestion(Self.q1, state: .expired, asOf: .seq(4)))
            #expect(replayed.expectQuestion(Self.q2, state: .pending, asOf: .seq(4)))
            // Expired by the clock alone, with no event.
            #expect(replayed.expectQuestion(Self.q2, state: .expired, asOf: .time(time("2026-11-20T14:45:00Z"))))
            #expect(replayed.ledger.expectQuestion(Self.q1, state: .approved))
        }
    }

    @Test func questionShowsExpectedAndActualSideBySide() throws {
        try Fixture(contentsOf: Fixtures.url("late-answer.jsonl")).replay { replayed throws in
            let line = #line + 2
            withKnownIssue {
                #expect(!replayed.expectQuestion(Self.q1, state: .denied, late: false, choice: "decline", via: .inPerson))
            } matching: { issue in
                let text = message(issue)
                return Self.pointsHere(issue, line: line)
                    && text.hasPrefix("late-answer.jsonl: Question 6A3F1C2E-0005-4000-8000-000000000001 of \"kid-ben\" as of seq:7, the head (clock 2026-11-20T14:55:01Z); seq 7 is line 28:")
                    && showsSideBySide(issue, expected: "denied", actual: "approved")
                    && showsSideBySide(issue, expected: "false", actual: "true")
                    && showsSideBySide(issue, expected: "decline", actual: "approve")
                    && showsSideBySide(issue, expected: "inPerson", actual: "messages")
                    && text.contains("expected") && text.contains("actual")
            }
        }
    }

    @Test func questionMarksOnlyTheRowsThatDiffer() throws {
        try Fixture(contentsOf: Fixtures.url("late-answer.jsonl")).replay { replayed throws in
            withKnownIssue {
                replayed.expectQuestion(Self.q2, state: .expired, late: true, asOf: .seq(5))
            } matching: { issue in
                let lines = message(issue).split(separator: "\n").map(String.init)
                return lines.first == "late-answer.jsonl: Question 6A3F1C2E-0005-4000-8000-000000000002 of \"kid-ben\" as of seq:5 (clock 2026-11-20T14:45:00Z); seq 5 is line 26:"
                    && lines.contains { $0.contains("✗") && $0.contains("late") && showsSideBySide(issue, expected: "true", actual: "false") }
                    && lines.contains { !$0.contains("✗") && $0.contains("state") && $0.contains("expired") }
            }
        }
    }

    @Test func aQuestionNotYetAskedSaysSo() throws {
        try Fixture(contentsOf: Fixtures.url("late-answer.jsonl")).replay { replayed throws in
            withKnownIssue {
                replayed.expectQuestion(Self.q3, state: .pending, asOf: .seq(1))
            } matching: { issue in
                showsSideBySide(issue, expected: "pending", actual: "(not asked by then)")
                    && message(issue).contains("as of seq:1 (clock 2026-11-20T14:00:01Z)")
            }
        }
    }

    @Test func aPointBeyondTheLogIsAnIssueNotACrash() throws {
        try Fixture(contentsOf: Fixtures.url("late-answer.jsonl")).replay { replayed throws in
            withKnownIssue {
                replayed.expectQuestion(Self.q1, state: .approved, asOf: .seq(99))
            } matching: { issue in
                message(issue).contains("as of seq:99") && message(issue).contains("beyond the end of the log")
            }
        }
    }

    // MARK: Known handles

    @Test func knownHandlesPassOnTheRightSet() throws {
        try Fixture(contentsOf: Fixtures.url("time-limited.jsonl")).replay { replayed throws in
            let email = try CommunicationHandle.emailAddress("Aunt.Jo@example.net")
            let pixel = try CommunicationHandle.custom("pixelpal")
            #expect(replayed.expectKnownHandles(subject: "kid-ben", [email]))
            #expect(replayed.expectKnownHandles(subject: "kid-ben", [pixel, email], asOf: .seq(6)))
            #expect(replayed.expectKnownHandles(subject: "kid-ben", [("aunt.jo@example.net", .emailAddress), ("pixelpal", .custom)], asOf: .seq(6)))
            #expect(replayed.expectKnownHandles(subject: "kid-ben", [], asOf: .seq(1)))
            #expect(replayed.expectKnownHandles(subject: "kid-nobody", []))
        }
    }

    @Test func knownHandlesShowMissingAndUnexpectedSideBySide() throws {
        try Fixture(contentsOf: Fixtures.url("time-limited.jsonl")).replay { replayed throws in
            let line = #line + 2
            withKnownIssue {
                #expect(!replayed.expectKnownHandles(subject: "kid-ben", [("pixelpal", .custom)]))
            } matching: { issue in
                Self.pointsHere(issue, line: line)
                    && message(issue).hasPrefix("time-limited.jsonl: Known handles of \"kid-ben\" as of seq:7, the head (clock 2026-11-20T12:00:01Z); seq 7 is line 25; expected 1, actual 1:")
                    // Expected but not known: left column filled, right column empty.
                    && showsSideBySide(issue, expected: "custom \"pixelpal\"", actual: "—")
                    // Known but not expected: the actual value, with its details, on the right.
                    && showsSideBySide(issue, expected: "—", actual: "emailAddress \"aunt.jo@example.net\"  since 2026-11-20T10:05:00Z, question 6A3F1C2E-0009-4000-8000-000000000002")
            }
        }
    }

    /// A scenario's known handles after an erasure with a cut (seq 5) and a whole one (seq 6): an approval and an
    /// observation before the cut, an observation after it.
    static func erasedHandles() throws -> Scenario {
        var s = Scenario(subject: "kid-1", start: try Timestamp(rfc3339: "2026-11-20T09:00:00Z"))
        let question = try s.asked(about: [.custom("dragonslayer42")])
        s.advance(by: .seconds(60))
        s.answered(question, choice: "approve")
        s.advance(by: .seconds(60))
        try s.observed(checked: [.custom("tinker")], known: [.custom("tinker")])
        s.advance(by: .seconds(3600))
        try s.observed(checked: [.custom("later")], known: [.custom("later")])
        s.advance(by: .seconds(60))
        s.erased(.retention, before: try Timestamp(rfc3339: "2026-11-20T10:00:00Z"))
        s.advance(by: .seconds(60))
        s.erased(.guardianRequest, reference: "case-1")
        return s
    }

    @Test func erasedKnownHandlesAreExpectedByTheirErasureOneRowEach() throws {
        try Self.erasedHandles().replay { replayed throws in
            let cut = ErasureMark(seq: 5, basis: .retention)
            let whole = ErasureMark(seq: 6, basis: .guardianRequest)
            #expect(replayed.expectKnownHandles(subject: "kid-1", [.erased(whole), .erased(cut), .erased(cut)]))
            // Time travel brings no value back: before the erasures, the values are erased too.
            #expect(replayed.expectKnownHandles(subject: "kid-1", [.erased(cut), .erased(whole), .erased(cut)], asOf: .seq(5)))
            #expect(replayed.expectKnownHandles(subject: "kid-1", [.erased(cut), .erased(cut)], asOf: .seq(3)))
            // Expecting none: each erased handle is a row of its own, shown as the tool shows it.
            withKnownIssue {
                #expect(!replayed.expectKnownHandles(subject: "kid-1", [CommunicationHandle]()))
            } matching: { issue in
                message(issue).contains("expected 0, actual 3")
                    && message(issue).components(separatedBy: "custom (erased, seq 5)").count == 3
                    && message(issue).contains("custom (erased, seq 6)") && !message(issue).contains("custom \"\"")
            }
            // One erased handle too few is a difference.
            withKnownIssue {
                #expect(!replayed.expectKnownHandles(subject: "kid-1", [.erased(whole), .erased(cut)]))
            } matching: { issue in
                showsSideBySide(issue, expected: "—", actual: "custom (erased, seq 5)  since 2026-11-20T09:02:00Z, observation seq 3")
            }
        }
    }

    @Test func anInvalidExpectedHandleIsAnIssue() throws {
        try Fixture(contentsOf: Fixtures.url("time-limited.jsonl")).replay { replayed throws in
            withKnownIssue {
                replayed.expectKnownHandles(subject: "kid-ben", [("not an email", .emailAddress)])
            } matching: { issue in
                message(issue).contains("\"not an email\" (emailAddress) is not a valid handle")
            }
        }
    }

    // MARK: Permissions

    @Test func permissionsPassOnTheRightStates() throws {
        try Fixture(contentsOf: Fixtures.url("permissions.jsonl")).replay { replayed throws in
            #expect(replayed.expectPermissions(subject: "kid-ava", [
                .camera: .doNotAskAgain, .contacts: .notDetermined, .microphone: .authorized,
                .notifications: .provisional, .photoLibrary: .limited,
            ]))
            #expect(replayed.expectPermissions(subject: "kid-ben", [
                .camera: .denied, .health: .unsupported, .locationWhenInUse: .authorized, .tracking: .restricted,
            ]))
            #expect(replayed.expectPermissions(subject: "kid-ava", [.camera: .askAgain], asOf: .seq(2)))
            #expect(replayed.expectPermissions(subject: "kid-ava", [:], asOf: .seq(0)))
            #expect(replayed.expectPermission(.contacts, .denied, subject: "kid-ava", asOf: .seq(11)))
            #expect(replayed.expectPermission(.siri, nil, subject: "kid-ava"))
        }
    }

    @Test func permissionsShowExpectedAndActualSideBySide() throws {
        try Fixture(contentsOf: Fixtures.url("permissions.jsonl")).replay { replayed throws in
            let line = #line + 2
            withKnownIssue {
                #expect(!replayed.expectPermissions(subject: "kid-ava", [.camera: .authorized, .siri: .denied], asOf: .seq(2)))
            } matching: { issue in
                Self.pointsHere(issue, line: line)
                    && message(issue).hasPrefix("permissions.jsonl: Permissions of \"kid-ava\" as of seq:2 (clock 2026-11-20T08:01:01Z); seq 2 is line 17:")
                    && showsSideBySide(issue, expected: "authorized", actual: "askAgain")
                    && showsSideBySide(issue, expected: "siri  ", actual: "(none)")
            }
        }
    }

    @Test func onePermissionShowsExpectedAndActualSideBySide() throws {
        try Fixture(contentsOf: Fixtures.url("permissions.jsonl")).replay { replayed throws in
            withKnownIssue {
                replayed.expectPermission(.camera, .authorized, subject: "kid-ava")
            } matching: { issue in
                showsSideBySide(issue, expected: "authorized", actual: "doNotAskAgain")
                    && message(issue).hasPrefix("permissions.jsonl: Permission camera of \"kid-ava\" as of seq:15, the head")
                    && message(issue).contains("seq 15 is line 30")
            }
        }
    }

    // MARK: Digest

    @Test func digestPassesAndShowsBothOnAMismatch() throws {
        try Fixture(contentsOf: Fixtures.url("permissions.jsonl")).replay { replayed throws in
            let digest = try replayed.digest()
            let atTwo = try replayed.digest(asOf: .seq(2))
            #expect(replayed.expectDigest(digest))
            #expect(replayed.expectDigest(atTwo, asOf: .seq(2)))
            let line = #line + 2
            withKnownIssue {
                #expect(!replayed.expectDigest(digest, asOf: .seq(2)))
            } matching: { issue in
                Self.pointsHere(issue, line: line)
                    && message(issue) == "permissions.jsonl: Digest as of seq:2 (clock 2026-11-20T08:01:01Z); seq 2 is line 17 differs:\n  expected: \(digest)\n  actual:   \(atTwo)"
            }
        }
    }
}
