import Foundation
import Testing
@testable import PermissionLedger
@testable import permission_ledger
import PermissionModel

/// Values are data, never instructions to whatever shows them (docs/spec/CLI.md, "Common").
@Suite("output hygiene", .timeLimit(.minutes(10)))
struct OutputHygieneTests {
    // MARK: The shared escaping

    @Test("Cc, Cf, Zl and Zp characters are shown as \\u{XXXX}, uppercase hex, at least four digits",
          arguments: [
              ("\u{1B}[31mred\u{1B}]0;title\u{07}", "\\u{001B}[31mred\\u{001B}]0;title\\u{0007}"),
              ("csi\u{9B}2J", "csi\\u{009B}2J"), ("next\u{85}line", "next\\u{0085}line"), ("del\u{7F}", "del\\u{007F}"),
              ("a\nb\r\tc", "a\\u{000A}b\\u{000D}\\u{0009}c"), ("line\u{2028}para\u{2029}", "line\\u{2028}para\\u{2029}"),
              ("Sm\u{202E}ith", "Sm\\u{202E}ith"), ("zero\u{200B}width\u{FEFF}", "zero\\u{200B}width\\u{FEFF}"),
              ("tag\u{E0001}", "tag\\u{E0001}"), ("plain café, \\ and 🐉", "plain café, \\ and 🐉"),
              // A zero-width joiner inside an emoji sequence stays; between ASCII letters or at an end it is escaped.
              ("👨\u{200D}👩\u{200D}👧", "👨\u{200D}👩\u{200D}👧"), ("b\u{200D}ob", "b\\u{200D}ob"), ("🐉\u{200D}", "🐉\\u{200D}"),
          ])
    func escaping(_ value: String, _ shown: String) {
        #expect(displayed(value) == shown)
    }

    @Test("a list in one cell is unambiguous: '; ' between values, a ;, | or \\ inside one escaped with a backslash")
    func lists() {
        #expect(listCell(["a, b", "c; d", "e\\f", "g|h", "i"]) == #"a, b; c\; d; e\\f; g\|h; i"#)
        #expect(listCell(["a; b"]) != listCell(["a", "b"]))
    }

    @Test("the ledger's JSON escapes DEL, C1 controls (U+0085), U+001C-U+001E, U+2028 and U+2029, and reads back the same")
    func jsonEscapes() throws {
        let value = "a\u{85}b\u{2028}c\u{2029}d\u{1C}\u{1D}\u{1E}e\u{7F}\u{9B}f\u{A0}é\u{202E}\n"
        var writer = JSONWriter()
        writer.string(value)
        #expect(writer.text == #""a\u0085b\u2028c\u2029d\u001c\u001d\u001ee\u007f\u009bf"# + "\u{A0}é\u{202E}" + #"\n""#)
        #expect(!splitsLines(writer.text))
        let decoded = try JSONSerialization.jsonObject(with: Data("[\(writer.text)]".utf8)) as? [String]
        #expect(decoded == [value])
        // The tool's own JSON objects (verify's problem, backup's out) follow the same rules.
        var object = JSONObjectWriter()
        object.string("problem", value)
        #expect(object.text == #"{"problem":"# + writer.text + "}")
    }

    // MARK: Tables, CSV and JSON of a ledger holding hostile free text

