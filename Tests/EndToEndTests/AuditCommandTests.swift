import Foundation
import Testing

/// Checks that `history --format json` printed exactly `expected`: the same seqs, and each event byte for byte
/// as `export` writes it, inside `{"events":[…]}`.
private func expectHistory(
    _ run: ToolRun, equals expected: [ExportedLine], _ what: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(run.status == 0, "\(what): \(run)", sourceLocation: sourceLocation)
    guard run.status == 0 else { return }
    guard let object = try? run.json(), let events = object["events"] as? [[String: Any]] else {
        Issue.record("\(what): not {\"events\":[…]}: \(run)", sourceLocation: sourceLocation)
        return
    }
    #expect(Set(object.keys) == ["events"], "\(what): \(object.keys.sorted())", sourceLocation: sourceLocation)
    let seqs = events.map { $0.int("seq") ?? -1 }
    let expectedSeqs = expected.map(\.seq)
    if seqs != expectedSeqs {
        let missing = Set(expectedSeqs).subtracting(seqs).sorted()
        let extra = Set(seqs).subtracting(expectedSeqs).sorted()
        let order = missing.isEmpty && extra.isEmpty ? ", out of seq order" : ""
        let message = "\(what): \(seqs.count) events, expected \(expectedSeqs.count); missing seqs \(Array(missing.prefix(20))), unexpected seqs \(Array(extra.prefix(20)))\(order)"
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
        return
    }
    let exact = "{\"events\":[" + expected.map(\.text).joined(separator: ",") + "]}"
    if run.out.trimmingCharacters(in: .newlines) != exact {
        let differing = zip(events, expected).first { canonicalJSON($0.0) != canonicalJSON($0.1.object) }
        let detail = differing.map { "; seq \($0.1.seq): \(canonicalJSON($0.0)) vs export \($0.1.text)" } ?? " (key order or spacing differs)"
        Issue.record(Comment(rawValue: "\(what): the events are not written as export writes them\(detail)"), sourceLocation: sourceLocation)
    }
}

