import Foundation
import PermissionLedger
import PermissionModel
import Testing

@Suite struct DigestTests {
    static func isHex64(_ text: String) -> Bool {
        text.utf8.count == 64 && text.allSatisfy { "0123456789abcdef".contains($0) }
    }

    @Test func aDigestIs64LowercaseHexDigits() async throws {
        try await withLedger { ledger async throws in
            #expect(Self.isHex64(try ledger.digest()))
            try await ledger.importFixture("approval-messages.jsonl")
            #expect(Self.isHex64(try ledger.digest()))
        }
    }

    @Test func theDigestChangesWithTheState() async throws {
        try await withLedger { ledger async throws in
            let empty = try ledger.digest()
            try await ledger.append(json: JSONLine.asked("e1", question: QID.q1, at: "09:00:00", recorded: "09:00:01"))
            let asked = try ledger.digest()
            try await ledger.append(json: JSONLine.answered("e2", question: QID.q1, choice: "approve", at: "09:05:00", recorded: "09:05:01"))
            let answered = try ledger.digest()
            try await ledger.append(json: JSONLine.permission("p1", "camera", "askAgain", at: "09:06:00", recorded: "09:06:01"))
            let permission = try ledger.digest()
            try await ledger.append(json: JSONLine.permission("p2", "camera", "authorized", at: "09:07:00", recorded: "09:07:01"))
            let changed = try ledger.digest()
            try await ledger.append(json: JSONLine.observed("o1", checked: [("dragonslayer42", "custom")], known: [], at: "09:08:00", recorded: "09:08:01"))
            let revoked = try ledger.digest()
            let all = [empty, asked, answered, permission, changed, revoked]
            #expect(Set(all).count == all.count, "every event changed the state")
            // Earlier points keep their digests.
            #expect(try ledger.digest(asOf: .seq(0)) == empty)
            #expect(try ledger.digest(asOf: .seq(2)) == answered)
            #expect(try ledger.digest(asOf: .seq(4)) == changed)
            // A duplicate changes nothing.
            try await ledger.append(json: JSONLine.answered("e3", question: QID.q1, choice: "approve", at: "09:09:00", recorded: "09:09:01"))
            #expect(try ledger.digest() == revoked)
        }
    }

    @Test func theDigestFollowsTheClockAtAPoint() async throws {
        try await withLedger { ledger async throws in
            try await ledger.append(json: JSONLine.asked("e1", question: QID.q1, at: "09:00:00", recorded: "09:00:01", expiresAt: "09:30:00"))
            let before = try ledger.digest(asOf: .time(try time("2026-11-20T09:29:59Z")))
            let after = try ledger.digest(asOf: .time(try time("2026-11-20T09:30:00Z")))
            #expect(before != after, "the question expired by the clock")
            #expect(try ledger.digest() == ledger.digest(asOf: .seq(1)), "no point: as of the head, not the wall clock")
            #expect(try ledger.digest() == before)
        }
    }

    @Test func twoLedgersWithTheSameEventsAgreeWhateverTheirClocks() async throws {
        try await withTemporaryDirectory { directory async throws in
            let a = try Ledger(path: directory + "/a", options: .init(durable: false, clock: { Timestamp(microseconds: 0) }))
            let b = try Ledger(path: directory + "/b", options: .init(durable: false, clock: { Timestamp(microseconds: .max / 2) }))
            let events = try Fixtures.events("family-day.jsonl")
            _ = try await a.append(events)
            // b in uneven batches.
            var rest = events[...]
            var size = 1
            while !rest.isEmpty {
                _ = try await b.append(Array(rest.prefix(size)))
                rest = rest.dropFirst(size)
                size = size * 3 % 97 + 1
            }
            #expect(try a.digest() == b.digest())
            for n in [UInt64(1), 600, 1199] {
                #expect(try a.digest(asOf: .seq(n)) == b.digest(asOf: .seq(n)))
            }
            let t = try time("2026-11-20T13:00:00Z")
            #expect(try a.digest(asOf: .time(t)) == b.digest(asOf: .time(t)))
        }
    }

    @Test func differentEventsGiveDifferentDigests() async throws {
        try await withTwoLedgers { a, b async throws in
            try await a.importFixture("decline.jsonl")
            try await b.importFixture("approval-messages.jsonl")
            #expect(try a.digest() != b.digest())
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
