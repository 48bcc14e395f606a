import Foundation
import Testing

@Suite("export", .timeLimit(.minutes(10)))
struct ExportTests {
    @Test("an export imported into an empty ledger gives an identical ledger (family-day.jsonl)")
    func roundTrip() throws {
        try withSandbox { sandbox in
            let original = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"), named: "original")
            let exported = try sandbox.export(original)
            let file = sandbox.path("export.jsonl")
            try exported.write(to: URL(fileURLWithPath: file))

            let copy = sandbox.path("copy")
            let imported = try sandbox.run(["import", "--ledger", copy, file])
            #expect(imported.status == 0, "\(imported)")
            #expect(try ImportSummary(imported) == ImportSummary(appended: 1200, duplicates: 0, head: 1200))

            #expect(try sandbox.export(copy) == exported, "same export bytes")
            let originalVerify = try sandbox.json(["verify", "--ledger", original])
            let copyVerify = try sandbox.json(["verify", "--ledger", copy])
            #expect(originalVerify.int("events") == 1200)
            #expect(copyVerify.string("head") == originalVerify.string("head"), "same head hash")
        }
    }

    @Test("writes one event a line, in seq order, with seq, recordedAt and hash")
    func linesCarrySeqRecordedAtAndHash() throws {
        try withFixtureLedger("late-answer.jsonl") { sandbox, ledger in
            let lines = try sandbox.export(ledger).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            #expect(lines.last?.isEmpty == true, "the export ends with a newline")
            let events = try lines.dropLast().map { line in
                try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            }
            #expect(events.count == 7)
            for (index, event) in events.enumerated() {
                #expect(event.int("seq") == index + 1)
                #expect(event.string("recordedAt").flatMap(microseconds) != nil, "\(event)")
                #expect(isLowercaseHex(event.string("hash") ?? ""), "\(event)")
                #expect(event.string("id") == String(format: "late-%02d", index + 1))
            }
            // The Q2 answer occurred at 14:35:00Z and was recorded at 14:50:00Z: both are kept.
            #expect(events[5].string("occurredAt") == "2026-11-20T14:35:00Z")
            #expect(events[5].string("recordedAt") == "2026-11-20T14:50:00Z")
            // The head hash is the last event's.
            let verify = try sandbox.json(["verify", "--ledger", ledger])
            #expect(events.last?.string("hash") == verify.string("head"))
        }
    }

    @Test("writes times back in UTC, with six fraction digits only when the fraction is not zero")
    func timesInUTC() throws {
        try withSandbox { sandbox in
            // in-person.jsonl writes 11:15:00+01:00 and 11:20:30.500+01:00.
            let ledger = try sandbox.ledger(importing: Fixture.path("in-person.jsonl"))
            let events = try String(decoding: try sandbox.export(ledger), as: UTF8.self).split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            #expect(events.map { $0.string("occurredAt") } == ["2026-11-20T10:15:00Z", "2026-11-20T10:20:30.500000Z"])
            #expect(events.last?.string("recordedAt") == "2026-11-20T10:20:31.250000Z")
        }
    }

    @Test("--after SEQ writes only the later events")
    func afterSeq() throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let all = try sandbox.export(ledger).split(separator: UInt8(ascii: "\n"))
            #expect(all.count == 15)

            let later = try sandbox.export(ledger, after: 10).split(separator: UInt8(ascii: "\n"))
            #expect(later == Array(all.suffix(5)), "events 11 to 15, byte for byte")
            let seqs = try later.map { try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any]).int("seq") }
            #expect(seqs == [11, 12, 13, 14, 15])

            #expect(try sandbox.export(ledger, after: 15).isEmpty, "nothing after the head")
            #expect(try sandbox.export(ledger, after: 0).split(separator: UInt8(ascii: "\n")) == all)
        }
    }

    /// Ways to change one exported line so that it no longer matches the ledger it would make.
    enum Tampering: String, CaseIterable, Sendable {
        /// One hex digit of `hash` changed.
        case hash
        /// `occurredAt` moved by a minute, `hash` kept: the chain hash no longer covers the event.
        case content
        /// `seq` that is not the line's position.
        case seq

        func apply(to line: String) throws -> String {
            switch self {
            case .hash:
                let range = try #require(line.range(of: #""hash":""#))
                let digit = line[range.upperBound]
                return line.replacingCharacters(
                    in: range.upperBound...range.upperBound, with: digit == "0" ? "1" : "0")
            case .content:
                let changed = line.replacingOccurrences(of: #""occurredAt":"2026-11-20T09:05:00Z""#, with: #""occurredAt":"2026-11-20T09:04:00Z""#)
                try #require(changed != line)
                return changed
            case .seq:
                let changed = line.replacingOccurrences(of: #""seq":2,"#, with: #""seq":3,"#)
                try #require(changed != line)
                return changed
            }
        }
    }

    @Test("a tampered export line is rejected on import", arguments: Tampering.allCases)
    func tamperedLineIsRejected(_ tampering: Tampering) throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            var lines = String(decoding: try sandbox.export(ledger), as: UTF8.self).split(separator: "\n").map(String.init)
            try #require(lines.count == 2)
            lines[1] = try tampering.apply(to: lines[1])
            let file = try sandbox.write(lines.joined(separator: "\n") + "\n", to: "tampered.jsonl")

            let copy = sandbox.path("copy")
            let result = try sandbox.run(["import", "--ledger", copy, file])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("\(file):2:") == true, "\(result)")
            let export = try sandbox.run(["export", "--ledger", copy])
            #expect(export.status == 0 || export.status == 3, "\(export)")
            #expect(export.stdout.isEmpty, "nothing was written, not even line 1: \(export)")
        }
    }
}
