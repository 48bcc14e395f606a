import Foundation
import Testing

@Suite("known-handles", .timeLimit(.minutes(10)))
struct KnownHandlesTests {
    @Test("--format json gives asOf, subject and handles ordered by kind, then value")
    func json() throws {
        try withFixtureLedger("several-handles.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["known-handles", "--subject", "kid-cleo", "--ledger", ledger, "--as-of", "seq:2"])
            #expect(Set(result.keys) == ["asOf", "subject", "handles"])
            #expect(try result.object("asOf").int("seq") == 2)
            #expect(result.string("subject") == "kid-cleo")

            let handles = try result.objects("handles")
            for handle in handles {
                #expect(Set(["value", "kind", "since", "until", "source"]).isSubset(of: handle.keys), "\(handle)")
            }
            // custom < emailAddress < phoneNumber, whatever the order of the question's people.
            #expect(handles.map { $0.string("kind") } == ["custom", "emailAddress", "phoneNumber"])
            #expect(handles.map { $0.string("value") } == ["Skater_Girl.99", "grandma.rose@example.com", "+14155550132"])
            #expect(handles.allSatisfy { $0.string("since") == "2026-11-20T15:10:00Z" && $0.isNull("until") })
            #expect(try handles.allSatisfy { try $0.object("source").string("question") == "6A3F1C2E-000A-4000-8000-000000000001" })
        }
    }

    @Test("an observation is the source {observation: SEQ} and replaces what came before")
    func observationSource() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let handles = try sandbox.json(["known-handles", "--subject", "kid-ben", "--ledger", ledger, "--as-of", "seq:4"])
                .objects("handles")
            #expect(handles.map { $0.string("value") } == ["+15550107788", "5550104477"], "robo_rex was revoked")
            #expect(handles.map { $0.string("kind") } == ["phoneNumber", "phoneNumber"])
            let observed = try handles[0].object("source")
            #expect(Set(observed.keys) == ["observation"])
            #expect(observed.int("observation") == 3)
            #expect(handles[0].string("since") == "2026-11-20T10:30:00Z")
            #expect(try handles[1].object("source").string("question") == "6A3F1C2E-000D-4000-8000-000000000001")

            let before = try sandbox.json(["known-handles", "--subject", "kid-ben", "--ledger", ledger, "--as-of", "seq:2"])
                .objects("handles")
            #expect(before.map { $0.string("value") } == ["robo_rex", "5550104477"])
        }
    }

    @Test("a time-limited approval has until, and the handle is gone once it lapses")
    func timeLimited() throws {
        try withFixtureLedger("time-limited.jsonl") { sandbox, ledger in
            func handles(asOf when: String) throws -> [[String: Any]] {
                try sandbox.json(["known-handles", "--subject", "kid-ben", "--ledger", ledger, "--as-of", when]).objects("handles")
            }

            let granted = try handles(asOf: "seq:6")
            #expect(granted.map { $0.string("value") } == ["pixelpal", "aunt.jo@example.net"])
            #expect(granted.first?.string("until") == "2026-11-20T11:00:00Z")
            #expect(try granted.first?.object("source").string("question") == "6A3F1C2E-0009-4000-8000-000000000001")
            // A later one-hour approval does not shorten the permanent one.
            #expect(granted.last?.isNull("until") == true)
            #expect(try granted.last?.object("source").string("question") == "6A3F1C2E-0009-4000-8000-000000000002")

            #expect(try handles(asOf: "2026-11-20T10:59:59Z").map { $0.string("value") } == ["pixelpal", "aunt.jo@example.net"])
            #expect(try handles(asOf: "2026-11-20T11:00:00Z").map { $0.string("value") } == ["aunt.jo@example.net"], "gone at until")
            #expect(try handles(asOf: "2026-11-20T11:30:00Z").map { $0.string("value") } == ["aunt.jo@example.net"])
            #expect(try handles(asOf: "seq:7").map { $0.string("value") } == ["aunt.jo@example.net"])
        }
    }

    @Test("matches the fixture's final state for a whole day (family-day.jsonl, kid-dev)")
    func familyDay() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let handles = try sandbox.json(["known-handles", "--subject", "kid-dev", "--ledger", ledger, "--as-of", "seq:1200"])
                .objects("handles")
            #expect(handles.map { "\($0.string("kind") ?? "") \($0.string("value") ?? "")" } == [
                "custom gr8_gamer", "custom mysterygamer77", "custom quietfox",
                "emailAddress oliver.bennett@example.co.uk",
                "phoneNumber +15550100101", "phoneNumber +15550100102", "phoneNumber +15550100141", "phoneNumber +15550100142",
            ])
            #expect(handles.first?.string("since") == "2026-11-20T17:23:22Z")
            #expect(try handles.first?.object("source").int("observation") == 985)
            #expect(try handles[3].object("source").string("question") == "FAD10000-0000-4000-8000-000000000248")

            let ben = try sandbox.json(["known-handles", "--subject", "kid-ben", "--ledger", ledger, "--as-of", "seq:1200"])
                .objects("handles")
            #expect(ben.count == 6)
            #expect(ben.last?.string("until") == "2026-11-20T20:30:12.750000Z")
        }
    }

    static let codePointEvents = """
        {"type":"handles.observed","id":"cp-01","subject":"kid-ava","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z","checked":[{"value":"555 010 0002","kind":"phoneNumber"},{"value":"zulu","kind":"custom"},{"value":"\\u00e9mile","kind":"custom"},{"value":"bob@example.com","kind":"emailAddress"},{"value":"alpha","kind":"custom"},{"value":"Zed","kind":"custom"},{"value":"+1 555 010 0001","kind":"phoneNumber"}],"known":[{"value":"555 010 0002","kind":"phoneNumber"},{"value":"zulu","kind":"custom"},{"value":"\\u00e9mile","kind":"custom"},{"value":"bob@example.com","kind":"emailAddress"},{"value":"alpha","kind":"custom"},{"value":"Zed","kind":"custom"},{"value":"+1 555 010 0001","kind":"phoneNumber"}]}

        """

    @Test("orders values by Unicode code point: uppercase before lowercase, accented letters last")
    func codePointOrder() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.codePointEvents, to: "observed.jsonl"))
            let handles = try sandbox.json(["known-handles", "--subject", "kid-ava", "--ledger", ledger, "--as-of", "seq:1"])
                .objects("handles")
            #expect(handles.map { "\($0.string("kind") ?? "") \($0.string("value") ?? "")" } == [
                "custom Zed", "custom alpha", "custom zulu", "custom \u{e9}mile",
                "emailAddress bob@example.com",
                "phoneNumber +15550100001", "phoneNumber 5550100002",
            ])
            #expect(try handles.allSatisfy { try $0.object("source").int("observation") == 1 })
        }
    }

    @Test("a subject with no events knows no handle")
    func unknownSubject() throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["known-handles", "--subject", "kid-zed", "--ledger", ledger])
            #expect(try result.objects("handles").isEmpty)
            #expect(result.string("subject") == "kid-zed")
        }
    }
}
