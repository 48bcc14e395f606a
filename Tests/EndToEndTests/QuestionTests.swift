import Foundation
import Testing

@Suite("question", .timeLimit(.minutes(10)))
struct QuestionTests {
    static let approvalID = "6A3F1C2E-0001-4000-8000-000000000001"

    @Test("--format json holds every key of docs/spec/CLI.md with the fixture's values")
    func json() throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["question", Self.approvalID, "--ledger", ledger, "--as-of", "seq:2"])
            #expect(Set(result.keys) == ["asOf", "question"])

            let asOf = try result.object("asOf")
            #expect(asOf.int("seq") == 2)
            #expect(asOf.string("time") == "2026-11-20T09:05:02Z")

            let question = try result.object("question")
            let keys: Set = [
                "id", "subject", "topic", "handles", "description", "actions", "state", "late",
                "askedAt", "resolvedAt", "expiresAt", "choice", "via", "error", "events",
            ]
            #expect(keys.isSubset(of: question.keys), "missing: \(keys.subtracting(question.keys))")
            #expect(question.string("id") == Self.approvalID)
            #expect(question.string("subject") == "kid-ava")
            #expect(question.string("topic") == "communication")
            let handles = try question.objects("handles")
            #expect(handles.map { $0.string("value") } == ["dragonslayer42"])
            #expect(handles.map { $0.string("kind") } == ["custom"])
            #expect(question.isNull("description"))
            #expect(question["actions"] as? [String] == ["message", "audioCall"])
            #expect(question.string("state") == "approved")
            #expect(question.bool("late") == false)
            #expect(question.string("askedAt") == "2026-11-20T09:00:00Z")
            #expect(question.string("resolvedAt") == "2026-11-20T09:05:00Z")
            #expect(question.string("expiresAt") == "2026-11-21T09:00:00Z")
            let choice = try question.object("choice")
            #expect(choice.string("id") == "approve")
            #expect(choice.string("title") == "Approve")
            #expect(choice.string("answer") == "approval")
            #expect(question.string("via") == "messages", "an answer without via counts as messages")
            #expect(question.isNull("error"))

            let events = try question.objects("events")
            #expect(events.map { $0.int("seq") } == [1, 2])
            #expect(events.map { $0.string("type") } == ["question.asked", "question.answered"])
            #expect(events.map { $0.string("id") } == ["approval-01", "approval-02"])
            #expect(events.map { $0.string("occurredAt") } == ["2026-11-20T09:00:00Z", "2026-11-20T09:05:00Z"])
            #expect(events.map { $0.string("recordedAt") } == ["2026-11-20T09:00:01Z", "2026-11-20T09:05:02Z"])
        }
    }

    @Test("shows handles normalized, in the order of the question's people, and actions folded in docs/spec/EVENTS.md order")
    func normalizedHandles() throws {
        try withFixtureLedger("several-handles.jsonl") { sandbox, ledger in
            let question = try sandbox.json(["question", "6A3F1C2E-000A-4000-8000-000000000001", "--ledger", ledger, "--as-of", "seq:3"])
                .object("question")
            let handles = try question.objects("handles")
            #expect(handles.map { $0.string("value") } == ["+14155550132", "grandma.rose@example.com", "Skater_Girl.99"])
            #expect(handles.map { $0.string("kind") } == ["phoneNumber", "emailAddress", "custom"])
            #expect(question["actions"] as? [String] == ["message", "audioCall", "videoCall", "chat"])
            #expect(question.string("state") == "approved")
        }
    }

    @Test("an update question has its description, no handles and no actions")
    func updateQuestion() throws {
        try withFixtureLedger("significant-update.jsonl") { sandbox, ledger in
            let question = try sandbox.json(["question", "6A3F1C2E-000B-4000-8000-000000000001", "--ledger", ledger, "--as-of", "seq:3"])
                .object("question")
            #expect(question.string("topic") == "significantAppUpdate")
            #expect(question.string("description") == "Version 5.0 adds public multiplayer lobbies and voice chat with other players.")
            #expect(try question.objects("handles").isEmpty)
            #expect(question["actions"] as? [String] == [])
        }
    }

    @Test("a failed question has its error; one expired by the clock resolves at its expiresAt")
    func failedAndExpired() throws {
        try withSandbox { sandbox in
            let failed = try sandbox.ledger(importing: Fixture.path("ask-failed.jsonl"), named: "failed")
            let withMessage = try sandbox.json(["question", "6A3F1C2E-0004-4000-8000-000000000002", "--ledger", failed, "--as-of", "seq:12"])
                .object("question")
            #expect(withMessage.string("state") == "failed")
            #expect(withMessage.string("resolvedAt") == "2026-11-20T13:05:02Z")
            #expect(try withMessage.object("error").string("code") == "contactSyncNotSetup")
            #expect(withMessage.isNull("choice"))
            let without = try sandbox.json(["question", "6A3F1C2E-0004-4000-8000-000000000003", "--ledger", failed, "--as-of", "seq:12"])
                .object("question")
            #expect(try without.object("error").string("code") == "invalidQuestion")
            #expect(try without.object("error").isNull("message"))

            let clock = try sandbox.ledger(importing: Fixture.path("expiry-by-clock.jsonl"), named: "clock")
            let expired = try sandbox.json(["question", "6A3F1C2E-0006-4000-8000-000000000001", "--ledger", clock, "--as-of", "seq:5"])
                .object("question")
            #expect(expired.string("state") == "expired")
            #expect(expired.string("resolvedAt") == "2026-11-20T16:30:00Z")
            #expect(expired.bool("late") == false)
            let boundary = try sandbox.json(["question", "6A3F1C2E-0006-4000-8000-000000000003", "--ledger", clock, "--as-of", "seq:5"])
                .object("question")
            #expect(boundary.string("state") == "expired", "expiresAt equal to the clock has passed")
            #expect(boundary.string("resolvedAt") == "2026-11-20T16:45:01Z")
        }
    }

    @Test("--as-of seq:1 shows the question pending, with only its first event")
    func asOfSeq() throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["question", Self.approvalID, "--ledger", ledger, "--as-of", "seq:1"])
            #expect(try result.object("asOf").int("seq") == 1)
            #expect(try result.object("asOf").string("time") == "2026-11-20T09:00:01Z")
            let question = try result.object("question")
            #expect(question.string("state") == "pending")
            #expect(question.isNull("resolvedAt"))
            #expect(question.isNull("choice"))
            #expect(question.isNull("via"))
            #expect(try question.objects("events").count == 1)
        }
    }

    @Test("--as-of a time takes the events recorded by then and that time as the clock")
    func asOfTime() throws {
        try withFixtureLedger("late-answer.jsonl") { sandbox, ledger in
            // Events up to seq 5 are recorded by 14:45:00Z; Q2 (expiresAt 14:40Z) is then expired by the clock.
            let result = try sandbox.json(["question", "6A3F1C2E-0005-4000-8000-000000000002", "--ledger", ledger, "--as-of", "2026-11-20T14:45:00Z"])
            #expect(try result.object("asOf").int("seq") == 5)
            #expect(try result.object("asOf").string("time") == "2026-11-20T14:45:00Z")
            let question = try result.object("question")
            #expect(question.string("state") == "expired")
            #expect(question.string("resolvedAt") == "2026-11-20T14:40:00Z")

            // An offset is accepted and means the same instant.
            let offset = try sandbox.json(["question", "6A3F1C2E-0005-4000-8000-000000000002", "--ledger", ledger, "--as-of", "2026-11-20T15:45:00+01:00"])
            #expect(try offset.object("asOf").int("seq") == 5)

            let late = try sandbox.json(["question", "6A3F1C2E-0005-4000-8000-000000000002", "--ledger", ledger, "--as-of", "seq:7"])
                .object("question")
            #expect(late.string("state") == "denied")
            #expect(late.bool("late") == true)
            #expect(late.string("resolvedAt") == "2026-11-20T14:35:00Z")
        }
    }

    @Test("a question not in the ledger is an error (exit 1), also when it was asked after the as-of point")
    func unknownQuestion() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let unknown = try sandbox.run(["question", "6A3F1C2E-0002-4000-8000-0000000000FF", "--ledger", ledger])
            #expect(unknown.status == 1, "\(unknown)")
            #expect(unknown.stdout.isEmpty)
            #expect(unknown.errorLines.count == 1, "\(unknown)")

            // Question 3 is asked at seq 5.
            let notYet = try sandbox.run(["question", "6A3F1C2E-0002-4000-8000-000000000003", "--ledger", ledger, "--as-of", "seq:4"])
            #expect(notYet.status == 1, "\(notYet)")
        }
    }

    @Test("a lowercase id finds the question, written uppercase")
    func lowercaseID() throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let question = try sandbox.json(["question", Self.approvalID.lowercased(), "--ledger", ledger]).object("question")
            #expect(question.string("id") == Self.approvalID)
        }
    }

    @Test("a malformed question id is wrong usage (exit 2)", arguments: ["not-a-uuid", "6A3F1C2E-0001-4000-8000-00000000001", ""])
    func malformedID(_ id: String) throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["question", id, "--ledger", ledger])
            #expect(result.status == 2, "\(result)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test("a --as-of that does not parse is wrong usage (exit 2), told in one plain line",
          arguments: ["yesterday", "2026-11-20T09:00:00", "2026-11-20", "seq:", "seq:abc", "seq:-1", "2026-13-40T09:00:00Z"])
    func badAsOf(_ when: String) throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["question", Self.approvalID, "--ledger", ledger, "--as-of", when])
            #expect(result.status == 2, "\(result)")
            #expect(result.stdout.isEmpty)
            #expect(result.errorLines.count == 1, "one line: \(result)")
            let line = result.errorLines.first ?? ""
            #expect(line.contains("--as-of") || line.contains(when), "says what was wrong: \(result)")
            #expect(!line.contains("Usage:") && !line.contains("Error:"), "plain words, not a parser dump: \(result)")
        }
    }
}

