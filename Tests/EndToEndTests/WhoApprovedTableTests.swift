import Foundation
import Testing

/// `who-approved --format table` reads plainly: how many questions approved the handle and what observations
/// said first, then by child each approval and observation with its verb and what ended it.
@Suite("who-approved table", .timeLimit(.minutes(10)))
struct WhoApprovedTableTests {
    @Test("an approval revoked by an observation (handles-observed.jsonl): the whole table")
    func revoked() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let run = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", "robo_rex", "--as-of", "seq:4", "--format", "table"])
            #expect(run.status == 0, "\(run)")
            #expect(run.out == """
                robo_rex (custom), as of seq 4 (2026-11-20 11:00:01 UTC)
                approved by 1 question
                observed as NOT known 1 time, as known 0 times
                known now to no child

                kid-ben: not known now
                  approved by question 6A3F1C2E-000D-4000-8000-000000000001 (Approve) on 2026-11-20 10:05:00 via messages
                    REVOKED on 2026-11-20 10:30:00 by the observation at seq 3, which said NOT known
                  observed as NOT known at seq 3 on 2026-11-20 10:30:00
                    still not known

                """, "\(run)")
        }
    }

    @Test("a handle valid as two kinds names the kind in each child's heading (handles-observed.jsonl)")
    func twoKinds() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let run = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", "+1 555 010 7788", "--as-of", "seq:4", "--format", "table"])
            #expect(run.status == 0, "\(run)")
            #expect(run.outLines.first?.hasPrefix("+15550107788 (phoneNumber) or +1 555 010 7788 (custom), as of seq 4") == true, "\(run)")
            #expect(run.outLines.contains("approved by 0 questions"), "\(run)")
            #expect(run.outLines.contains("observed as NOT known 0 times, as known 1 time"), "\(run)")
            #expect(run.outLines.contains("kid-ben, +15550107788 (phoneNumber): known now"), "\(run)")
            #expect(run.outLines.contains("  observed as known at seq 3 on 2026-11-20 10:30:00"), "\(run)")
        }
    }

    @Test("many approvals and observations (family-day.jsonl): the counts agree with the JSON, NOT known first, every line a verb",
          arguments: ["robo_rex", "pixelpal", "grandpa.joe@example.com"])
    func familyDay(_ handle: String) throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let arguments = ["who-approved", "--ledger", ledger, "--handle", handle, "--as-of", "seq:1200"]
            let records = try sandbox.json(arguments).objects("records")
            let questions = Set(records.compactMap { try? $0.object("source").string("question") })
            let observations = records.filter { (try? $0.object("source").int("observation")) != nil }
            let notKnown = observations.filter { $0.bool("known") == false }.count

            let run = try sandbox.run(arguments + ["--format", "table"])
            #expect(run.status == 0, "\(run)")
            let lines = run.outLines
            #expect(lines.count > 1 && lines[1] == "approved by \(questions.count) question\(questions.count == 1 ? "" : "s")", "\(run)")
            let known = observations.count - notKnown
            #expect(lines[2] == "observed as NOT known \(notKnown) time\(notKnown == 1 ? "" : "s"), as known \(known) time\(known == 1 ? "" : "s")")

            // One line a record, each with its verb; within a child, approvals, then NOT known, then known.
            let recordLines = lines.filter { $0.hasPrefix("  ") && !$0.hasPrefix("    ") }
            #expect(recordLines.count == records.count, "\(run)")
            #expect(recordLines.allSatisfy { $0.hasPrefix("  approved by question ") || $0.hasPrefix("  observed as known at seq ")
                || $0.hasPrefix("  observed as NOT known at seq ") }, "\(run)")
            for id in questions { #expect(run.out.contains("approved by question \(id) ("), "\(id) whole, with its choice: \(run)") }
            var rank = 0
            for line in lines where !line.hasPrefix("    ") {
                if !line.hasPrefix("  ") { rank = 0; continue }
                let this = line.hasPrefix("  approved") ? 0 : line.hasPrefix("  observed as NOT known") ? 1 : 2
                #expect(this >= rank, "out of order: \(line)")
                rank = this
            }
        }
    }
}
