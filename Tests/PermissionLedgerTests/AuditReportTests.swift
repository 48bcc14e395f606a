import Foundation
@testable import PermissionLedger
import PermissionLedgerTesting
import PermissionModel
import Testing

/// `AuditReport`: what it gathers from a ledger, and the text it writes into HTML.
@Suite struct AuditReportTests {
    static func time(_ text: String) -> Timestamp { try! Timestamp(rfc3339: "2026-11-20T\(text)Z") }

    @Test func aTimeLimitedApprovalLapsesAndWhatHoldsRunsToThePoint() async throws {
        try await withLedger { ledger in
            _ = try await ledger.append(try Fixtures.fixture("time-limited.jsonl").events)
            let report = try AuditReport(ledger: ledger, subject: "kid-ben", asOf: .seq(7))
            let lanes = Dictionary(uniqueKeysWithValues: report.contacts.compactMap { lane in lane.handle.value.map { ($0.value, lane) } })
            let pixelpal = try #require(lanes["pixelpal"])
            #expect(pixelpal.intervals.count == 1)
            #expect(pixelpal.intervals[0].start == Self.time("10:00:00") && pixelpal.intervals[0].end == Self.time("11:00:00"))
            #expect(pixelpal.intervals[0].lapsed && pixelpal.intervals[0].source == .messages)
            let email = try #require(lanes["aunt.jo@example.net"])
            #expect(email.intervals.map(\.start) == [Self.time("10:05:00")] && email.intervals[0].end == nil && !email.intervals[0].lapsed)
            // Q2 and Q3 are both about the email; Q1 about pixelpal.
            #expect(email.marks.count == 2 && pixelpal.marks.count == 1 && pixelpal.marks[0].state == .approved)
            #expect(report.knownAtEnd.map(\.handle.value) == ["aunt.jo@example.net"])
            #expect(report.permissions.map(\.permission) == [.notifications])
            #expect(report.questions.count == 3 && report.integrity.isIntact && report.integrity.checkedEvents == 7)

            // Before the grant ran out, the same approval still holds, its end ahead.
            let earlier = try AuditReport(ledger: ledger, subject: "kid-ben", asOf: .seq(6))
            let held = try #require(earlier.contacts.first { $0.handle.value?.value == "pixelpal" })
            #expect(held.intervals[0].end == nil && !held.intervals[0].lapsed && held.intervals[0].until == Self.time("11:00:00"))
            #expect(Set(earlier.knownAtEnd.map(\.handle.value)) == ["pixelpal", "aunt.jo@example.net"])
        }
    }

    @Test func theReportAgreesWithTheQueriesAtEveryPoint() async throws {
        try await withLedger(mapSize: 8 << 20) { ledger in
            _ = try await ledger.append(try Fixtures.fixture("family-day.jsonl").events)
            for seq: UInt64 in [50, 333, 800, 1200] {
                let report = try AuditReport(ledger: ledger, subject: "kid-cleo", asOf: .seq(seq))
                let (known, permissions, questions) = try ledger.read(asOf: .seq(seq)) { view in
                    (try view.knownHandles(subject: "kid-cleo"), try view.permissions(subject: "kid-cleo"), try view.questions(subject: "kid-cleo"))
                }
                #expect(report.knownAtEnd == known, "seq \(seq)")
                let holding = report.permissions.map { ($0.permission, $0.intervals.last!.state) }
                #expect(holding.map(\.0) == permissions.map(\.permission))
                #expect(holding.map(\.1) == permissions.map(\.state))
                #expect(Set(report.questions.map(\.question.id)) == Set(questions.map(\.question.id)))
                #expect(Dictionary(uniqueKeysWithValues: report.questions.map { ($0.question.id, $0.state) })
                        == Dictionary(uniqueKeysWithValues: questions.map { ($0.question.id, $0.state) }))
            }
        }
    }

    @Test func aPeriodOutsideWhatTheLedgerKnewIsRefused() async throws {
        try await withLedger { ledger in
            _ = try await ledger.append(try Fixtures.fixture("time-limited.jsonl").events)
            #expect(throws: LedgerError.self) { try AuditReport(ledger: ledger, subject: "kid-nobody") }
            #expect(throws: LedgerError.self) {
                try AuditReport(ledger: ledger, subject: "kid-ben", period: ReportPeriod(to: Self.time("13:00:00")), asOf: .seq(7))
            }
            #expect(throws: LedgerError.self) {
                try AuditReport(ledger: ledger, subject: "kid-ben", period: ReportPeriod(from: Self.time("11:00:00"), to: Self.time("10:00:00")))
            }
            let narrow = try AuditReport(ledger: ledger, subject: "kid-ben", period: ReportPeriod(from: Self.time("10:06:00"), to: Self.time("10:30:00")))
            // Only what happened in the period: Q3's question and answer; Q1 and Q2 were answered before it.
            #expect(narrow.events.allSatisfy { $0.occurredAt >= Self.time("10:06:00") && $0.occurredAt <= Self.time("10:30:00") })
            #expect(narrow.questions.map(\.question.id.uuidString) == ["6A3F1C2E-0009-4000-8000-000000000003"])
            #expect(Set(narrow.knownAtStart.map(\.handle.value)) == ["pixelpal", "aunt.jo@example.net"])
        }
    }

    @Test(arguments: [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("a\"b'c&d", "a&quot;b&#39;c&amp;d"),
        ("\u{202E}evil", "\\u{202E}evil"),
        ("line\nbreak\u{1B}[31m", "line\\u{000A}break\\u{001B}[31m"),
        ("Zoë 🦊", "Zoë 🦊"),
    ])
    func valuesAreInertText(value: String, written: String) {
        #expect(HTMLText.escaped(value) == written)
    }

    @Test func anIndexLinksOnlyToFilesBesideIt() {
        #expect(AuditReportIndex.href("001-kid-ava.html") == "001-kid-ava.html")
        #expect(AuditReportIndex.href("../etc/passwd") == "./..%2Fetc%2Fpasswd")
        #expect(AuditReportIndex.href("javascript:alert(1)") == "javascript%3Aalert%281%29")
    }
}
