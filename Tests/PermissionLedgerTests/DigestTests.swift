import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

@Suite struct DigestTests {
    static func isHex64(_ text: String) -> Bool {
        text.utf8.count == 64 && text.allSatisfy { "0123456789abcdef".contains($0) }
    }

    @Test func aDigestIs64LowercaseHexDigits() async throws {
        try await withLedger { ledger async throws in
            #expect(Self.isHex64(try await ledger.digest()))
            try await ledger.importFixture("approval-messages.jsonl")
            #expect(Self.isHex64(try await ledger.digest()))
        }
    }

    @Test func theDigestChangesWithTheState() async throws {
        try await withLedger { ledger async throws in
            var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T09:00:00Z"))
            let q = try s.asked(about: [.custom("dragonslayer42")])
            s.advance(by: .seconds(300))
            s.answered(q, choice: "approve")
            s.advance(by: .seconds(60))
            s.permission(.camera, .askAgain)
            s.advance(by: .seconds(60))
            s.permission(.camera, .authorized)
            s.advance(by: .seconds(60))
            try s.observed(checked: [.custom("dragonslayer42")], known: [])  // revokes the approval's handle
            // The digest after each event: empty, asked, answered, permission, changed, revoked.
            var all = await [try ledger.digest()]
            for event in s.events {
                try await ledger.append([event])
                await all.append(try ledger.digest())
            }
            #expect(Set(all).count == all.count, "every event changed the state")
            // Earlier points keep their digests.
            #expect(try await ledger.digest(asOf: .seq(0)) == all[0])
            #expect(try await ledger.digest(asOf: .seq(2)) == all[2])
            #expect(try await ledger.digest(asOf: .seq(4)) == all[4])
            // A duplicate changes nothing.
            s.advance(by: .seconds(60))
            s.answered(q, choice: "approve")
            let duplicate = try await ledger.append(Array(s.events.suffix(1)))
            #expect(duplicate.duplicates == 1)
            #expect(try await ledger.digest() == all[5])
        }
    }

    /// Output JSON escapes U+2028 so that a record is one line for any reader; the digest's canonical document
    /// keeps such characters as they are, so that a ledger's digest does not depend on the version computing it.
    @Test func theDigestsDocumentKeepsLineSeparatorsAsTheyAre() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json: """
                {"type":"question.asked","id":"ev-1","subject":"kid-ava","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-7E57-4000-8000-000000000001","topic":{"significantAppUpdate":{"description":"one\\u2028two\\u2029three"}}}}
                """)
            let canonical = try ledger.read { try $0.canonicalState() }
            #expect(canonical.contains("one\u{2028}two\u{2029}three"))
            #expect(!canonical.contains("\\u2028"))
            let exported = try exportText(ledger)
            #expect(exported.contains("one\\u2028two\\u2029three"))
        }
    }

    @Test func theDigestFollowsTheClockAtAPoint() async throws {
        try await withLedger { ledger async throws in
            var s = Scenario(subject: "kid-ava", start: try time("2026-11-20T09:00:00Z"))
            try s.asked(about: [.custom("dragonslayer42")], expiresIn: .seconds(1800))  // expiresAt 09:30:00
            try await ledger.append(s.events)
            let before = try await ledger.digest(asOf: .time(try time("2026-11-20T09:29:59Z")))
            let after = try await ledger.digest(asOf: .time(try time("2026-11-20T09:30:00Z")))
            #expect(before != after, "the question expired by the clock")
            #expect(try await ledger.digest() == ledger.digest(asOf: .seq(1)), "no point: as of the head, not the wall clock")
            #expect(try await ledger.digest() == before)
        }
    }

    @Test func twoLedgersWithTheSameEventsAgreeWhateverTheirClocks() async throws {
        try await withTemporaryDirectory { directory async throws in
            let a = try Ledger(path: directory + "/a", options: .init(durable: false, clock: { Timestamp(microseconds: 0) }))
            let b = try Ledger(path: directory + "/b", options: .init(durable: false, clock: { Timestamp(microseconds: .max / 2) }))
            let events = try Fixtures.fixture("family-day.jsonl").events
            _ = try await a.append(events)
            // b in uneven batches.
            var rest = events[...]
            var size = 1
            while !rest.isEmpty {
                _ = try await b.append(Array(rest.prefix(size)))
                rest = rest.dropFirst(size)
                size = size * 3 % 97 + 1
            }
            #expect(try await a.digest() == b.digest())
            for n in [UInt64(1), 600, 1199] {
                #expect(try await a.digest(asOf: .seq(n)) == b.digest(asOf: .seq(n)))
            }
            let t = try time("2026-11-20T13:00:00Z")
            #expect(try await a.digest(asOf: .time(t)) == b.digest(asOf: .time(t)))
        }
    }

    @Test func differentEventsGiveDifferentDigests() async throws {
        try await withTwoLedgers { a, b async throws in
            try await a.importFixture("decline.jsonl")
            try await b.importFixture("approval-messages.jsonl")
            #expect(try await a.digest() != b.digest())
        }
    }

    @Test func canonicalStateListsQuestionsAndSubjects() async throws {
        try await withLedger { ledger async throws in
            try await ledger.importFixture("approval-messages.jsonl")
            let state = try ledger.read(asOf: .seq(2)) { try $0.canonicalState() }
            #expect(state.hasPrefix(#"{"questions":[{"id":"6A3F1C2E-0001-4000-8000-000000000001","subject":"kid-ava""#))
            #expect(state.contains(#""subjects":[{"subject":"kid-ava","handles":[{"value":"dragonslayer42","kind":"custom","since":"2026-11-20T09:05:00Z","until":null,"source":{"question":"6A3F1C2E-0001-4000-8000-000000000001"}}],"permissions":[]}]}"#), "\(state)")
        }
    }
}
