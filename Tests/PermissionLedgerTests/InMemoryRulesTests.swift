import Foundation
@_spi(StorageEngine) import PermissionLedger
import PermissionModel
import Testing

/// `InMemoryRules`, the benchmark suite's ceiling: the ledger's rules, encoding and chain without storage or keys.
/// A ceiling that ran other rules, or skipped some, would measure something else.
@Suite struct InMemoryRulesTests {
    static let fixedClock: @Sendable () -> Timestamp = { Timestamp(microseconds: 1_795_000_000_000_000) }

    @Test(arguments: Fixtures.valid)
    func acceptsWhatTheLedgerAcceptsWithTheSameChain(name: String) async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(mapSize: 1 << 20, durable: false, clock: Self.fixedClock))
            let events = try Fixtures.fixture(name).events
            let summary = try ledger.appendSynchronously(events)
            var rules = InMemoryRules(clock: Self.fixedClock)
            let appended = try rules.apply(events)
            #expect(appended == summary.appended)
            // The ledger seals personal fields with secrets of its own, which the chain covers through commitments;
            // the rules in memory keep no keys and chain version 1 records, so the heads agree up to the hash.
            let head = try ledger.head()
            #expect(rules.head.seq == head.seq && rules.head.recordedAt == head.recordedAt, "the same rules give the same head")
        }
    }

    @Test func aDuplicateIsNotAppendedAndAReusedIDIsRejected() throws {
        let asked = try decodeEvent(JSONLine.asked("e1", question: "5C1D1A2E-0000-4000-8000-000000000001", at: "10:00:00", recorded: "10:00:00"))
        var rules = InMemoryRules()
        #expect(try rules.apply([asked]) == 1)
        #expect(try rules.apply([asked]) == 0, "the same event again is a duplicate")
        let other = try decodeEvent(JSONLine.asked("e1", question: "5C1D1A2E-0000-4000-8000-000000000002", at: "10:00:01", recorded: "10:00:01"))
        let rejection = #expect(throws: EventRejection.self) { try rules.apply([other]) }
        #expect(rejection?.description.contains("already used by seq 1") == true, "\(String(describing: rejection))")
        #expect(rules.head.seq == 1, "a rejected event changes nothing")
    }

    @Test func anAnswerToAnUnknownQuestionIsRejected() throws {
        let answer = try decodeEvent(JSONLine.answered("a1", question: "5C1D1A2E-0000-4000-8000-0000000000FF", choice: "approve",
                                                       at: "10:00:00", recorded: "10:00:00"))
        var rules = InMemoryRules()
        #expect(throws: EventRejection.self) { try rules.apply([answer]) }
        #expect(rules.head == .empty)
    }
}