@Suite("history", .timeLimit(.minutes(10)))
struct HistoryTests {
    @Test("a history of a type without personal fields needs no key, by subject or not, in every format; one with them does")
    func aTypeWithoutPersonalFieldsNeedsNoKey() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let keyFile = sandbox.path("elsewhere.key")
            let queries = [["--type", "permission.changed"], ["--type", "permission.changed", "--subject", "kid-ben"],
                           ["--type", "question.answered", "--subject", "kid-ava", "--to", "2026-11-20T15:00:00Z"]]
            let formats = ["table", "csv", "json"]
            var withKey: [String] = []
            for query in queries { for format in formats {
                withKey.append(try sandbox.run(["history", "--ledger", ledger, "--format", format] + query).out)
            } }
            try FileManager.default.moveItem(atPath: ledger + "/ledger.key", toPath: keyFile)
            var index = 0
            for query in queries { for format in formats {
                let run = try sandbox.run(["history", "--ledger", ledger, "--format", format] + query)
                #expect(run.status == 0 && run.out == withKey[index] && run.out.count > 200, "\(query) \(format): \(run)")
                index += 1
            } }
            let asked = try sandbox.run(["history", "--ledger", ledger, "--type", "question.asked", "--subject", "kid-ben"])
            #expect(asked.status == 3 && asked.errorLines.count == 1 && asked.out.isEmpty, "\(asked)")
            let given = try sandbox.run(["history", "--ledger", ledger, "--type", "question.asked", "--key-file", keyFile])
            #expect(given.status == 0, "\(given)")
        }
    }

    @Test("--format json gives {\"events\":[…]}, each event exactly as export writes it, in seq order")
    func jsonIsExport() throws {
        try withSandbox { sandbox in
            for name in ["time-limited.jsonl", "in-person.jsonl", "several-handles.jsonl"] {
                let ledger = try sandbox.ledger(importing: Fixture.path(name), named: name)
                let exported = try sandbox.exportedLines(ledger)
                expectHistory(try sandbox.run(["history", "--ledger", ledger, "--format", "json"]), equals: exported, name)
            }
            // An empty selection is still an object with an empty list.
            let ledger = try sandbox.ledger(importing: Fixture.path("approval-messages.jsonl"), named: "approval")
            let none = try sandbox.run(["history", "--ledger", ledger, "--subject", "kid-nobody", "--format", "json"])
            #expect(none.status == 0, "\(none)")
            #expect(none.out.trimmingCharacters(in: .newlines) == #"{"events":[]}"#, "\(none)")
        }
    }

    @Test("--subject and --type select exactly that subject's or that type's events (family-day.jsonl)")
    func subjectAndType() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let exported = try sandbox.exportedLines(ledger)
            try #require(exported.count == 1200)
            for subject in ["kid-ava", "kid-dev"] {
                let run = try sandbox.run(["history", "--ledger", ledger, "--subject", subject, "--format", "json"])
                expectHistory(run, equals: exported.filter { $0.subject == subject }, "--subject \(subject)")
            }
            // A subject that is a prefix of another is not that other.
            expectHistory(try sandbox.run(["history", "--ledger", ledger, "--subject", "kid-a", "--format", "json"]), equals: [], "--subject kid-a")

            let types = ["question.asked", "question.sendCanceled", "question.askFailed", "question.answered",
                         "question.expired", "handles.observed", "permission.changed"]
            #expect(Set(exported.map(\.type)) == Set(types))
            for type in types {
                let run = try sandbox.run(["history", "--ledger", ledger, "--type", type, "--format", "json"])
                expectHistory(run, equals: exported.filter { $0.type == type }, "--type \(type)")
            }
        }
    }

    @Test("--question takes the whole id or its abbreviation FIRST8…LAST12, and lists that question's events")
    func question() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let exported = try sandbox.exportedLines(ledger)
            // Questions with the most events (asked, expired, answered late...), and one with a single event.
            let byQuestion = Dictionary(grouping: exported.filter { $0.questionID != nil }, by: { $0.questionID! })
            var ids = byQuestion.keys.sorted { (byQuestion[$0]!.count, $1) > (byQuestion[$1]!.count, $0) }.prefix(3).map { $0 }
            ids.append(try #require(byQuestion.keys.sorted().first { byQuestion[$0]!.count == 1 }))
            for id in ids {
                let expected = exported.filter { $0.questionID == id }
                let abbreviated = String(id.prefix(8)) + "…" + String(id.suffix(12))
                let dotted = String(id.prefix(8)) + "..." + String(id.suffix(12))
                for reference in [id, abbreviated, dotted, id.lowercased()] {
                    let run = try sandbox.run(["history", "--ledger", ledger, "--question", reference, "--format", "json"])
                    expectHistory(run, equals: expected, "--question \(reference)")
                }
            }

            // A history table names the question by its whole id; the abbreviation still resolves to it.
            let table = try sandbox.run(["history", "--ledger", ledger, "--question", ids[0], "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.out.contains(ids[0]), "the table names the question as \(ids[0]): \(table)")
            let shown = String(ids[0].prefix(8)) + "…" + String(ids[0].suffix(12))

            // Combined with --type, the question's answer only.
            let answered = exported.filter { $0.questionID == ids[0] && $0.type == "question.answered" }
            let run = try sandbox.run(["history", "--ledger", ledger, "--question", shown, "--type", "question.answered", "--format", "json"])
            expectHistory(run, equals: answered, "--question --type question.answered")
        }
    }

    @Test("--from and --to with seq:N select that range of the log, both ends included")
    func seqRange() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let exported = try sandbox.exportedLines(ledger)
            func history(_ options: [String]) throws -> ToolRun {
                try sandbox.run(["history", "--ledger", ledger, "--format", "json"] + options)
            }
            expectHistory(try history(["--from", "seq:400", "--to", "seq:450"]), equals: exported.filter { (400...450).contains($0.seq) }, "seq:400 to seq:450")
            expectHistory(try history(["--from", "seq:1199"]), equals: exported.filter { $0.seq >= 1199 }, "from seq:1199")
            expectHistory(try history(["--to", "seq:3"]), equals: exported.filter { $0.seq <= 3 }, "to seq:3")
            expectHistory(try history(["--from", "seq:777", "--to", "seq:777"]), equals: exported.filter { $0.seq == 777 }, "seq:777 alone")
            expectHistory(try history(["--from", "seq:1201"]), equals: [], "after the head")
            expectHistory(try history(["--from", "seq:500", "--to", "seq:499"]), equals: [], "an empty range")
        }
    }

    @Test("--from and --to with RFC 3339 times bound recordedAt, both included, with any offset")
    func timeRange() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let exported = try sandbox.exportedLines(ledger)
            let first = exported[399], last = exported[449]
            // The bounds are recordedAt times of single events, so that one microsecond either side excludes them.
            try #require(exported.filter { $0.recordedMicros == first.recordedMicros }.count == 1)
            try #require(exported.filter { $0.recordedMicros == last.recordedMicros }.count == 1)
            func within(_ low: Int64, _ high: Int64) -> [ExportedLine] {
                exported.filter { $0.recordedMicros >= low && $0.recordedMicros <= high }
            }
            func history(_ options: [String]) throws -> ToolRun {
                try sandbox.run(["history", "--ledger", ledger, "--format", "json"] + options)
            }

            let (low, high) = (first.recordedMicros, last.recordedMicros)
            let inclusive = within(low, high)
            #expect(inclusive.first?.seq == first.seq && inclusive.last?.seq == last.seq)
            // The same instants written in UTC, at +01:00 and at -05:00.
            expectHistory(try history(["--from", first.recordedAt, "--to", last.recordedAt]), equals: inclusive, "UTC bounds as export writes them")
            expectHistory(try history(["--from", rfc3339(micros: low, offsetMinutes: 60), "--to", rfc3339(micros: high, offsetMinutes: -300)]),
                          equals: inclusive, "+01:00 and -05:00 bounds")
            expectHistory(try history(["--from", rfc3339(micros: low + 1, offsetMinutes: 330), "--to", rfc3339(micros: high - 1)]),
                          equals: within(low + 1, high - 1), "a microsecond inside each bound")
            #expect(!within(low + 1, high - 1).contains { $0.seq == first.seq || $0.seq == last.seq })
            expectHistory(try history(["--from", rfc3339(micros: low - 1), "--to", rfc3339(micros: high + 1, offsetMinutes: 60)]),
                          equals: within(low - 1, high + 1), "a microsecond outside each bound")

            // Only one bound; and a range of the whole day written as midnight to midnight.
            expectHistory(try history(["--from", "2026-11-20T19:00:00+00:00"]),
                          equals: exported.filter { $0.recordedMicros >= microseconds("2026-11-20T19:00:00Z")! }, "from 19:00")
            expectHistory(try history(["--to", "2026-11-20T09:00:00+01:00"]),
                          equals: exported.filter { $0.recordedMicros <= microseconds("2026-11-20T08:00:00Z")! }, "to 08:00Z written at +01:00")
            expectHistory(try history(["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]), equals: exported, "the whole day")
            expectHistory(try history(["--from", "2026-11-21T00:00:00Z"]), equals: [], "after the last event")
        }
    }

    @Test("filters combine: subject, type, and a range given as a seq and a time")
    func combined() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let exported = try sandbox.exportedLines(ledger)
            let to = "2026-11-20T16:00:00+02:00"  // 14:00:00Z
            let toMicros = try #require(microseconds("2026-11-20T14:00:00Z"))
            let run = try sandbox.run(["history", "--ledger", ledger, "--subject", "kid-cleo", "--type", "question.answered",
                                       "--from", "seq:200", "--to", to, "--format", "json"])
            let expected = exported.filter {
                $0.subject == "kid-cleo" && $0.type == "question.answered" && $0.seq >= 200 && $0.recordedMicros <= toMicros
            }
            #expect(expected.count > 5, "the fixture has such events")
            expectHistory(run, equals: expected, "kid-cleo answers from seq:200 to 14:00Z")

            // A question of kid-cleo's asked with another subject selects nothing.
            let question = try #require(expected.first?.questionID)
            let mismatch = try sandbox.run(["history", "--ledger", ledger, "--question", question, "--subject", "kid-ava", "--format", "json"])
            expectHistory(mismatch, equals: [], "kid-cleo's question with --subject kid-ava")
            let matching = try sandbox.run(["history", "--ledger", ledger, "--question", question, "--subject", "kid-cleo",
                                            "--type", "permission.changed", "--format", "json"])
            expectHistory(matching, equals: [], "a question has no permission.changed events")
        }
    }

    @Test("a bad --type or a bad WHEN is wrong usage: exit 2, one line on standard error, nothing on standard output", arguments: [
        ["--type", "question.approved"],
        ["--type", "Question.Asked"],
        ["--type", ""],
        ["--from", "yesterday"],
        ["--from", "seq:ten"],
        ["--to", "seq:-1"],
        ["--to", "seq:"],
        ["--to", "2026-11-20T10:00:00"],
        ["--from", "2026-11-20 10:00:00Z"],
        ["--from", "2026-13-01T00:00:00Z"],
        ["--question", "not-a-question"],
    ])
    func badArguments(_ options: [String]) throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["history", "--ledger", ledger, "--format", "json"] + options)
            #expect(result.status == 2, "\(result)")
            #expect(!result.crashed)
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.errorLines.count == 1, "one line: \(result)")
        }
    }

    @Test("--format csv has a header row, then one record per event with its seq, recordedAt and hash")
    func csv() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let expected = try sandbox.exportedLines(ledger).filter { $0.subject == "kid-ben" }
            let run = try sandbox.run(["history", "--ledger", ledger, "--subject", "kid-ben", "--format", "csv"])
            #expect(run.status == 0, "\(run)")
            let records = try #require(parseCSV(run.out), "not RFC 4180 CSV: \(run)")
            let header = try #require(records.first)
            for column in ["seq", "type", "subject", "recordedAt", "hash"] {
                #expect(header.contains(column), "header \(header) names \(column)")
            }
            let rows = Array(records.dropFirst())
            #expect(rows.count == expected.count)
            #expect(rows.allSatisfy { $0.count == header.count }, "every record has every column")
            func column(_ name: String) -> [String] {
                guard let i = header.firstIndex(of: name) else { return [] }
                return rows.map { $0[i] }
            }
            #expect(column("seq") == expected.map { String($0.seq) })
            #expect(column("type") == expected.map(\.type))
            #expect(column("subject") == expected.map(\.subject))
            #expect(column("recordedAt") == expected.map(\.recordedAt), "times kept whole, as export writes them")
            #expect(column("hash") == expected.map { $0.object.string("hash") ?? "" })
        }
    }

    @Test("--format table lists every selected event by seq, no value cut short")
    func table() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let exported = try sandbox.exportedLines(ledger)
            let cases: [([String], (ExportedLine) -> Bool)] = [
                ([], { _ in true }),
                (["--subject", "kid-ava"], { $0.subject == "kid-ava" }),
                (["--type", "handles.observed", "--from", "seq:900"], { $0.type == "handles.observed" && $0.seq >= 900 }),
            ]
            for (options, selected) in cases {
                let run = try sandbox.run(["history", "--ledger", ledger, "--format", "table"] + options)
                #expect(run.status == 0, "\(run)")
                let cut = linesCutShort(run)
                #expect(cut.isEmpty, "\(options): \(cut.count) lines with a value cut short, such as\n\(cut.first ?? "")")
                let expected = exported.filter(selected)
                let rowSeqs = run.outLines.dropFirst().compactMap { line in line.split(separator: " ").first.flatMap { Int($0) } }
                #expect(rowSeqs == expected.map(\.seq), "\(options): one row per event, in seq order")
                #expect(run.out.contains("\(expected.count) events"), "\(options): says how many: \(run.outLines.first ?? "")")
            }
        }
    }
}

