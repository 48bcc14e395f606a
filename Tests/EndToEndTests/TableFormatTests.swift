import Foundation
import Testing

/// `--format`: table by default, on a terminal or not; `PERMISSION_LEDGER_FORMAT` sets the default; tables
/// never cut a value short (docs/spec/CLI.md, "Common").
@Suite("output format", .timeLimit(.minutes(10)))
struct TableFormatTests {
    static let fixture = "handles-observed.jsonl"

    /// Every command that takes --format, with its arguments on handles-observed.jsonl.
    static let commands: [[String]] = [
        ["digest"], ["verify"], ["replay", Fixture.path(fixture)], ["question", "6A3F1C2E-000D-4000-8000-000000000001"],
        ["questions"], ["known-handles", "--subject", "kid-ben"], ["permissions", "--subject", "kid-ben"], ["history"],
        ["diff", "--from", "seq:1", "--to", "seq:4"], ["stats"], ["who-approved", "--handle", "robo_rex"],
    ]

    @Test("piped, digest prints the bare digest, which replay --expect-digest takes as it is")
    func bareDigest() throws {
        try withFixtureLedger(Self.fixture) { sandbox, ledger in
            let digest = try sandbox.run(["digest", "--ledger", ledger])
            #expect(digest.status == 0, "\(digest)")
            let text = digest.out.trimmingCharacters(in: .newlines)
            #expect(isLowercaseHex(text) && digest.outLines.count == 1, "\(digest)")
            let replay = try sandbox.run(["replay", Fixture.path(Self.fixture), "--expect-digest", text])
            #expect(replay.status == 0, "\(replay)")
        }
    }

    @Test("every command with --format: a table by default, PERMISSION_LEDGER_FORMAT sets the default, --format wins",
          arguments: commands)
    func defaults(_ command: [String]) throws {
        try withFixtureLedger(Self.fixture) { sandbox, ledger in
            let arguments = command + (command[0] == "replay" ? [] : ["--ledger", ledger])
            let table = try sandbox.run(arguments)
            #expect(table.status == 0 && !isJSON(table.out) && parseCSV(table.out) == nil, "a table: \(table)")
            let asTable = try sandbox.run(arguments + ["--format", "table"])
            #expect(normalized(asTable.out) == normalized(table.out), "the same table: \(asTable)")

            let json = try sandbox.run(arguments, environment: ["PERMISSION_LEDGER_FORMAT": "json"])
            #expect(json.status == 0 && isJSON(json.out), "JSON: \(json)")
            let csv = try sandbox.run(arguments, environment: ["PERMISSION_LEDGER_FORMAT": "csv"])
            #expect(csv.status == 0 && parseCSV(csv.out).map { $0.count >= 1 } == true && !isJSON(csv.out), "CSV: \(csv)")
            let empty = try sandbox.run(arguments, environment: ["PERMISSION_LEDGER_FORMAT": ""])
            #expect(normalized(empty.out) == normalized(table.out), "an empty variable is no variable: \(empty)")

            let wins = try sandbox.run(arguments + ["--format", "table"], environment: ["PERMISSION_LEDGER_FORMAT": "json"])
            #expect(wins.status == 0 && !isJSON(wins.out), "--format wins: \(wins)")
            let winsJSON = try sandbox.run(arguments + ["--format", "json"], environment: ["PERMISSION_LEDGER_FORMAT": "csv"])
            #expect(winsJSON.status == 0 && isJSON(winsJSON.out), "--format wins: \(winsJSON)")
        }
    }

    @Test("a PERMISSION_LEDGER_FORMAT that is not a format is wrong usage: exit 2, one line naming the variable")
    func badVariable() throws {
        try withFixtureLedger(Self.fixture) { sandbox, ledger in
            for command in Self.commands {
                let arguments = command + (command[0] == "replay" ? [] : ["--ledger", ledger])
                let run = try sandbox.run(arguments, environment: ["PERMISSION_LEDGER_FORMAT": "xml"])
                #expect(run.status == 2, "\(run)")
                #expect(run.stdout.isEmpty, "\(run)")
                #expect(run.errorLines.count == 1 && run.err.contains("PERMISSION_LEDGER_FORMAT"), "\(run)")
            }
            // --format wins: the variable is not consulted.
            let given = try sandbox.run(["digest", "--ledger", ledger, "--format", "json"], environment: ["PERMISSION_LEDGER_FORMAT": "xml"])
            #expect(given.status == 0 && isJSON(given.out), "\(given)")
        }
    }

    @Test("a 60-character email handle and a whole question id appear whole in tables and CSV")
    func wholeValues() throws {
        try withSandbox { sandbox in
            let email = "grandma.rose." + String(repeating: "w", count: 35) + "@example.com"
            #expect(email.count == 60)
            let id = "6A3F1C2E-00FF-4000-8000-000000000001"
            let lines = [
                #"{"type":"question.asked","id":"long-01","subject":"kid-long","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z","question":{"id":"\#(id)","topic":{"communication":{"people":[{"handle":{"value":"\#(email)","kind":"emailAddress"},"name":{"givenName":"Rose","familyName":"Whitaker-Lakeside-Montgomery"}}],"actions":["message"]}},"choices":[{"id":"approve","title":"Approve this contact for messages and calls, every day","answer":"approval"},{"id":"decline","title":"Decline","answer":"denial"}],"defaultChoice":"decline"}}"#,
                #"{"type":"question.answered","id":"long-02","subject":"kid-long","occurredAt":"2026-11-20T09:05:00Z","recordedAt":"2026-11-20T09:05:01Z","questionId":"\#(id)","choiceId":"approve","via":"messages"}"#,
            ]
            let ledger = try sandbox.ledger(importing: try sandbox.write(lines.joined(separator: "\n") + "\n", to: "long.jsonl"))
            let commands = [["known-handles", "--subject", "kid-long"], ["questions"], ["question", id], ["history"], ["who-approved", "--handle", email]]
            for command in commands {
                for format in ["table", "csv"] {
                    let run = try sandbox.run(command + ["--ledger", ledger, "--format", format])
                    #expect(run.status == 0, "\(run)")
                    #expect(run.out.contains(email), "\(command[0]) --format \(format) shows the handle whole: \(run)")
                    #expect(run.out.contains(id), "\(command[0]) --format \(format) shows the question id whole: \(run)")
                    #expect(!run.out.contains("…"), "\(command[0]) --format \(format) cuts nothing: \(run)")
                }
            }
            // The table's columns stay aligned around the long value: the header's columns start where the row's do.
            let table = try sandbox.run(["known-handles", "--subject", "kid-long", "--ledger", ledger, "--format", "table"])
            let header = try #require(table.outLines.first { $0.hasPrefix("kind ") })
            let row = try #require(table.outLines.first { $0.hasPrefix("email ") })
            #expect(header.range(of: "since")?.lowerBound.utf16Offset(in: header) == row.range(of: "2026-11-20")?.lowerBound.utf16Offset(in: row))
        }
    }
}

/// Whether the text is one JSON object.
private func isJSON(_ text: String) -> Bool {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) is [String: Any]
}

/// The text without the wall-clock times that differ between two runs (`as of seq N, TIME`).
private func normalized(_ text: String) -> String {
    text.replacingOccurrences(of: #"20\d\d-\d\d-\d\d[T ][0-9:.]+Z?"#, with: "TIME", options: .regularExpression)
}
