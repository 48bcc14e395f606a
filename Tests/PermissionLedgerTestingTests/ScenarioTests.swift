import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct ScenarioTests {
    /// A day with every kind of event: ask, answer, expire, late answer, cancel, fail, observe, permission.
    struct Day {
        var s = Scenario(subject: "kid-1", start: nine)
        var approved, lateAfterExpiry, expiresByClock, canceled, failed, timeLimited, lateByRecording, otherChild: UUID
        var seqAfterLateAfterExpiry, seqAfterObservation: UInt64

        init() throws {
            approved = try s.asked(about: [.custom("dragonslayer42")], expiresIn: .seconds(3600))
            s.advance(by: .seconds(300))
            s.answered(approved, choice: "approve")

            lateAfterExpiry = try s.asked(about: [.phoneNumber("+1 555 010 0202")], actions: [.call], expiresIn: .seconds(1800))
            s.advance(by: .seconds(600))
            s.expired(lateAfterExpiry)
            s.advance(by: .seconds(300))
            s.answered(lateAfterExpiry, choice: "decline")
            seqAfterLateAfterExpiry = UInt64(s.events.count)

            expiresByClock = try s.asked(about: [.custom("quietfox")], expiresIn: .seconds(600))
            canceled = try s.asked(appUpdate: "Version 2 adds group chats")
            s.canceled(canceled)
            failed = try s.asked(about: [.emailAddress("Pal@Example.com")])
            s.failed(failed, .notAvailable, message: "offline")

            s.advance(by: .seconds(1200))
            try s.observed(checked: [.custom("dragonslayer42"), .emailAddress("friend@example.com")],
                           known: [.emailAddress("friend@example.com")])
            seqAfterObservation = UInt64(s.events.count)
            s.permission(.camera, .authorized, cause: .systemPrompt)
            s.permission(.microphone, .doNotAskAgain, cause: .prePrompt)

            let oneHour = try PermissionChoice(id: "approve-1h", title: "Approve for one hour", answer: .approval, grantSeconds: 3600)
            timeLimited = try s.asked(about: [.custom("pixelpal")], choices: [oneHour, .approve, .decline])
            s.answered(timeLimited, choice: "approve-1h", via: .inPerson)

            lateByRecording = try s.asked(about: [.custom("latebird")], expiresIn: .seconds(900))
            s.advance(by: .seconds(600))
            s.answered(lateByRecording, choice: "approve", recordingDelay: .seconds(600))

            otherChild = try s.asked(about: [.custom("dragonslayer42")], subject: "kid-2")
            s.answered(otherChild, choice: "approve", via: .default)

            s.advance(by: .seconds(7200))
            s.permission(.camera, .denied, cause: .settings)
        }
    }

    @Test func eventsGetDeterministicIdsTimesAndQuestionIds() throws {
        var s = Scenario(subject: "kid-1", start: nine)
        let q = try s.asked(about: [.custom("a")])
        s.advance(by: .milliseconds(1500))
        s.answered(q, choice: "approve")
        let r = try s.asked(about: [.custom("b")], subject: "kid-2")
        s.canceled(r)
        #expect(q.uuidString == "5CE4A210-0000-4000-8000-000000000001")
        #expect(r.uuidString == "5CE4A210-0000-4000-8000-000000000002")
        #expect(s.events.map(\.id) == ["ev-1", "ev-2", "ev-3", "ev-4"])
        #expect(s.events.map(\.subject) == ["kid-1", "kid-1", "kid-2", "kid-2"])
        #expect(s.events.map(\.occurredAt) == [nine, time("2026-11-20T09:00:01.5Z"), time("2026-11-20T09:00:01.5Z"), time("2026-11-20T09:00:01.5Z")])
        #expect(s.events.map(\.recordedAt) == [time("2026-11-20T09:00:01Z"), time("2026-11-20T09:00:02.5Z"), time("2026-11-20T09:00:02.5Z"), time("2026-11-20T09:00:02.5Z")])
        #expect(s.events.allSatisfy { $0.seq == nil && $0.hash == nil })

        let other = Scenario(subject: "kid-9", start: nine, recordingDelay: .zero, idPrefix: "x-", questionNamespace: 0xABCD)
        var o = other
        let id = try o.asked(about: [.custom("c")])
        #expect(id.uuidString == "0000ABCD-0000-4000-8000-000000000001")
        #expect(o.events[0].id == "x-1" && o.events[0].recordedAt == nine)
    }

    @Test func recordedAtNeverDecreases() throws {
        var s = Scenario(start: nine)
        s.permission(.camera, .askAgain, cause: .prePrompt)
        s.at(time("2026-11-20T08:00:00Z"))
        s.permission(.camera, .authorized, cause: .systemPrompt)
        #expect(s.events[1].occurredAt == time("2026-11-20T08:00:00Z"))
        #expect(s.events[1].recordedAt == time("2026-11-20T09:00:01Z"))
        try s.replay { replayed throws in
            #expect(replayed.expectPermissions(subject: "kid-1", [.camera: .authorized]))
        }
    }

    /// An erasure's reference the ledger would refuse stops the test where the scenario is built, as an invalid
    /// subject does, rather than making lines that fail to decode at replay.
    @Test(arguments: ["", "tab\there", String(repeating: "r", count: 129)])
    func anErasureWithAReferenceTheLedgerRefusesStopsTheTest(_ reference: String) async {
        await #expect(processExitsWith: .failure) { [reference] in
            var s = Scenario(subject: "kid-1", start: try Timestamp(rfc3339: "2026-11-20T09:00:00Z"))
            s.erased(.other, reference: reference)
        }
        var s = Scenario(subject: "kid-1", start: nine)
        try? s.observed(checked: [.custom("tinker")], known: [])
        s.erased(.other, reference: String(repeating: "r", count: 128))
        #expect(throws: Never.self) { try s.replay { _ in } }
    }

    @Test func invalidJSONFormIsThrownNotWritten() throws {
        var s = Scenario(start: nine)
        #expect(throws: PermissionModelError.self) { try s.asked(about: [.custom("a")], expiresIn: .zero) }
        #expect(throws: PermissionModelError.self) { try s.asked(about: [.custom("a")], choices: [.approve]) }
        #expect(throws: PermissionModelError.self) { try s.asked(about: []) }
        #expect(throws: PermissionModelError.self) { try s.observed(checked: [], known: []) }
        #expect(throws: PermissionModelError.self) { try s.observed(checked: [.custom("a")], known: [.custom("b")]) }
        #expect(throws: PermissionModelError.self) { try s.asked(about: [.phoneNumber("12")]) }
        #expect(s.events.isEmpty)
    }

    @Test func theEventsAreExactlyThoseOfTheJSONForm() async throws {
        let day = try Day()
        let lines = day.s.jsonLines.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == day.s.events.count + 1 && lines.last == "")
        let decoded = try lines.compactMap { try EventJSON.decode(line: String($0)) }
        #expect(decoded == day.s.events)
        #expect(try Fixture(jsonLines: day.s.jsonLines).events == day.s.events)
        #expect(day.s.fixture().jsonLines == day.s.jsonLines)

        let fromBuilder = try day.s.replay { try $0.digest() }
        let fromText = try await Fixture(jsonLines: day.s.jsonLines).replay { replayed async throws in
            #expect(replayed.summary.appended == day.s.events.count)
            return try replayed.digest()
        }
        #expect(fromBuilder == fromText)
    }

    @Test func aDayGivesTheExpectedStates() throws {
        let day = try Day()
        try day.s.replay { r throws in
            #expect(r.summary.appended == day.s.events.count)
            r.expectQuestion(day.approved, state: .approved, late: false, choice: "approve", via: .messages)
            r.expectQuestion(day.approved, state: .pending, asOf: .seq(1))
            r.expectQuestion(day.lateAfterExpiry, state: .expired, late: false, asOf: .seq(day.seqAfterLateAfterExpiry - 1))
            r.expectQuestion(day.lateAfterExpiry, state: .denied, late: true, choice: "decline")
            r.expectQuestion(day.expiresByClock, state: .pending, asOf: .seq(day.seqAfterLateAfterExpiry + 1))
            r.expectQuestion(day.expiresByClock, state: .expired, late: false)
            r.expectQuestion(day.canceled, state: .canceled)
            r.expectQuestion(day.failed, state: .failed)
            r.expectQuestion(day.timeLimited, state: .approved, late: false, choice: "approve-1h", via: .inPerson)
            r.expectQuestion(day.lateByRecording, state: .approved, late: true)
            r.expectQuestion(day.otherChild, state: .approved, via: .default)

            // Before the observation: the first approval; after: it is revoked and a synced contact known.
            r.expectKnownHandles(subject: "kid-1", [("dragonslayer42", .custom)], asOf: .seq(day.seqAfterObservation - 1))
            r.expectKnownHandles(subject: "kid-1", [("friend@example.com", .emailAddress)], asOf: .seq(day.seqAfterObservation))
            // Two hours later the one-hour grant has lapsed; the late approval stands.
            r.expectKnownHandles(subject: "kid-1", [("friend@example.com", .emailAddress), ("latebird", .custom)])
            r.expectKnownHandles(subject: "kid-1", [("friend@example.com", .emailAddress), ("latebird", .custom), ("pixelpal", .custom)],
                                 asOf: .seq(UInt64(day.s.events.count - 1)))
            r.expectKnownHandles(subject: "kid-2", [("dragonslayer42", .custom)])

            r.expectPermissions(subject: "kid-1", [.camera: .denied, .microphone: .doNotAskAgain])
            r.expectPermissions(subject: "kid-1", [.camera: .authorized, .microphone: .doNotAskAgain], asOf: .seq(day.seqAfterObservation + 2))
            r.expectPermissions(subject: "kid-2", [:])
            #expect(try r.ledger.verify().isIntact)
        }
    }

    @Test func theBuilderCanWriteEventsTheLedgerRejects() throws {
        var s = Scenario(start: nine)
        let q = try s.asked(about: [.custom("a")])
        s.canceled(q)
        s.answered(q, choice: "approve")
        let error = try #require(throws: FixtureError.self) { try ReplayedLedger(s.fixture(name: "cancel-then-answer")) }
        #expect(error.description.hasPrefix("cancel-then-answer:3: question.answered: question \(q.uuidString) was canceled"))
    }
}