    @Test("free text with LF, tab, U+2028, U+202E, U+200B and U+FEFF is escaped in tables: each row stays one line")
    func tables() throws {
        try withSandbox { sandbox in
            let ledger = try hostileLedger(sandbox)
            let question = try sandbox.run(["question", Hostile.question, "--ledger", ledger, "--format", "table"])
            #expect(question.status == 0, "\(question)")
            #expect(!holdsRawEscapable(lines: question.out), "\(question)")
            for shown in [#"Al\u{000A}ex"#, #"mid\u{2028}dle"#, #"Sm\u{202E}ith"#, #""tab\u{0009}here""#, #"Approve\u{200B}\u{FEFF}"#] {
                #expect(question.out.contains(shown), "\(shown) in \(question)")
            }
            // One line a handle, one a field: no value broke its row.
            #expect(question.outLines.filter { $0.hasPrefix("handle ") }.count == 5, "\(question)")
            #expect(question.outLines.contains { $0.hasPrefix("choice ") && $0.contains(#"Approve\u{200B}\u{FEFF} (approve, approval)"#) })

            let update = try sandbox.run(["question", Hostile.update, "--ledger", ledger, "--format", "table"])
            #expect(update.status == 0, "\(update)")
            #expect(!holdsRawEscapable(lines: update.out), "\(update)")
            #expect(update.outLines.contains { $0.hasPrefix("description ") && $0.hasSuffix(Hostile.descriptionShown) }, "\(update)")

            for command in [["questions"], ["history"], ["known-handles", "--subject", Hostile.subject], ["who-approved", "--handle", "a, b"]] {
                let run = try sandbox.run(command + ["--ledger", ledger, "--format", "table"])
                #expect(run.status == 0, "\(run)")
                #expect(!holdsRawEscapable(lines: run.out), "\(run)")
            }
            // history: one line an event.
            let history = try sandbox.run(["history", "--ledger", ledger, "--format", "table"])
            #expect(history.outLines.dropFirst().filter { $0.first?.isNumber == true }.count == Hostile.lines.count, "\(history)")
        }
    }

    @Test("CSV: the same values escaped, every record whole (RFC 4180), one record an event")
    func csv() throws {
        try withSandbox { sandbox in
            let ledger = try hostileLedger(sandbox)
            for command in [["question", Hostile.question], ["question", Hostile.update], ["questions"], ["history"],
                            ["known-handles", "--subject", Hostile.subject], ["who-approved", "--handle", "a, b"]] {
                let run = try sandbox.run(command + ["--ledger", ledger, "--format", "csv"])
                #expect(run.status == 0, "\(run)")
                #expect(!holdsRawEscapable(lines: run.out), "\(run)")
                let records = try #require(parseCSV(run.out), "\(run)")
                #expect(records.dropFirst().allSatisfy { $0.count == records[0].count }, "\(run)")
            }
            let update = try #require(parseCSV(try sandbox.run(["question", Hostile.update, "--ledger", ledger, "--format", "csv"]).out))
            let description = try #require(update[0].firstIndex(of: "description"))
            #expect(update[1][description] == Hostile.descriptionShown)
            let history = try #require(parseCSV(try sandbox.run(["history", "--ledger", ledger, "--format", "csv"]).out))
            #expect(history.count == Hostile.lines.count + 1)
        }
    }

    @Test("CSV: a subject or handle that begins with =, +, - or @ gets a ' before it; ids, times and plain numbers do not")
    func formulas() throws {
        try withSandbox { sandbox in
            let ledger = try hostileLedger(sandbox)
            let questions = try #require(parseCSV(try sandbox.run(["questions", "--ledger", ledger, "--format", "csv"]).out))
            let subject = try #require(questions[0].firstIndex(of: "subject")), handles = try #require(questions[0].firstIndex(of: "handles"))
            let formula = try #require(questions.first { $0[0] == Hostile.formulaQuestion }, "\(questions)")
            #expect(formula[subject] == "'" + Hostile.formulaSubject)
            #expect(formula[handles] == #"'+cmd\|' /C calc'!A0; +15550100101; @SUM(A1)"#)
            #expect(questions.dropFirst().allSatisfy { !$0[0].hasPrefix("'") && !$0[4].hasPrefix("'") }, "ids and times as they are")

            let known = try sandbox.run(["known-handles", "--subject", Hostile.formulaSubject, "--ledger", ledger, "--format", "csv"])
            let records = try #require(parseCSV(known.out), "\(known)")
            #expect(records.map { $0[1] } == ["value", "'+cmd|' /C calc'!A0", "'@SUM(A1)", "+15550100101"], "\(known)")

            let history = try #require(parseCSV(try sandbox.run(["history", "--ledger", ledger, "--format", "csv"]).out))
            #expect(history.filter { $0[3] == "'" + Hostile.formulaSubject }.count == 2, "\(history)")
        }
    }

    @Test("CSV: a question's handles are one unambiguous list (a, b and c; d stay two values)")
    func handleList() throws {
        try withSandbox { sandbox in
            let ledger = try hostileLedger(sandbox)
            let questions = try #require(parseCSV(try sandbox.run(["questions", "--ledger", ledger, "--format", "csv"]).out))
            let handles = try #require(questions[0].firstIndex(of: "handles"))
            let row = try #require(questions.first { $0[0] == Hostile.question })
            #expect(row[handles] == Hostile.email + #"; a, b; c\; d; e\\f; x\|y"#)
        }
    }