@Suite("diff", .timeLimit(.minutes(10)))
struct DiffTests {
    @Test("an approval between seq:1 and seq:2: the question pending → approved and the handle added (approval-messages.jsonl)")
    func approval() throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let diff = try sandbox.json(["diff", "--ledger", ledger, "--from", "seq:1", "--to", "seq:2"])
            #expect(Set(diff.keys) == ["from", "to", "questions", "handles", "permissions"])
            #expect(canonicalJSON(try diff.object("from")) == #"{"seq":1,"time":"2026-11-20T09:00:01Z"}"#)
            #expect(canonicalJSON(try diff.object("to")) == #"{"seq":2,"time":"2026-11-20T09:05:02Z"}"#)

            let questions = try diff.objects("questions")
            #expect(questions.count == 1)
            let question = try #require(questions.first)
            #expect(Set(["id", "from", "to"]).isSubset(of: question.keys), "\(question)")
            #expect(question.string("id") == "6A3F1C2E-0001-4000-8000-000000000001")
            #expect(question.string("from") == "pending")
            #expect(question.string("to") == "approved")

            let handles = try diff.object("handles")
            #expect(Set(handles.keys) == ["added", "removed"])
            let added = try handles.objects("added")
            #expect(try handles.objects("removed").isEmpty)
            #expect(added.count == 1)
            let handle = try #require(added.first)
            #expect(handle.string("subject") == "kid-ava", "without --subject, each handle names its subject: \(handle)")
            #expect(handle.string("value") == "dragonslayer42")
            #expect(handle.string("kind") == "custom")
            #expect(handle.string("since") == "2026-11-20T09:05:00Z")
            #expect(handle.isNull("until"))
            #expect(try handle.object("source").string("question") == "6A3F1C2E-0001-4000-8000-000000000001")
            #expect(try diff.objects("permissions").isEmpty)

            // With --subject, the same change without `subject` on the handle.
            let only = try sandbox.json(["diff", "--ledger", ledger, "--from", "seq:1", "--to", "seq:2", "--subject", "kid-ava"])
            let onlyAdded = try only.object("handles").objects("added")
            #expect(onlyAdded.count == 1)
            #expect(onlyAdded.first?["subject"] == nil, "with --subject, handles carry no subject: \(onlyAdded)")
            var withoutSubject = handle
            withoutSubject["subject"] = nil
            #expect(onlyAdded.first.map(canonicalJSON) == canonicalJSON(withoutSubject))
            #expect(try only.objects("questions").map { $0.string("id") } == ["6A3F1C2E-0001-4000-8000-000000000001"])

            // Another subject saw no change.
            let other = try sandbox.json(["diff", "--ledger", ledger, "--from", "seq:1", "--to", "seq:2", "--subject", "kid-ben"])
            #expect(try other.objects("questions").isEmpty)
            #expect(try other.object("handles").objects("added").isEmpty)

