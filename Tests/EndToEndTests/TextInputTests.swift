import Foundation
import Testing

/// docs/spec/EVENTS.md "Text" through `import`: identifiers hold no control, format or separator character,
/// free text no control character but tab and line feed; the rejection names the line, the field and the code
/// point, and repeats no personal value (docs/spec/CLI.md "Common").
@Suite("text input", .timeLimit(.minutes(10)))
struct TextInputTests {
    static func asked(id: String, subject: String = "kid-1", question: Int, handle: String, kind: String, givenName: String) -> String {
        #"{"type":"question.asked","id":"\#(id)","subject":"\#(subject)","occurredAt":"2026-11-20T09:00:00Z","recordedAt":"2026-11-20T09:00:01Z","question":{"id":"6A3F1C2E-0000-4000-8000-00000000000\#(question)","topic":{"communication":{"people":[{"handle":{"value":"\#(handle)","kind":"\#(kind)"},"name":{"givenName":"\#(givenName)"}}]}}}}"#
    }

    @Test("a name with a tab, a line feed and a zero-width joiner is imported and exported as given")
    func freeTextIsKept() throws {
        try withSandbox { sandbox in
            let file = try sandbox.write(
                Self.asked(id: "ev-1", question: 1, handle: "orbit", kind: "custom", givenName: #"Al\tex\nSmith \u200d"#) + "\n", to: "ok.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(result.status == 0, "\(result)")
            let export = String(decoding: try sandbox.export(sandbox.ledger), as: UTF8.self)
            let line = try #require(export.split(separator: "\n").first)
            let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let question = try #require(event["question"] as? [String: Any])
            let topic = try #require((question["topic"] as? [String: Any])?["communication"] as? [String: Any])
            let person = try #require((topic["people"] as? [[String: Any]])?.first)
            #expect((person["name"] as? [String: Any])?["givenName"] as? String == "Al\tex\nSmith \u{200D}")
        }
    }

    @Test("a subject with a zero-width space is rejected at its line, with the field and the code point, and nothing is written")
    func identifierRejected() throws {
        try withSandbox { sandbox in
            let file = try sandbox.write(
                Self.asked(id: "ev-1", question: 1, handle: "orbit", kind: "custom", givenName: "Alex") + "\n"
                    + Self.asked(id: "ev-2", subject: "kid\u{200B}2", question: 2, handle: "comet", kind: "custom", givenName: "Sam") + "\n",
                to: "zero-width.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines == [
                "\(file):2: question.asked: subject: holds U+200B (a format character); identifiers may not hold control, format or separator characters",
                "rejected: nothing was written",
            ])
            #expect(!result.err.unicodeScalars.contains("\u{200B}"), "the message shows the character itself: \(result)")
        }
    }

    @Test("an email address with a zero-width space and a name with an escape are rejected without repeating them",
          arguments: [
            ("zelda\u{200B}@example.org", "emailAddress", "Zelda", "question.topic.communication.people[0].handle.value: is not an email address: it holds U+200B (a format character)"),
            ("zelda.moss@example.org", "emailAddress", #"Zelda\u001b[31m"#, "question.topic.communication.people[0].name.givenName: holds U+001B (a control character); text may not hold control characters other than tab and line feed"),
            ("zelda.moss@home@example.org", "emailAddress", "Zelda", "question.topic.communication.people[0].handle.value: is not an email address: it has 2 @ signs"),
          ])
    func personalValuesStayOut(handle: String, kind: String, givenName: String, expected: String) throws {
        try withSandbox { sandbox in
            let file = try sandbox.write(
                Self.asked(id: "ev-1", question: 1, handle: handle, kind: kind, givenName: givenName) + "\n", to: "personal.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(result.status == 1, "\(result)")
            let first = try #require(result.errorLines.first)
            #expect(first.hasPrefix("\(file):1: question.asked: " + expected), "\(result)")
            #expect(!result.err.lowercased().contains("zelda"), "the message repeats a personal value: \(result)")
        }
    }
}
