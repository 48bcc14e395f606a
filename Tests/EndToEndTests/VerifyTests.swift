import Foundation
import Testing

@Suite("verify", .timeLimit(.minutes(10)))
struct VerifyTests {
    @Test("prints ok: N events, head HASH for an intact ledger")
    func intactLedger() throws {
        try withFixtureLedger("time-limited.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["verify", "--ledger", ledger, "--format", "table"])
            #expect(result.status == 0, "\(result)")
            let match = try #require(try /^ok: (\d+) events, head ([0-9a-f]{64})$/.wholeMatch(in: result.out.trimmingCharacters(in: .newlines)), "\(result)")
            #expect(match.1 == "7")

            let lastLine = try #require(String(decoding: try sandbox.export(ledger), as: UTF8.self).split(separator: "\n").last)
            #expect(lastLine.contains(#""hash":"\#(match.2)""#), "the head is the last event's hash")
        }
    }

    @Test("--format json gives ok, events and head")
    func json() throws {
        try withFixtureLedger("time-limited.jsonl") { sandbox, ledger in
            let table = try sandbox.run(["verify", "--ledger", ledger, "--format", "table"])
            let report = try sandbox.json(["verify", "--ledger", ledger])
            #expect(report.bool("ok") == true)
            #expect(report.int("events") == 7)
            let head = try #require(report.string("head"))
            #expect(isLowercaseHex(head))
            #expect(table.out.contains(head), "table and JSON name the same head")
        }
    }

    @Test("an empty ledger verifies with 0 events")
    func emptyLedger() throws {
        try withSandbox { sandbox in
            let empty = try sandbox.write("# nothing but a comment\n", to: "empty.jsonl")
            let ledger = try sandbox.ledger(importing: empty)
            let report = try sandbox.json(["verify", "--ledger", ledger])
            #expect(report.bool("ok") == true)
            #expect(report.int("events") == 0)
        }
    }

    @Test("names the damaged seq and exits 4 when an event record's bytes are changed in data.mdb")
    func damagedEventRecord() throws {
        try withSandbox { sandbox in
            // "update-03" is the id of the event at seq 3: in its record's envelope, which the chain hash covers, and
            // in the index of ids. (Its description, "share photos", is sealed: not stored as it is.)
            let ledger = try sandbox.ledger(importing: Fixture.path("significant-update.jsonl"))
            let damaged = sandbox.path("damaged")
            try FileManager.default.copyItem(atPath: ledger, toPath: damaged)

            let file = URL(fileURLWithPath: damaged).appendingPathComponent("data.mdb")
            var bytes = [UInt8](try Data(contentsOf: file))
            let needle = Array("update-03".utf8)
            var found = 0
            var index = 0
            while index + needle.count <= bytes.count {
                if bytes[index] == needle[0], Array(bytes[index..<index + needle.count]) == needle {
                    bytes[index] ^= 0x20 // "update" -> "Update": the record still decodes, its hash no longer matches
                    found += 1
                    index += needle.count
                } else {
                    index += 1
                }
            }
            try #require(found > 0, "the event's id is stored as UTF-8 in data.mdb")
            try Data(bytes).write(to: file)

            let result = try sandbox.run(["verify", "--ledger", damaged])
            #expect(result.status == 4, "\(result)")
            #expect(!result.crashed, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("seq 3:") == true, "\(result)")

            let intact = try sandbox.run(["verify", "--ledger", ledger])
            #expect(intact.status == 0, "the original is untouched: \(intact)")
        }
    }
}