            // No change between a point and itself.
            let same = try sandbox.json(["diff", "--ledger", ledger, "--from", "seq:2", "--to", "2026-11-20T12:00:00Z"])
            #expect(try same.objects("questions").isEmpty)
            #expect(try same.object("handles").objects("added").isEmpty && same.object("handles").objects("removed").isEmpty)
        }
    }

    @Test("a one-hour grant that lapses between the two points is a removed handle (time-limited.jsonl)")
    func lapse() throws {
        try withFixtureLedger("time-limited.jsonl") { sandbox, ledger in
            func diff(_ from: String, _ to: String, _ more: [String] = []) throws -> [String: Any] {
                try sandbox.json(["diff", "--ledger", ledger, "--from", from, "--to", to] + more)
            }

            // seq:6 (clock 10:10:02Z) to 11:30Z: no new event, but the grant lapsed at 11:00.
            let lapsed = try diff("seq:6", "2026-11-20T11:30:00Z")
            #expect(try lapsed.object("to").int("seq") == 6)
            #expect(try lapsed.object("to").string("time") == "2026-11-20T11:30:00Z")
            let removed = try lapsed.object("handles").objects("removed")
            #expect(removed.map { $0.string("value") } == ["pixelpal"], "\(removed)")
            #expect(removed.first?.string("subject") == "kid-ben")
            #expect(removed.first?.string("until") == "2026-11-20T11:00:00Z")
            #expect(try removed.first?.object("source").string("question") == "6A3F1C2E-0009-4000-8000-000000000001")
            #expect(try lapsed.object("handles").objects("added").isEmpty)
            #expect(try lapsed.objects("questions").isEmpty, "the questions stay approved")
            #expect(try lapsed.objects("permissions").isEmpty)

            // The boundary: known at 10:59:59, gone at 11:00:00 (written at +01:00).
            let boundary = try diff("2026-11-20T10:59:59Z", "2026-11-20T12:00:00+01:00")
            #expect(try boundary.object("handles").objects("removed").map { $0.string("value") } == ["pixelpal"])
            let before = try diff("2026-11-20T10:30:00Z", "2026-11-20T10:59:59Z")
            #expect(try before.object("handles").objects("removed").isEmpty, "not yet lapsed")

            // To seq:7, the permission change too; with --subject, no subject keys.
            let all = try diff("seq:6", "seq:7")
            #expect(try all.object("handles").objects("removed").map { $0.string("value") } == ["pixelpal"])
            let permissions = try all.objects("permissions")
            #expect(permissions.map(canonicalJSON) == [#"{"from":null,"permission":"notifications","subject":"kid-ben","to":"authorized"}"#])
            let ben = try diff("seq:6", "seq:7", ["--subject", "kid-ben"])
            #expect(try ben.objects("permissions").map(canonicalJSON) == [#"{"from":null,"permission":"notifications","to":"authorized"}"#])
            #expect(try ben.object("handles").objects("removed").allSatisfy { $0["subject"] == nil })
            #expect(try ben.object("handles").objects("removed").count == 1)
        }
    }

    @Test("matches questions, known-handles and permissions at both points, and --subject is the unfiltered diff's share (family-day.jsonl)")
    func familyDay() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let (from, to) = ("seq:600", "seq:1200")
            let diff = try sandbox.json(["diff", "--ledger", ledger, "--from", from, "--to", to])
            #expect(try diff.object("from").int("seq") == 600)
            #expect(try diff.object("from").string("time") == "2026-11-20T13:06:47.500000Z")
            #expect(try diff.object("to").int("seq") == 1200)

            // Questions: every question whose state differs between the two listings, and no other.
            func states(_ when: String) throws -> [String: String] {
                let list = try sandbox.json(["questions", "--ledger", ledger, "--as-of", when]).objects("questions")
                return Dictionary(uniqueKeysWithValues: list.map { ($0.string("id") ?? "", $0.string("state") ?? "") })
            }
            let (old, new) = (try states(from), try states(to))
            let expectedQuestions = Set(new.compactMap { id, state in old[id] == state ? nil : "\(id) \(old[id] ?? "null") → \(state)" })
            let questions = try diff.objects("questions")
            let shown = questions.map { "\($0.string("id") ?? "") \($0.string("from") ?? "null") → \($0.string("to") ?? "")" }
            #expect(Set(shown) == expectedQuestions)
            #expect(shown.count == expectedQuestions.count, "each change once")
            #expect(questions.count > 100, "half a day of changes")

            let added = try diff.object("handles").objects("added")
            let removed = try diff.object("handles").objects("removed")
            let permissions = try diff.objects("permissions")
            for subject in ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"] {
                func known(_ when: String) throws -> Set<String> {
                    let handles = try sandbox.json(["known-handles", "--ledger", ledger, "--subject", subject, "--as-of", when]).objects("handles")
                    return Set(handles.map { "\($0.string("kind") ?? "") \($0.string("value") ?? "")" })
                }
                let (before, after) = (try known(from), try known(to))
                func key(_ h: [String: Any]) -> String { "\(h.string("kind") ?? "") \(h.string("value") ?? "")" }
                #expect(Set(added.filter { $0.string("subject") == subject }.map(key)) == after.subtracting(before), "\(subject) added")
                #expect(Set(removed.filter { $0.string("subject") == subject }.map(key)) == before.subtracting(after), "\(subject) removed")

                func permissionStates(_ when: String) throws -> [String: String] {
                    let list = try sandbox.json(["permissions", "--ledger", ledger, "--subject", subject, "--as-of", when]).objects("permissions")
                    return Dictionary(uniqueKeysWithValues: list.map { ($0.string("permission") ?? "", $0.string("state") ?? "") })
                }
                let (p0, p1) = (try permissionStates(from), try permissionStates(to))
                let expectedPermissions = Set(Set(p0.keys).union(p1.keys).compactMap { p in
                    p0[p] == p1[p] ? nil : "\(p) \(p0[p] ?? "null") → \(p1[p] ?? "null")"
                })
                let shownPermissions = permissions.filter { $0.string("subject") == subject }.map {
                    "\($0.string("permission") ?? "") \($0.string("from") ?? "null") → \($0.string("to") ?? "null")"
                }
                #expect(Set(shownPermissions) == expectedPermissions, "\(subject) permissions")
                #expect(shownPermissions.count == expectedPermissions.count)
            }
            #expect(!added.isEmpty && !removed.isEmpty && !permissions.isEmpty)

            // --subject kid-cleo: exactly kid-cleo's share of the unfiltered diff, without subject keys on handles and permissions.
            let cleo = try sandbox.json(["diff", "--ledger", ledger, "--from", from, "--to", to, "--subject", "kid-cleo"])
            func stripped(_ list: [[String: Any]]) -> [String] {
                list.filter { $0.string("subject") == "kid-cleo" }.map { var o = $0; o["subject"] = nil; return canonicalJSON(o) }
            }
            for list in [try cleo.object("handles").objects("added"), try cleo.object("handles").objects("removed"), try cleo.objects("permissions")] {
                #expect(list.allSatisfy { $0["subject"] == nil }, "no subject keys with --subject: \(list.first ?? [:])")
            }
            #expect(try cleo.object("handles").objects("added").map(canonicalJSON) == stripped(added))
            #expect(try cleo.object("handles").objects("removed").map(canonicalJSON) == stripped(removed))
            #expect(try cleo.objects("permissions").map(canonicalJSON) == stripped(permissions))
            let cleoQuestions = Set(try cleo.objects("questions").compactMap { $0.string("id") })
            #expect(cleoQuestions == Set(questions.filter { $0.string("subject") == "kid-cleo" }.compactMap { $0.string("id") }))
            #expect(!cleoQuestions.isEmpty)
        }
    }

    @Test("--from and --to are required and must parse: exit 2", arguments: [
        ["--to", "seq:2"],
        ["--from", "seq:1"],
        [],
        ["--from", "seq:1", "--to", "later"],
        ["--from", "2026-11-20", "--to", "seq:2"],
    ])
    func usage(_ options: [String]) throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["diff", "--ledger", ledger, "--format", "json"] + options)
            #expect(result.status == 2, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.errorLines.count == 1, "\(result)")
        }
    }

    @Test("--format table names both points and each change; --format csv has a header row")
    func tableAndCSV() throws {
        try withFixtureLedger("time-limited.jsonl") { sandbox, ledger in
            let table = try sandbox.run(["diff", "--ledger", ledger, "--from", "seq:6", "--to", "seq:7", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.out.contains("seq 6") && table.out.contains("seq 7"), "\(table)")
            #expect(table.out.contains("pixelpal") && table.out.contains("removed"), "\(table)")
            #expect(table.out.contains("notifications") && table.out.contains("authorized"), "\(table)")

            let csv = try sandbox.run(["diff", "--ledger", ledger, "--from", "seq:6", "--to", "seq:7", "--format", "csv"])
            #expect(csv.status == 0, "\(csv)")
            let records = try #require(parseCSV(csv.out), "\(csv)")
            #expect(records.count == 3, "header, the removed handle, the permission: \(records)")
            #expect(records.dropFirst().allSatisfy { $0.count == records[0].count })
            #expect(records.dropFirst().contains { $0.contains { $0.contains("pixelpal") } })
        }
    }

    @Test("--format table cuts no value short (family-day.jsonl, the whole day)")
    func tableWidth() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let run = try sandbox.run(["diff", "--ledger", ledger, "--from", "seq:1", "--to", "seq:1200", "--format", "table"])
            #expect(run.status == 0, "\(run)")
            let cut = linesCutShort(run)
            #expect(cut.isEmpty, "\(cut.count) lines with a value cut short, such as\n\(cut.first ?? "")")
        }
    }
}