    @Test("export of free text holding U+2028 and U+2029 is one line an event for any reader, and imports back to the same ledger")
    func exportLines() throws {
        try withSandbox { sandbox in
            let ledger = try hostileLedger(sandbox)
            let exported = try sandbox.export(ledger)
            let text = String(decoding: exported, as: UTF8.self)
            #expect(!splitsLines(text.replacingOccurrences(of: "\n", with: "")))
            #expect(text.split(separator: "\n").count == Hostile.lines.count)
            #expect(text.contains(#"mid\u2028dle"#) && text.contains(#"\u2029end"#))

            let file = try sandbox.write(text, to: "exported.jsonl")
            let copy = try sandbox.ledger(importing: file, named: "copy")
            #expect(try sandbox.export(copy) == exported)
            let digests = try [ledger, copy].map { try sandbox.json(["digest", "--ledger", $0]).string("digest") }
            #expect(digests[0] != nil && digests[0] == digests[1])

            // A query's JSON keeps the exact value, on one line.
            let question = try sandbox.run(["question", Hostile.question, "--ledger", ledger, "--format", "json"])
            #expect(!splitsLines(question.out.replacingOccurrences(of: "\n", with: "")) && question.outLines.count == 1)
            let people = try question.json().object("question").objects("handles")
            #expect(people.first?.string("value") == Hostile.email)
        }
    }

    // MARK: Error lines

    @Test("an error line shows a file name's escape sequences and bidi controls as escapes")
    func fileName() throws {
        try withSandbox { sandbox in
            let name = "in\u{1B}]0;owned\u{07}put\u{202E}\nfake.jsonl"
            let run = try sandbox.run(["import", "--ledger", sandbox.ledger, sandbox.path(name)])
            #expect(run.status == 1, "\(run)")
            #expect(!holdsRawEscapable(lines: run.err), "\(run)")
            #expect(run.errorLines.count == 1 && run.err.contains(#"in\u{001B}]0;owned\u{0007}put\u{202E}\u{000A}fake.jsonl"#), "\(run)")
        }
    }

    @Test("an unknown argument or a bad PERMISSION_LEDGER_FORMAT is one escaped line, exit 2")
    func usage() throws {
        try withSandbox { sandbox in
            let option = try sandbox.run(["stats", "--bad\u{1B}[2J\u{202E}"])
            #expect(option.status == 2, "\(option)")
            #expect(option.errorLines.count == 1 && !holdsRawEscapable(lines: option.err), "\(option)")
            #expect(option.err.contains(#"\u{001B}[2J\u{202E}"#), "\(option)")

            let format = try sandbox.run(["stats", "--ledger", sandbox.ledger], environment: ["PERMISSION_LEDGER_FORMAT": "json\u{1B}[2J\u{202E}"])
            #expect(format.status == 2, "\(format)")
            #expect(format.errorLines.count == 1 && !holdsRawEscapable(lines: format.err), "\(format)")
        }
    }

    @Test("an input line whose field name holds a bidi control is reported by line, the control escaped")
    func inputError() throws {
        try withSandbox { sandbox in
            let line = #"{"type":"permission.changed","id":"p-1","subject":"kid-1","occurredAt":"2026-11-20T09:00:00Z","permission":"camera","state":"denied","x\u202Ey\u2028z":1}"#
            let file = try sandbox.write(line + "\n", to: "bidi.jsonl")
            let run = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(run.status == 1, "\(run)")
            #expect(run.errorLines.first?.hasPrefix(file + ":1: ") == true, "\(run)")
            #expect(!holdsRawEscapable(lines: run.err), "\(run)")
        }
    }
}

