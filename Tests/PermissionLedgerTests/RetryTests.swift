import Foundation
import PermissionLedger
import PermissionModel
import Testing

/// A `record…` call retried (after a timeout, a crash, a lost reply) is a duplicate, not a rejection.
@Suite struct RetryTests {
    /// A ledger whose clock moves on a second at every reading, so that no two calls without `at:` agree on a time.
    static func withTickingLedger(_ body: (Ledger) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory async throws in
            let clock = Tick()
            let ledger = try await Ledger.open(path: directory + "/ledger", options: .init(durable: false, clock: { clock.next() }))
            try await body(ledger)
            await ledger.close()
        }
    }

    final class Tick: @unchecked Sendable {
        private let lock = NSLock()
        private var now = Timestamp(microseconds: 1_795_000_000_000_000)
        func next() -> Timestamp {
            lock.withLock {
                now = Timestamp(microseconds: now.microseconds + 1_000_000)
                return now
            }
        }
    }

    @Test("recordAsk, recordSendCanceled, recordAskFailed and recordExpiry retried without at: are duplicates")
    func retriesWithoutTimes() async throws {
        try await Self.withTickingLedger { ledger in
            let child = ledger.subject("kid-1")
            let asked = try PermissionQuestion(handle: .phoneNumber("+14155550100"))
            let first = try await child.recordAsk(asked)
            #expect(first == .appended(seq: 1))
            #expect(try await child.recordAsk(asked) == .duplicate(of: 1))

            let canceled = try PermissionQuestion(handle: .emailAddress("a@example.net"))
            try await child.recordAsk(canceled)
            let cancel = try await child.recordSendCanceled(canceled.id)
            #expect(try await child.recordSendCanceled(canceled.id) == .duplicate(of: cancel.seq))

            let failed = try PermissionQuestion(handle: .custom("friend42"))
            try await child.recordAsk(failed)
            let failure = try await child.recordAskFailed(failed.id, error: AskError(code: .unknown))
            #expect(try await child.recordAskFailed(failed.id, error: AskError(code: .unknown)) == .duplicate(of: failure.seq))

            let expiry = try await child.recordExpiry(asked.id)
            #expect(try await child.recordExpiry(asked.id) == .duplicate(of: expiry.seq))
            #expect(try ledger.head().seq == 6)
        }
    }

    @Test("a retry with another at: is a duplicate too; other content under the same question is still rejected")
    func retriesWithTimes() async throws {
        try await Self.withTickingLedger { ledger in
            let child = ledger.subject("kid-1")
            let question = try PermissionQuestion(handle: .phoneNumber("+14155550100"))
            let at = try Timestamp(rfc3339: "2026-11-20T09:00:00Z")
            #expect(try await child.recordAsk(question, at: at) == .appended(seq: 1))
            #expect(try await child.recordAsk(question, at: Timestamp(microseconds: at.microseconds + 5_000_000)) == .duplicate(of: 1))
            #expect(try await child.recordAsk(question) == .duplicate(of: 1))

            // The same question id with another topic is not a retry.
            let other = try PermissionQuestion(handle: .phoneNumber("+14155550199"), id: question.id)
            await #expect(throws: AppendRejected.self) { try await child.recordAsk(other) }
            // Nor is the same question for another child.
            await #expect(throws: AppendRejected.self) { try await ledger.subject("kid-2").recordAsk(question) }
            // An id of the caller's own follows the ledger's rules for ids as they are.
            let mine = try PermissionQuestion(handle: .phoneNumber("+14155550123"))
            #expect(try await child.recordAsk(mine, at: at, id: "msg-7") == .appended(seq: 2))
            await #expect(throws: AppendRejected.self) { try await child.recordAsk(mine, id: "msg-7") }
        }
    }

    @Test("retries racing each other: one event, the others duplicates of it")
    func concurrentRetries() async throws {
        try await Self.withTickingLedger { ledger in
            let child = ledger.subject("kid-1")
            let question = try PermissionQuestion(handle: .phoneNumber("+14155550100"))
            let outcomes = try await withThrowingTaskGroup(of: AppendOutcome.self) { group in
                for _ in 0..<8 { group.addTask { try await child.recordAsk(question) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 == .appended(seq: 1) }.count == 1)
            #expect(outcomes.filter { $0 == .duplicate(of: 1) }.count == 7)
        }
    }
}

extension AppendOutcome {
    /// The seq appended at, or the earlier event's.
    var seq: UInt64 {
        switch self {
        case .appended(let seq), .duplicate(let seq): seq
        }
    }
}