/// The counts of a family-day header section's "Questions by state" lines, summed over subjects,
/// with "approved, late" counted as approved, "denied, late" as denied, "expired (by the clock)" as expired.
private func headerQuestionStates(_ text: String, section: String) throws -> [String: Int] {
    let lines = text.split(separator: "\n").map(String.init)
    let start = try #require(lines.firstIndex { $0.hasPrefix("# \(section)") }, "no \(section) section")
    let questions = try #require(lines[start...].firstIndex { $0.hasPrefix("# Questions by state") })
    var counts: [String: Int] = [:]
    let pattern = /(approved, late|denied, late|expired \(by the clock\)|approved|denied|canceled|expired|failed|pending) (\d+)/
    for line in lines[(questions + 1)...] {
        guard line.hasPrefix("#   kid-") else { break }
        for match in line.matches(of: pattern) {
            let state = String(match.1).split(separator: ",").first.map(String.init)!.split(separator: " ").first.map(String.init)!
            counts[state, default: 0] += Int(match.2)!
        }
    }
    return counts
}

@Suite("stats", .timeLimit(.minutes(10)))
struct StatsTests {
    @Test("a key file's path is shown with its control and format characters escaped, as every stored value is")
    func keyFilePathIsEscaped() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("decline.jsonl"))
            let keyFile = sandbox.path("k\u{1B}[31mred\u{202E}")
            try FileManager.default.moveItem(atPath: ledger + "/ledger.key", toPath: keyFile)
            for given in [["--key-file", keyFile], []] {
                let result = try sandbox.run(["stats", "--ledger", ledger] + given, environment: given.isEmpty ? ["PERMISSION_LEDGER_KEY_FILE": keyFile] : [:])
                #expect(result.status == 0, "\(result)")
                #expect(!result.out.contains("\u{1B}") && !result.out.contains("\u{202E}"), "\(result.out)")
                #expect(result.out.contains("key file ") && result.out.contains("red"), "\(result.out)")
            }
        }
    }

    @Test("without the key, stats counts as with it (questions expired by the clock too) and says the key was not found, in every format")
    func withoutTheKey() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let keyFile = sandbox.path("elsewhere.key")
            for point in ["seq:600", "seq:1200", "2026-11-20T13:00:00Z"] {
                let withKey = try sandbox.json(["stats", "--ledger", ledger, "--as-of", point])
                if point == "seq:600" { try FileManager.default.moveItem(atPath: ledger + "/ledger.key", toPath: keyFile) }
                let withoutKey = try sandbox.json(["stats", "--ledger", ledger, "--as-of", point])
                for key in ["events", "subjects", "questions"] { #expect(withoutKey.int(key) == withKey.int(key), "\(point) \(key)") }
                for key in ["eventsByType", "questionsByState"] {
                    #expect(canonicalJSON(try withoutKey.object(key)) == canonicalJSON(try withKey.object(key)), "\(point) \(key)")
                }
                #expect(withoutKey.string("keyFile") == ledger + "/ledger.key (not found)")
            }
            let midway = try sandbox.json(["stats", "--ledger", ledger, "--as-of", "seq:600", "--key-file", keyFile])
            #expect(try midway.object("questionsByState").int("pending") ?? 0 > 0)
            let table = try sandbox.run(["stats", "--ledger", ledger])
            #expect(table.status == 0 && table.out.contains("(not found)"), "\(table)")
            let csv = try sandbox.run(["stats", "--ledger", ledger, "--format", "csv"])
            #expect(csv.status == 0, "\(csv)")
            let rows = try #require(parseCSV(csv.out))
            #expect(rows.contains(["keyFile", ledger + "/ledger.key (not found)"]), "\(csv)")
            #expect(rows.contains(["migratedFromSeq", ""]) && rows.contains(["migratedFromHash", ""]), "\(csv)")
            let given = try sandbox.run(["stats", "--ledger", ledger, "--format", "csv", "--key-file", keyFile])
            #expect(try #require(parseCSV(given.out)).contains(["keyFile", keyFile]), "\(given)")

            // Questions expired by the clock alone, with no event about them: counted as expired without the key too.
            let expiring = try sandbox.ledger(importing: Fixture.path("expiry-by-clock.jsonl"), named: "expiring")
            let states = try sandbox.json(["stats", "--ledger", expiring, "--as-of", "seq:5"]).object("questionsByState")
            #expect(states.int("expired") == 2 && states.int("pending") == 1, "\(states)")
            try FileManager.default.removeItem(atPath: expiring + "/ledger.key")
            let keyless = try sandbox.json(["stats", "--ledger", expiring, "--as-of", "seq:5"]).object("questionsByState")
            #expect(canonicalJSON(keyless) == canonicalJSON(states))
        }
    }

    @Test("JSON counts match the fixture's header: events by type, subjects, questions by state (family-day.jsonl)")
    func familyDay() throws {
        try withSandbox { sandbox in
            let text = try Fixture.text("family-day.jsonl")
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let stats = try sandbox.json(["stats", "--ledger", ledger, "--as-of", "seq:1200"])

            // "# Events: 1200 (handles.observed 202, permission.changed 231, ...)."
            let eventsHeader = try #require(Fixture.header("Events", in: text))
            let total = try #require(Int(eventsHeader.prefix { $0.isNumber }))
            var byType: [String: Int] = [:]
            for match in eventsHeader.matches(of: /([a-zA-Z]+\.[a-zA-Z]+) (\d+)/) { byType[String(match.1)] = Int(match.2)! }
            #expect(total == 1200 && byType.count == 7)

            #expect(stats.int("events") == total)
            let eventsByType = try stats.object("eventsByType")
            // Every type is counted, those the fixture has none of (an erasure) as 0.
            #expect(eventsByType.mapValues { ($0 as? NSNumber)?.intValue ?? -1 } == byType.merging(["subject.erased": 0]) { old, _ in old })
            #expect(eventsByType.values.compactMap { ($0 as? NSNumber)?.intValue }.reduce(0, +) == 1200)
            #expect(stats.int("subjects") == 4)

            let expectedStates = try headerQuestionStates(text, section: "Final state")
            #expect(expectedStates.values.reduce(0, +) == 375)
            let questionsByState = try stats.object("questionsByState").mapValues { ($0 as? NSNumber)?.intValue ?? -1 }
            #expect(questionsByState.filter { $0.value != 0 } == expectedStates, "header: \(expectedStates)")
            #expect(stats.int("questions") == 375)

            // The point, the log's head and the data file.
            #expect(canonicalJSON(try stats.object("asOf")) == #"{"seq":1200,"time":"2026-11-20T19:30:14.750000Z"}"#)
            let head = try stats.object("head")
            #expect(head.int("seq") == 1200)
            #expect(head.string("recordedAt") == "2026-11-20T19:30:14.750000Z")
            #expect(head.string("hash") == (try sandbox.json(["verify", "--ledger", ledger]).string("head")))
            let size = try FileManager.default.attributesOfItem(atPath: ledger + "/data.mdb")[.size] as? NSNumber
            #expect(stats.int("fileBytes") == size?.intValue)
        }
    }

    @Test("--as-of seq:N counts the first N events and the questions' states then (family-day.jsonl midway)")
    func asOfSeq() throws {
        try withSandbox { sandbox in
            let text = try Fixture.text("family-day.jsonl")
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let exported = try sandbox.exportedLines(ledger)
            let stats = try sandbox.json(["stats", "--ledger", ledger, "--as-of", "seq:600"])
            #expect(canonicalJSON(try stats.object("asOf")) == #"{"seq":600,"time":"2026-11-20T13:06:47.500000Z"}"#)
            #expect(stats.int("events") == 600)
            let expectedTypes = Dictionary(grouping: exported.prefix(600), by: \.type).mapValues(\.count)
            let byType = try stats.object("eventsByType").mapValues { ($0 as? NSNumber)?.intValue ?? -1 }
            #expect(byType.filter { $0.value != 0 } == expectedTypes)
            let expectedStates = try headerQuestionStates(text, section: "Midway")
            let byState = try stats.object("questionsByState").mapValues { ($0 as? NSNumber)?.intValue ?? -1 }
            #expect(byState.filter { $0.value != 0 } == expectedStates, "header: \(expectedStates)")
            #expect(stats.int("questions") == exported.prefix(600).filter { $0.type == "question.asked" }.count)

            // The first event alone: one subject, one pending question.
            let first = try sandbox.json(["stats", "--ledger", ledger, "--as-of", "seq:1"])
            #expect(first.int("events") == 1)
            #expect(first.int("subjects") == 1)
            #expect(try first.object("questionsByState").int("pending") == 1)

            // A time: the events recorded by then.
            let noon = try sandbox.json(["stats", "--ledger", ledger, "--as-of", "2026-11-20T13:00:00+01:00"])
            let noonMicros = try #require(microseconds("2026-11-20T12:00:00Z"))
            #expect(noon.int("events") == exported.filter { $0.recordedMicros <= noonMicros }.count)
        }
    }

    @Test("--format table shows the counts within 80 columns; a bad --as-of is exit 2")
    func table() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let run = try sandbox.run(["stats", "--ledger", ledger, "--as-of", "seq:1200", "--format", "table"])
            #expect(run.status == 0, "\(run)")
            #expect(linesWiderThan80(run).isEmpty, "\(run)")
            // The same counts as the JSON.
            let json = try sandbox.json(["stats", "--ledger", ledger, "--as-of", "seq:1200"])
            var expected: [(String, Int)] = [("events", json.int("events") ?? -1), ("subjects", json.int("subjects") ?? -1),
                                             ("questions", json.int("questions") ?? -1)]
            for key in ["eventsByType", "questionsByState"] {
                expected += try json.object(key).map { ($0.key, ($0.value as? NSNumber)?.intValue ?? -1) }
            }
            #expect(expected.count == 3 + 8 + 6)
            let rows = run.outLines.map { $0.split(separator: " ").map(String.init) }
            for (name, count) in expected {
                #expect(rows.contains { $0 == [name, String(count)] }, "a row \(name) \(count) in\n\(run.out)")
            }
            let head = try #require(try sandbox.json(["verify", "--ledger", ledger]).string("head"))
            #expect(run.out.contains(head), "the head hash: \(run)")

            let csv = try sandbox.run(["stats", "--ledger", ledger, "--as-of", "seq:1200", "--format", "csv"])
            #expect(csv.status == 0, "\(csv)")
            #expect(parseCSV(csv.out)?.first?.isEmpty == false, "a header row: \(csv)")

            for bad in ["seq:x", "noon", "2026-11-20T12:00"] {
                let result = try sandbox.run(["stats", "--ledger", ledger, "--as-of", bad])
                #expect(result.status == 2, "\(result)")
                #expect(result.stdout.isEmpty)
            }
        }
    }
}

