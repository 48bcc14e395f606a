import Foundation
import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// The README's example for test authors, as written there (but for locating the fixture from this file).
@Suite struct ReadmeExampleTests {
    @Test func aLateApprovalStillGrantsTheContact() throws {
        var s = Scenario(subject: "kid-1", start: try Timestamp(rfc3339: "2026-11-20T09:00:00Z"))
        let q = try s.asked(about: [.custom("dragonslayer42")], expiresIn: .seconds(3600))
        s.advance(by: .seconds(600))
        s.expired(q)
        s.advance(by: .seconds(300))
        s.answered(q, choice: "approve")

        try s.replay { ledger in
            ledger.expectQuestion(q, state: .expired, asOf: .seq(2))
            ledger.expectQuestion(q, state: .approved, late: true, via: .messages)
            ledger.expectKnownHandles(subject: "kid-1", [try .custom("dragonslayer42")])
        }
    }

    @Test func theFamilyDayFixtureEndsAsDocumented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let fixture = try Fixture(path: root.appendingPathComponent("Fixtures/family-day.jsonl").path)
        try fixture.replay { ledger in
            ledger.expectPermission(.camera, .authorized, subject: "kid-ava")
            ledger.expectDigest("e9c250ecae8108e2456d127d4c1a95042785068dcbe0260701f57a285d64b49e")
        }
    }
}