@Suite("questions", .timeLimit(.minutes(10)))
struct QuestionsTests {
    @Test("--subject and --state filter the list (family-day.jsonl, as of seq:1200)")
    func filters() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let all = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:1200"])
            #expect(try all.object("asOf").int("seq") == 1200)
            #expect(try all.object("asOf").string("time") == "2026-11-20T19:30:14.750000Z")
            let questions = try all.objects("questions")
            #expect(questions.count == 375)
            #expect(questions.allSatisfy { $0["events"] == nil }, "listings carry no events")

            // From the fixture's header: kid-ben has approved 24 + approved late 8, pending 12, expired 7 + 4 by the clock.
            let approved = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:1200", "--subject", "kid-ben", "--state", "approved"])
                .objects("questions")
            #expect(approved.count == 32)
            #expect(approved.allSatisfy { $0.string("subject") == "kid-ben" && $0.string("state") == "approved" })
            #expect(approved.filter { $0.bool("late") == true }.count == 8)

            let pending = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:1200", "--subject", "kid-ben", "--state", "pending"])
                .objects("questions")
            #expect(pending.count == 12)
            let expired = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:1200", "--subject", "kid-ben", "--state", "expired"])
                .objects("questions")
            #expect(expired.count == 11)

            let ava = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:1200", "--subject", "kid-ava"]).objects("questions")
            #expect(ava.count == 77)
            #expect(ava.allSatisfy { $0.string("subject") == "kid-ava" })