@Suite("who-approved", .timeLimit(.minutes(10)))
struct WhoApprovedTests {
    @Test("an approval revoked by handles.observed: the approval, then the observation that ended it (handles-observed.jsonl)")
    func revokedByObservation() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let result = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "robo_rex"])
            #expect(try result.object("asOf").int("seq") == 4)
            // Not a phone number or an email address: only the custom kind is searched.
            #expect(try result.objects("handles").map(canonicalJSON) == [#"{"kind":"custom","value":"robo_rex"}"#])

            let records = try result.objects("records")
            try #require(records.count == 2, "\(records)")
            let (approval, observation) = (records[0], records[1])
            #expect(approval.string("subject") == "kid-ben")
            #expect(canonicalJSON(try approval.object("handle")) == #"{"kind":"custom","value":"robo_rex"}"#)
            #expect(approval.bool("known") == true)
            #expect(approval.int("seq") == 2)
            #expect(approval.string("since") == "2026-11-20T10:05:00Z")
            #expect(approval.isNull("until"))
            #expect(try approval.object("source").string("question") == "6A3F1C2E-000D-4000-8000-000000000001")
            let question = try approval.object("question")
            #expect(question.string("id") == "6A3F1C2E-000D-4000-8000-000000000001")
            #expect(try question.object("choice").string("id") == "approve")
            #expect(try question.object("choice").string("answer") == "approval")
            #expect(question.string("via") == "messages")
            #expect(question.bool("late") == false)
            let ended = try approval.object("ended")
            #expect(ended.string("by") == "observation")
            #expect(ended.string("at") == "2026-11-20T10:30:00Z")
            #expect(ended.int("seq") == 3)
            #expect(ended.bool("knownAfter") == false, "revoked")

            #expect(observation.string("subject") == "kid-ben")
            #expect(observation.bool("known") == false)
            #expect(observation.int("seq") == 3)
            #expect(observation.string("since") == "2026-11-20T10:30:00Z")
            #expect(try observation.object("source").int("observation") == 3)
            #expect(observation.isNull("question"))
            #expect(observation.isNull("ended"), "still not known")
        }
    }

    @Test("--as-of before the revocation shows the approval still in force")
    func beforeRevocation() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            for when in ["seq:2", "2026-11-20T10:29:59Z", "2026-11-20T11:30:00+01:00"] {
                let result = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "robo_rex", "--as-of", when])
                let records = try result.objects("records")
                #expect(records.count == 1, "\(when): \(records)")
                #expect(records.first?.bool("known") == true)
                #expect(records.first?.isNull("ended") == true, "\(when): still in force")
            }
            let table = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", "robo_rex", "--as-of", "seq:2", "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(!table.out.contains("REVOKED"), "\(table)")
            #expect(table.out.contains("kid-ben"), "\(table)")
        }
    }

    @Test("without --kind, the kinds the value is valid for: an email address, a phone number in any spelling")
    func kindInference() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in

            let email = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "unknown.caller@example.com"])
            let emailKinds = try email.objects("handles").compactMap { $0.string("kind") }
            #expect(emailKinds.contains("emailAddress"), "\(emailKinds)")
            #expect(!emailKinds.contains("phoneNumber"))
            let emailRecords = try email.objects("records")
            #expect(emailRecords.count == 1, "\(emailRecords)")
            #expect(try emailRecords.first?.object("handle").string("kind") == "emailAddress")
            #expect(emailRecords.first?.bool("known") == false, "checked and not known")
            #expect(try emailRecords.first?.object("source").int("observation") == 4)
            // An email address in other case is the same address (a custom handle would be case-sensitive).
            let shouted = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "Unknown.Caller@EXAMPLE.com"])
            #expect(try shouted.objects("records").map(canonicalJSON) == emailRecords.map(canonicalJSON))

            // The approved phone, written another way: normalized, found with its approval.
            let phone = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "(555) 010-4477"])
            #expect(try phone.objects("handles").contains { $0.string("kind") == "phoneNumber" && $0.string("value") == "5550104477" })
            let phoneRecords = try phone.objects("records")
            #expect(phoneRecords.count == 1, "\(phoneRecords)")
            #expect(try phoneRecords.first?.object("source").string("question") == "6A3F1C2E-000D-4000-8000-000000000001")
            #expect(phoneRecords.first?.isNull("ended") == true, "not checked by the observation: still approved")

            // With --kind, only that kind.
            let custom = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "unknown.caller@example.com", "--kind", "custom"])
            #expect(try custom.objects("handles").map { $0.string("kind") } == ["custom"])
            #expect(try custom.objects("records").isEmpty)
        }
    }

    @Test("a value that is not valid for --kind, or an unknown kind, is wrong usage: exit 2", arguments: [
        ["--handle", "robo_rex", "--kind", "phoneNumber"],
        ["--handle", "robo_rex", "--kind", "emailAddress"],
        ["--handle", "robo_rex", "--kind", "fax"],
        ["--handle", ""],
        ["--kind", "custom"],
        ["--handle", "robo_rex", "--as-of", "seq:abc"],
        ["--handle", "+1 555 010 4477\u{200B}"],
    ])
    func usage(_ options: [String]) throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["who-approved", "--ledger", ledger, "--format", "json"] + options)
            #expect(result.status == 2, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(result.errorLines.count == 1, "\(result)")
            // A handle is a personal value: the error does not repeat it (docs/spec/PRIVACY.md).
            if let index = options.firstIndex(of: "--handle"), !options[index + 1].isEmpty {
                #expect(!result.err.contains(options[index + 1].prefix(8)), "\(result)")
            }
        }
    }

    @Test("a handle never seen: no records, exit 0")
    func neverSeen() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", "never_seen_42", "--format", "json"])
            #expect(result.status == 0, "\(result)")
            #expect(try result.json().objects("records").isEmpty)
            let table = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", "never_seen_42", "--format", "table"])
            #expect(table.status == 0, "\(table)")
        }
    }

    @Test("--format table names the subject and says REVOKED")
    func table() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let run = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", "robo_rex", "--format", "table"])
            #expect(run.status == 0, "\(run)")
            #expect(run.out.contains("kid-ben"), "\(run)")
            #expect(run.out.contains("REVOKED"), "\(run)")
            #expect(run.out.contains("approved by question 6A3F1C2E-000D-4000-8000-000000000001 (Approve)"), "the question, whole: \(run)")
        }
    }

    @Test("a one-hour grant ends by lapse at its until, with no event")
    func lapse() throws {
        try withFixtureLedger("time-limited.jsonl") { sandbox, ledger in
            let lapsed = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "pixelpal", "--as-of", "seq:7"]).objects("records")
            #expect(lapsed.count == 1, "\(lapsed)")
            #expect(lapsed.first?.string("until") == "2026-11-20T11:00:00Z")
            #expect(try lapsed.first?.object("question").object("choice").string("id") == "approve-1h")
            let ended = try #require(lapsed.first?["ended"] as? [String: Any], "\(lapsed)")
            #expect(canonicalJSON(ended) == #"{"at":"2026-11-20T11:00:00Z","by":"lapse","knownAfter":false,"seq":null}"#)

            let granted = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", "pixelpal", "--as-of", "seq:6"]).objects("records")
            #expect(granted.first?.isNull("ended") == true, "in force at seq:6 (clock 10:10:02)")
        }
    }

    @Test("agrees with known-handles: the subjects with a record in force are those that know the handle (family-day.jsonl)")
    func familyDay() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let subjects = ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"]
            var known: [String: Set<String>] = [:]
            for subject in subjects {
                let handles = try sandbox.json(["known-handles", "--ledger", ledger, "--subject", subject, "--as-of", "seq:1200"]).objects("handles")
                known[subject] = Set(handles.map { "\($0.string("kind") ?? "") \($0.string("value") ?? "")" })
            }
            for (value, kind) in [("+15550100102", "phoneNumber"), ("grandpa.joe@example.com", "emailAddress"), ("pixelpal", "custom"),
                                  ("+15550100121", "phoneNumber"), ("Skater_Girl.99", "custom")] {
                let result = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", value, "--kind", kind, "--as-of", "seq:1200"])
                let time = try #require(try result.object("asOf").string("time").flatMap(microseconds))
                let records = try result.objects("records")
                let inForce = Set(records.filter {
                    $0.bool("known") == true && $0.isNull("ended") && ($0.string("until").flatMap(microseconds).map { $0 > time } ?? true)
                }.compactMap { $0.string("subject") })
                let expected = Set(subjects.filter { known[$0]!.contains("\(kind) \(value)") })
                #expect(inForce == expected, "\(value): in force for \(inForce.sorted()), known-handles says \(expected.sorted())")
                // Each subject's records are in seq order, each ended by the next one.
                for subject in Set(records.compactMap { $0.string("subject") }) {
                    let mine = records.filter { $0.string("subject") == subject }
                    #expect(mine.map { $0.int("seq") ?? 0 } == mine.map { $0.int("seq") ?? 0 }.sorted(), "\(value) \(subject)")
                    for (record, next) in zip(mine, mine.dropFirst()) {
                        let ended = record["ended"] as? [String: Any]
                        #expect(ended != nil, "\(value) \(subject): seq \(record.int("seq") ?? 0) is followed by seq \(next.int("seq") ?? 0), so it ended")
                        if let ended, ended.string("by") != "lapse" {
                            #expect(ended.int("seq") == next.int("seq"))
                            #expect(ended.bool("knownAfter") == next.bool("known"))
                        }
                    }
                }
                // --subject keeps only that subject's records.
                if let subject = expected.sorted().first {
                    let only = try sandbox.json(["who-approved", "--ledger", ledger, "--handle", value, "--kind", kind,
                                                 "--subject", subject, "--as-of", "seq:1200"]).objects("records")
                    #expect(only.map(canonicalJSON) == records.filter { $0.string("subject") == subject }.map(canonicalJSON))
                }
            }
        }
    }

    @Test("--format table cuts no value short (family-day.jsonl)")
    func tableWidth() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            for handle in ["+15550100102", "grandpa.joe@example.com", "Skater_Girl.99"] {
                let run = try sandbox.run(["who-approved", "--ledger", ledger, "--handle", handle, "--as-of", "seq:1200", "--format", "table"])
                #expect(run.status == 0, "\(run)")
                let cut = linesCutShort(run)
                #expect(cut.isEmpty, "\(handle): \(cut.count) lines with a value cut short, such as\n\(cut.first ?? "")")
            }
        }
    }
}