/// A ledger whose free text holds LF, tab, U+2028, U+2029, U+202E, U+200B and U+FEFF (all accepted in names,
/// titles and descriptions), with custom handles and a subject a spreadsheet would take for formulas.
enum Hostile {
    static let subject = "kid-hygiene"
    static let question = "6A3F1C2E-00EE-4000-8000-000000000001"
    static let formulaQuestion = "6A3F1C2E-00EE-4000-8000-000000000002"
    static let update = "6A3F1C2E-00EE-4000-8000-000000000003"
    static let formulaSubject = #"=HYPERLINK("http://evil/","x")"#
    /// 60 characters.
    static let email = "grandma.rose." + String(repeating: "w", count: 35) + "@example.com"
    static let descriptionShown = #"line1\u{000A}line2\u{2028}line3\u{202E}\u{2029}end"#

    static let lines: [String] = [
        #"{"type":"question.asked","id":"hyg-01","subject":"kid-hygiene","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z","question":{"id":"6A3F1C2E-00EE-4000-8000-000000000001","topic":{"communication":{"people":["#
            + #"{"handle":{"value":"\#(email)","kind":"emailAddress"},"name":{"givenName":"Al\nex","middleName":"mid\u2028dle","familyName":"Sm\u202eith","nickname":"tab\there"}},"#
            + #"{"handle":{"value":"a, b","kind":"custom"}},{"handle":{"value":"c; d","kind":"custom"}},{"handle":{"value":"e\\f","kind":"custom"}},{"handle":{"value":"x|y","kind":"custom"}}],"actions":["message"]}},"#
            + #""choices":[{"id":"approve","title":"Approve\u200b\ufeff","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}],"defaultChoice":"decline"}}"#,
        #"{"type":"question.answered","id":"hyg-02","subject":"kid-hygiene","occurredAt":"2026-11-20T09:05:00Z","recordedAt":"2026-11-20T09:05:01Z","questionId":"6A3F1C2E-00EE-4000-8000-000000000001","choiceId":"approve","via":"messages"}"#,
        #"{"type":"question.asked","id":"hyg-03","subject":"=HYPERLINK(\"http://evil/\",\"x\")","occurredAt":"2026-11-20T09:10:00Z","recordedAt":"2026-11-20T09:10:01Z","question":{"id":"6A3F1C2E-00EE-4000-8000-000000000002","topic":{"communication":{"people":["#
            + #"{"handle":{"value":"+cmd|' /C calc'!A0","kind":"custom"}},{"handle":{"value":"+15550100101","kind":"phoneNumber"}},{"handle":{"value":"@SUM(A1)","kind":"custom"}}],"actions":["message"]}}}}"#,
        #"{"type":"question.answered","id":"hyg-04","subject":"=HYPERLINK(\"http://evil/\",\"x\")","occurredAt":"2026-11-20T09:15:00Z","recordedAt":"2026-11-20T09:15:01Z","questionId":"6A3F1C2E-00EE-4000-8000-000000000002","choiceId":"approve","via":"messages"}"#,
        #"{"type":"question.asked","id":"hyg-05","subject":"kid-hygiene","occurredAt":"2026-11-20T09:20:00Z","recordedAt":"2026-11-20T09:20:01Z","question":{"id":"6A3F1C2E-00EE-4000-8000-000000000003","topic":{"significantAppUpdate":{"description":"line1\nline2\u2028line3\u202e\u2029end"}}}}"#,
    ]
}

/// Imports ``Hostile/lines`` into the sandbox's ledger.
func hostileLedger(_ sandbox: Sandbox) throws -> String {
    try sandbox.ledger(importing: try sandbox.write(Hostile.lines.joined(separator: "\n") + "\n", to: "hostile.jsonl"))
}

/// Whether the text, line ends (LF, CRLF) aside, holds a character that tables, CSV and error lines must show escaped.
func holdsRawEscapable(lines text: String) -> Bool {
    holdsRawEscapable(text.replacingOccurrences(of: "\r\n", with: "").replacingOccurrences(of: "\n", with: ""))
}

/// Whether the text holds a character tables, CSV and error lines must show escaped (Cc, Cf, Zl, Zp; a
/// zero-width joiner aside).
func holdsRawEscapable(_ text: String) -> Bool {
    text.unicodeScalars.contains { scalar in
        guard scalar != "\u{200D}" else { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}

/// Whether Python's `str.splitlines()` would split the text: LF, CR, VT, FF, U+001C-U+001E, U+0085, U+2028, U+2029.
func splitsLines(_ text: String) -> Bool {
    text.unicodeScalars.contains { [0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x85, 0x2028, 0x2029].contains($0.value) }
}
