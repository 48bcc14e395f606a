import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// The API's shape as an embedder meets it: one way to look questions up, stored events with their `seq`,
/// typed errors, positions of subscriptions, readable values.
@Suite struct EmbedderAPITests {
    @Test("question look-ups have one shape on Ledger, SubjectLedger and LedgerView")
    func questionLookUps() async throws {
        try await withLedger { ledger async throws in
            let ava = ledger.subject("kid-ava"), ben = ledger.subject("kid-ben")
            let question = try PermissionQuestion(handle: .phoneNumber("+14155550100"))
            try await ava.recordAsk(question)
            try await ava.recordResponse(to: question.id, choice: .approve)
            try await ben.recordAsk(try PermissionQuestion(handle: .emailAddress("x@example.net")))

            #expect(try await ledger.question(question.id)?.state == .approved)
            #expect(try await ledger.question(question.id, asOf: .seq(1))?.state == .pending)
            #expect(try await ava.question(question.id, asOf: .seq(1))?.state == .pending)
            #expect(try await ben.question(question.id) == nil, "another child's question")
            #expect(try ledger.read(asOf: .seq(1)) { try $0.question(question.id) }?.state == .pending)

            #expect(try await ledger.questions().count == 2)
            #expect(try await ledger.questions(subject: "kid-ben").count == 1)
            #expect(try await ledger.questions(state: .approved).map(\.question.id) == [question.id])
            #expect(try await ava.questions(state: .pending, asOf: .seq(1)).count == 1)
        }
    }

    @Test("stored events carry seq, recordedAt and hash, not optional; the event's own fields read through")
    func recordedEvents() async throws {
        try await withLedger { ledger async throws in
            let child = ledger.subject("kid-1")
            try await child.recordPermission(.camera, state: .authorized, at: Timestamp(microseconds: 1))
            let stored = try #require(try storedEvents(ledger).first)
            let seq: UInt64 = stored.seq
            #expect(seq == 1)
            #expect(stored.subject == "kid-1" && stored.type == .permissionChanged)
            #expect(stored.event.seq == 1 && stored.event.hash == stored.hash && stored.event.recordedAt == stored.recordedAt)
            #expect(EventJSON.encode(stored) == EventJSON.encode(stored.event))
            #expect(RecordedEvent(stored.event) == stored)
            var unstored = stored.event
            unstored.seq = nil
            #expect(RecordedEvent(unstored) == nil)
        }
    }

    @Test("appending to a ledger opened read-only throws .readOnly")
    func readOnlyIsItsOwnKind() async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            let ledger = try await Ledger.open(path: path, options: .init(readOnly: true))
            let event = PermissionEvent(id: "p2", subject: "kid-1", occurredAt: Timestamp(microseconds: 5),
                                        payload: .permissionChanged(.camera, state: .authorized, cause: nil))
            let error = await #expect(throws: LedgerError.self) { try await ledger.append(event) }
            #expect(error?.kind == .readOnly)
            #expect(error?.message.contains("read-only") == true)
            #expect(throws: LedgerError.self) { try ledger.appendSynchronously([event]) }
            await #expect(throws: LedgerError.self) { try await ledger.rebuildProjections() }
        }
    }

    @Test("a subscription's iterator says how far it has read, past other subjects' events")
    func subscriptionPosition() async throws {
        try await withLedger { ledger async throws in
            for n in 0..<6 {
                try await ledger.subject(n < 3 ? "kid-1" : "kid-2").recordPermission(.camera, state: .authorized, at: Timestamp(microseconds: Int64(n)))
            }
            var events = ledger.subject("kid-1").events(pollInterval: .milliseconds(10)).makeAsyncIterator()
            #expect(events.position == 0)
            #expect(try await events.next()?.seq == 1)
            #expect(events.position == 1)
            _ = try await events.next()
            _ = try await events.next()
            #expect(events.position == 6, "the page read reached the head; kid-2's events count as read")
            let responses = ledger.responses(after: 4).makeAsyncIterator()
            #expect(responses.position == 4)
        }
    }

    @Test("heads and handles print readably")
    func descriptions() async throws {
        try await withLedger { ledger async throws in
            #expect(LogHead.empty.description == "empty")
            try await ledger.subject("kid-1").recordPermission(.camera, state: .authorized, at: Timestamp(microseconds: 1))
            let head = try ledger.head()
            #expect(head.description.hasPrefix("seq 1, recorded "))
            #expect(head.description.hasSuffix("hash \(head.hash)"))
            #expect(try CommunicationHandle.phoneNumber("+1 (415) 555-0100") == CommunicationHandle(value: "+14155550100", kind: .phoneNumber))
        }
    }

    @Test("a question is named by its id or an abbreviation of its first and last groups, resolved at a point")
    func questionReferences() async throws {
        try await withLedger { ledger async throws in
            let child = ledger.subject("kid-1")
            let a = try PermissionQuestion(handle: .phoneNumber("+14155550100"), id: UUID(uuidString: "6A3F1C2E-0000-4000-8000-000000000001")!)
            let b = try PermissionQuestion(handle: .phoneNumber("+14155550101"), id: UUID(uuidString: "6A3F1C2E-0000-4000-8000-000000000002")!)
            try await child.recordAsk(a)
            try await child.recordAsk(b)
            #expect(try QuestionReference(parsing: a.id.uuidString) == .id(a.id))
            #expect(try QuestionReference(parsing: "6a3f1c2e...000000000001") == .abbreviated(prefix: "6A3F1C2E", suffix: "000000000001"))
            #expect(try ledger.read { try QuestionReference(parsing: "6A3F1C2E…000000000002").resolve(in: $0) } == b.id)
            let none = #expect(throws: QuestionReference.Unresolved.self) {
                try ledger.read(asOf: .seq(1)) { try QuestionReference(parsing: "6A3F1C2E…000000000002").resolve(in: $0) }
            }
            #expect(none?.kind == .noMatch && none?.description == "no question matches 6A3F1C2E…000000000002 as of seq 1")
            let several = #expect(throws: QuestionReference.Unresolved.self) {
                try ledger.read { try QuestionReference(parsing: "6A3F1C2E-0000…").resolve(in: $0) }
            }
            #expect(several?.kind == .ambiguous)
            #expect(throws: PermissionModelError.self) { try QuestionReference(parsing: "6A3F…01") }
            #expect(throws: PermissionModelError.self) { try QuestionReference(parsing: "kid-1") }
        }
    }

    @Test("a point names a seq up to Int64.max, and says why when it does not")
    func pointsOfTheLog() throws {
        #expect(try AsOf(parsing: "seq:9223372036854775807") == .seq(AsOf.largestSeq))
        let beyond = #expect(throws: PermissionModelError.self) { try AsOf(parsing: "seq:9223372036854775808") }
        #expect(beyond?.reason == "seq:9223372036854775808 is beyond any seq a ledger can hold (at most 9223372036854775807)")
        let huge = #expect(throws: PermissionModelError.self) { try AsOf(parsing: "seq:99999999999999999999999") }
        #expect(huge?.reason.contains("is beyond any seq a ledger can hold") == true)
        let word = #expect(throws: PermissionModelError.self) { try AsOf(parsing: "seq:+5") }
        #expect(word?.reason.contains("is not a point of the log") == true)
    }
}