            // Every question of the full list is ordered by askedAt, then id.
            let order = questions.map { (microseconds($0.string("askedAt") ?? "") ?? .min, $0.string("id") ?? "") }
            #expect(zip(order, order.dropFirst()).allSatisfy { $0 < $1 }, "ordered by askedAt, then id")

            let nobody = try sandbox.json(["questions", "--ledger", ledger, "--subject", "kid-nobody"]).objects("questions")
            #expect(nobody.isEmpty)
        }
    }

    /// Three questions: the first asked (by seq) has the latest askedAt; the other two share an askedAt and
    /// are recorded in the reverse order of their ids.
    static let orderingEvents = """
        {"type":"question.asked","id":"order-01","subject":"kid-ava","occurredAt":"2026-11-20T10:00:00.500Z","recordedAt":"2026-11-20T10:00:01Z","question":{"id":"6A3F1C2E-00EE-4000-8000-000000000003","topic":{"significantAppUpdate":{"description":"Third by askedAt"}}}}
        {"type":"question.asked","id":"order-02","subject":"kid-ava","occurredAt":"2026-11-20T10:00:00Z","recordedAt":"2026-11-20T10:00:02Z","question":{"id":"6A3F1C2E-00EE-4000-8000-000000000002","topic":{"significantAppUpdate":{"description":"Tied, larger id"}}}}
        {"type":"question.asked","id":"order-03","subject":"kid-ava","occurredAt":"2026-11-20T10:00:00Z","recordedAt":"2026-11-20T10:00:03Z","question":{"id":"6A3F1C2E-00EE-4000-8000-000000000001","topic":{"significantAppUpdate":{"description":"Tied, smaller id"}}}}

        """

    @Test("orders by askedAt (when asked, not when recorded), then by id")
    func ordering() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: try sandbox.write(Self.orderingEvents, to: "order.jsonl"))
            let ids = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:3"]).objects("questions").map { $0.string("id") }
            #expect(ids == [
                "6A3F1C2E-00EE-4000-8000-000000000001",
                "6A3F1C2E-00EE-4000-8000-000000000002",
                "6A3F1C2E-00EE-4000-8000-000000000003",
            ])
        }
    }

    @Test("--format csv is RFC 4180 with a header row and one row a question, in the same order as JSON")
    func csv() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("late-answer.jsonl"), Fixture.path("several-handles.jsonl"))
            let result = try sandbox.run(["questions", "--ledger", ledger, "--as-of", "seq:10", "--format", "csv"])
            #expect(result.status == 0, "\(result)")
            let records = try #require(parseCSV(result.out), "not RFC 4180 CSV (CRLF after every record): \(result)")
            let header = try #require(records.first)
            #expect(header.contains("id") && header.contains("state"), "\(header)")
            #expect(records.allSatisfy { $0.count == header.count }, "every record has the header's fields: \(records)")

            let ids = try sandbox.json(["questions", "--ledger", ledger, "--as-of", "seq:10"]).objects("questions").map { $0.string("id") ?? "" }
            #expect(ids.count == 4)
            let idColumn = try #require(header.firstIndex(of: "id"))
            #expect(records.dropFirst().map { $0[idColumn] } == ids)
            let stateColumn = try #require(header.firstIndex(of: "state"))
            #expect(records.dropFirst().map { $0[stateColumn] }.contains { $0.hasPrefix("expired") })
        }
    }

    @Test("question --format csv is one RFC 4180 table: a record per event, each with the question's fields")
    func questionCSV() throws {
        try withFixtureLedger("late-answer.jsonl") { sandbox, ledger in
            let id = try #require(try sandbox.json(["questions", "--ledger", ledger]).objects("questions").first?.string("id"))
            let json = try sandbox.json(["question", id, "--ledger", ledger]).object("question")
            let result = try sandbox.run(["question", id, "--ledger", ledger, "--format", "csv"])
            #expect(result.status == 0, "\(result)")
            #expect(result.out.hasSuffix("\r\n") && !result.out.hasSuffix("\r\n\r\n") && !result.out.hasSuffix("\n\n"), "\(result)")
            let records = try #require(parseCSV(result.out), "not RFC 4180 CSV: \(result)")
            let header = try #require(records.first)
            #expect(records.allSatisfy { $0.count == header.count }, "every record has the header's fields: \(records)")
            let rows = records.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
            let events = try json.objects("events")
            #expect(rows.map { $0["seq"] } == events.map { $0.int("seq").map(String.init) })
            #expect(rows.map { $0["type"] } == events.map { $0.string("type") })
            #expect(rows.map { $0["eventId"] } == events.map { $0.string("id") })
            for row in rows {
                #expect(row["id"] == id)
                #expect(row["state"] == json.string("state"))
                #expect(row["late"] == json.bool("late").map(String.init))
                #expect(row["askedAt"] == json.string("askedAt"))
                #expect(row["choice"] == (try json.object("choice").string("id")))
            }
        }
    }

    @Test("an unknown --state is wrong usage (exit 2)")
    func unknownState() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["questions", "--ledger", ledger, "--state", "approve"])
            #expect(result.status == 2, "\(result)")
        }
    }
}
