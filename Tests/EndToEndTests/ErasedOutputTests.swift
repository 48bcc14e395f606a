import Foundation
import Testing

/// docs/spec/PRIVACY.md, "What outputs show in place of an erased value": tables and CSV show `(erased, seq N)`.
@Suite("erased values in outputs", .timeLimit(.minutes(10)))
struct ErasedOutputTests {
    static let events = """
        {"type":"handles.observed","id":"seen","subject":"kid-ava","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:00Z","checked":[{"value":"+14155550101","kind":"phoneNumber"}],"known":[{"value":"+14155550101","kind":"phoneNumber"}]}
        {"type":"subject.erased","id":"erase-1","subject":"kid-ava","occurredAt":"2026-11-20T10:00:00Z","recordedAt":"2026-11-20T10:00:00Z","erasure":{"basis":"guardianRequest","reference":"case-4711"}}

        """

    @Test("history as a table and as CSV shows (erased, seq N) in place of an erased handle, and never its value")
    func historyShowsTheErasure() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "erased.jsonl"))
            for format in ["table", "csv"] {
                let run = try sandbox.run(["history", "--ledger", ledger, "--subject", "kid-ava", "--format", format])
                #expect(run.status == 0, "\(run)")
                #expect(run.out.contains("(erased, seq 2)"), "\(format): \(run.out)")
                #expect(!run.out.contains("4155550101"), "\(format): the erased value is shown: \(run.out)")
                #expect(run.out.contains("guardianRequest case-4711"), "\(format): the erasure itself is listed: \(run.out)")
            }
        }
    }

    @Test("history as JSON gives null in place of an erased handle's value, and the erasure's seq and basis beside it")
    func historyJSONShowsTheErasure() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "erased.jsonl"))
            let run = try sandbox.run(["history", "--ledger", ledger, "--subject", "kid-ava", "--format", "json"])
            #expect(run.status == 0, "\(run)")
            #expect(!run.out.contains("4155550101"), "the erased value is shown: \(run.out)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
            let events = try #require(object["events"] as? [[String: Any]])
            try #require(events.count == 2)
            for list in ["checked", "known"] {
                let handles = try #require(events[0][list] as? [[String: Any]], "\(list)")
                try #require(handles.count == 1)
                #expect(handles[0]["value"] is NSNull, "\(list): \(handles[0])")
                #expect(handles[0]["kind"] as? String == "phoneNumber")
                let erased = try #require(handles[0]["erased"] as? [String: Any], "\(list): \(handles[0])")
                #expect(erased["seq"] as? Int == 2)
                #expect(erased["basis"] as? String == "guardianRequest")
            }
            #expect(events[1]["erased"] == nil, "the erasure event itself erased nothing of its own")
        }
    }

    @Test("known-handles keeps an erased handle's membership and shows (erased, seq N), or null and the erasure in JSON")
    func knownHandlesShowTheErasure() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.events, to: "erased.jsonl"))
            let table = try sandbox.run(["known-handles", "--ledger", ledger, "--subject", "kid-ava", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.out.contains("(erased, seq 2)"), "\(table.out)")
            #expect(table.out.contains("observed, seq 1"), "the membership is what it was: \(table.out)")
            #expect(!table.out.contains("4155550101"), "\(table.out)")
            let run = try sandbox.run(["known-handles", "--ledger", ledger, "--subject", "kid-ava", "--format", "json"])
            #expect(run.status == 0, "\(run)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
            let handles = try #require(object["handles"] as? [[String: Any]])
            try #require(handles.count == 1)
            #expect(handles[0]["value"] is NSNull, "\(handles[0])")
            #expect(handles[0]["since"] as? String == "2026-11-20T09:00:00Z")
            let erased = try #require(handles[0]["erased"] as? [String: Any], "\(handles[0])")
            #expect(erased["seq"] as? Int == 2)
            #expect(erased["basis"] as? String == "guardianRequest")
        }
    }
}
