import Foundation
import PermissionLedgerTesting
import Testing

// The sample of PermissionLedgerTesting's DocC landing page (Documentation.docc/PermissionLedgerTesting.md), with
// its imports and no others, compiled and run as written there.

@Test func aLateAnswerStillApproves() throws {
    let q1 = UUID(uuidString: "6A3F1C2E-0005-4000-8000-000000000001")!
    try Fixture(path: "Fixtures/late-answer.jsonl").replay { replayed in
        replayed.expectQuestion(q1, state: .approved, late: true)
        replayed.expectQuestion(q1, state: .expired, asOf: .seq(4))
    }
}
