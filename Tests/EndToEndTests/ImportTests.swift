import Foundation
import Testing

@Suite("import", .timeLimit(.minutes(10)))
struct ImportTests {
    @Test("reports the events appended, the duplicates and the new head seq")
    func reportsWhatWasAppended() throws {
        try withSandbox { sandbox in
            let file = Fixture.path("approval-messages.jsonl")
            let first = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(first.status == 0, "\(first)")
            #expect(try ImportSummary(first) == ImportSummary(appended: 2, duplicates: 0, head: 2))
            // Not a terminal: no progress lines, only the summary.
            #expect(first.outLines.count == 1, "\(first)")

            let again = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(again.status == 0, "\(again)")
            #expect(try ImportSummary(again) == ImportSummary(appended: 0, duplicates: 2, head: 2))
        }
    }

    @Test("counts redelivered events as duplicates (duplicate-response.jsonl: 3 appended, 3 duplicates)")
    func countsDuplicates() throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, Fixture.path("duplicate-response.jsonl")])
            #expect(result.status == 0, "\(result)")
            #expect(try ImportSummary(result) == ImportSummary(appended: 3, duplicates: 3, head: 3))
            #expect(try sandbox.export(sandbox.ledger).split(separator: UInt8(ascii: "\n")).count == 3)
        }
    }

    @Test("reads standard input for -")
    func readsStandardInput() throws {
        try withSandbox { sandbox in
            let file = Fixture.path("approval-messages.jsonl")
            let piped = try sandbox.run(["import", "--ledger", sandbox.ledger, "-"], stdin: file)
            #expect(piped.status == 0, "\(piped)")
            #expect(try ImportSummary(piped) == ImportSummary(appended: 2, duplicates: 0, head: 2))

            let fromFile = try sandbox.ledger(importing: file, named: "from-file")
            #expect(try sandbox.export(sandbox.ledger) == sandbox.export(fromFile))
        }
    }

    @Test("rejects the bad line of each invalid fixture at FILE:LINE: and writes nothing", arguments: Fixture.invalidNames)
    func rejectsInvalidFixture(_ name: String) throws {
        try withSandbox { sandbox in
            // The path as given, relative to the working directory, is the path the error names.
            let given = "Fixtures/invalid/\(name)"
            let text = try Fixture.text("invalid/\(name)")
            let badLine = try #require(Fixture.header("line", in: text), "\(name) has no # line: header")
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            if lines.last == "" { lines.removeLast() }
            #expect(String(lines.count) == badLine, "the bad line is the last line of \(name)")

            // The good prefix goes in first, so that the rejection is checked against a ledger holding it.
            let prefix = try sandbox.write(lines.dropLast().map { $0 + "\n" }.joined(), to: "prefix.jsonl")
            try sandbox.ledger(importing: prefix)
            let before = try sandbox.export(sandbox.ledger)

            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, given], in: packageRoot)
            #expect(result.status == 1, "\(result)")
            let first = try #require(result.errorLines.first, "\(result)")
            #expect(first.hasPrefix("\(given):\(badLine):"), "\(result)")
            #expect(first.count > "\(given):\(badLine): ".count, "the error gives a reason: \(result)")
            #expect(result.errorLines.filter { $0.hasPrefix("\(given):") }.count == 1, "only line \(badLine) is bad: \(result)")

            #expect(try sandbox.export(sandbox.ledger) == before, "nothing was written")
        }
    }

    /// A file of 8 lines whose lines 3 (an unknown permission), 5 (an answer to a question never asked)
    /// and 7 (not JSON) are bad: parse problems and rule violations together.
    static let threeBadLines = """
        # lines 3, 5 and 7 are bad
        {"type":"question.asked","id":"multi-01","subject":"kid-ava","occurredAt":"2026-11-20T21:00:00Z","recordedAt":"2026-11-20T21:00:01Z","question":{"id":"6A3F1C2E-00FF-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":"orbit","kind":"custom"}}],"actions":["message"]}}}}
        {"type":"permission.changed","id":"multi-02","subject":"kid-ava","occurredAt":"2026-11-20T21:01:00Z","recordedAt":"2026-11-20T21:01:01Z","permission":"teleport","state":"authorized"}
        {"type":"permission.changed","id":"multi-03","subject":"kid-ava","occurredAt":"2026-11-20T21:02:00Z","recordedAt":"2026-11-20T21:02:01Z","permission":"camera","state":"authorized"}
        {"type":"question.answered","id":"multi-04","subject":"kid-ava","occurredAt":"2026-11-20T21:03:00Z","recordedAt":"2026-11-20T21:03:01Z","questionId":"6A3F1C2E-00FF-4000-8000-000000000099","choiceId":"approve"}
        {"type":"question.answered","id":"multi-05","subject":"kid-ava","occurredAt":"2026-11-20T21:04:00Z","recordedAt":"2026-11-20T21:04:01Z","questionId":"6A3F1C2E-00FF-4000-8000-000000000001","choiceId":"approve"}
        {"type":"permission.changed","id":"multi-06","subject":"kid-ava","occurredAt":"2026-11-20T21:05:00Z",
        {"type":"permission.changed","id":"multi-07","subject":"kid-ava","occurredAt":"2026-11-20T21:06:00Z","recordedAt":"2026-11-20T21:06:01Z","permission":"microphone","state":"denied"}

        """

    @Test("reports every rejected line, in order, not only the first")
    func reportsEveryRejectedLine() throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let before = try sandbox.export(ledger)
            let file = try sandbox.write(Self.threeBadLines, to: "three-bad.jsonl")

            let result = try sandbox.run(["import", "--ledger", ledger, file])
            #expect(result.status == 1, "\(result)")
            let reported = result.errorLines.filter { $0.hasPrefix("\(file):") }
            #expect(reported.count == 3, "\(result)")
            for (line, expected) in zip(reported, [3, 5, 7]) {
                #expect(line.hasPrefix("\(file):\(expected):"), "\(result)")
            }
            #expect(try sandbox.export(ledger) == before, "nothing was written")
        }
    }

    @Test("is all or nothing across files: a bad line in the second file keeps the first file out")
    func allOrNothingAcrossFiles() throws {
        try withSandbox { sandbox in
            let good = Fixture.path("approval-messages.jsonl")
            let bad = try sandbox.write(
                #"{"type":"permission.changed","id":"x-01","subject":"kid-ava","occurredAt":"2026-11-20T21:00:00Z","recordedAt":"2026-11-20T21:00:01Z","permission":"camera","state":"granted"}"#
                    + "\n", to: "bad.jsonl")

            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, good, bad])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("\(bad):1:") == true, "\(result)")

            // Whether or not the ledger was created, it holds no event.
            let export = try sandbox.run(["export", "--ledger", sandbox.ledger])
            #expect(export.status == 0 || export.status == 3, "\(export)")
            #expect(export.stdout.isEmpty, "nothing was written: \(export)")
        }
    }

    @Test("tolerates CRLF line ends, blank lines and indented comments")
    func lineSyntax() throws {
        try withSandbox { sandbox in
            let text = try Fixture.text("decline.jsonl")
            let lines = text.split(separator: "\n").map(String.init)
            let relaxed = ["", "   # an indented comment", "\t"] + lines.map { $0 + "\r" } + ["  "]
            let file = try sandbox.write(relaxed.joined(separator: "\n") + "\n", to: "relaxed.jsonl")

            let relaxedLedger = sandbox.path("relaxed")
            let result = try sandbox.run(["import", "--ledger", relaxedLedger, file])
            #expect(result.status == 0, "\(result)")
            #expect(try ImportSummary(result) == ImportSummary(appended: 6, duplicates: 0, head: 6))
            let plain = try sandbox.ledger(importing: Fixture.path("decline.jsonl"), named: "plain")
            #expect(try sandbox.export(relaxedLedger) == sandbox.export(plain))
        }
    }

    @Test("rejects a line longer than 1 MiB", arguments: [(1 << 20, true), ((1 << 20) + 1, false)])
    func lineLength(_ length: Int, _ accepted: Bool) throws {
        try withSandbox { sandbox in
            let event = try #require(try Fixture.text("approval-messages.jsonl").split(separator: "\n").first { !$0.hasPrefix("#") })
            // The same event, padded with white space inside the object to `length` bytes.
            let padded = String(event.dropLast()) + String(repeating: " ", count: length - event.utf8.count) + "}"
            try #require(padded.utf8.count == length)
            let file = try sandbox.write("# one long line\n" + padded + "\n", to: "long.jsonl")

            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            if accepted {
                #expect(result.status == 0, "\(result)")
            } else {
                #expect(result.status == 1, "\(result)")
                #expect(result.errorLines.first?.hasPrefix("\(file):2:") == true, "\(result)")
            }
        }
    }

    @Test("rejects a missing input file without touching the ledger")
    func rejectsMissingFile() throws {
        try withFixtureLedger("approval-messages.jsonl") { sandbox, ledger in
            let before = try sandbox.export(ledger)
            let missing = sandbox.path("no-such-file.jsonl")
            let result = try sandbox.run(["import", "--ledger", ledger, Fixture.path("decline.jsonl"), missing])
            #expect(result.status == 1, "\(result)")
            #expect(result.err.contains(missing), "the error names the file: \(result)")
            #expect(try sandbox.export(ledger) == before)
        }
    }

    // MARK: Streaming: files read a chunk (1 MiB) at a time

    /// A `permission.changed` line, the `n`th second of 2026-11-21 (after every fixture); about 190 bytes.
    static func permissionLine(_ n: Int, id: String? = nil) -> String {
        let time = String(format: "2026-11-21T%02d:%02d:%02dZ", n / 3600, (n / 60) % 60, n % 60)
        let state = ["authorized", "denied", "askAgain"][n % 3]
        let id = id ?? "stream-\(n)"
        return #"{"type":"permission.changed","id":"\#(id)","subject":"kid-\#(n % 4)","occurredAt":"\#(time)","recordedAt":"\#(time)","permission":"camera","state":"\#(state)"}"#
    }

    /// `count` good lines, about 190 bytes each: 20,000 make some 3.8 MB, several chunks.
    static func goodLines(_ count: Int) -> [String] { (0..<count).map { permissionLine($0) } }

    @Test("imports files of several chunks, with a line longer than a chunk, as the same events unpadded")
    func importsAcrossChunks() throws {
        try withSandbox { sandbox in
            var lines = Self.goodLines(20_000)
            let plain = try sandbox.write(lines.joined(separator: "\n") + "\n", to: "plain.jsonl")
            #expect(try FileManager.default.attributesOfItem(atPath: plain)[.size] as! Int > 3 << 20)
            // The same events, one padded with white space to the longest line allowed (1 MiB, so it spans
            // two chunks), some with CRLF ends, a comment and blank lines; the last line has no newline.
            let padded = String(lines[5000].dropLast()) + String(repeating: " ", count: (1 << 20) - lines[5000].utf8.count) + "}"
            lines[5000] = padded
            for n in stride(from: 1, to: lines.count, by: 997) { lines[n] += "\r" }
            lines.insert(contentsOf: ["# a comment", "", "   "], at: 12_345)
            let relaxed = try sandbox.write(lines.joined(separator: "\n"), to: "relaxed.jsonl")

            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, relaxed])
            #expect(result.status == 0, "\(result)")
            #expect(try ImportSummary(result) == ImportSummary(appended: 20_000, duplicates: 0, head: 20_000))
            let fromPlain = try sandbox.ledger(importing: plain, named: "plain")
            #expect(try sandbox.export(sandbox.ledger) == sandbox.export(fromPlain))
            #expect(try sandbox.run(["verify", "--ledger", sandbox.ledger]).status == 0)
        }
    }

    @Test("reports parse problems and rule rejections of one run together, in input order, across chunks and files")
    func reportsEveryKindOfProblemInOrder() throws {
        try withFixtureLedger("permissions.jsonl") { sandbox, ledger in
            let before = try sandbox.export(ledger)
            var lines = Self.goodLines(20_000)
            lines[8_999] = #"{"type":"permission.changed","id":"broken","#  // line 9000: does not parse
            // Line 12000: a rule rejection, an answer to a question never asked.
            lines[11_999] = #"{"type":"question.answered","id":"lost","subject":"kid-0","occurredAt":"2026-11-21T03:19:59Z","recordedAt":"2026-11-21T03:19:59Z","questionId":"6A3F1C2E-00FF-4000-8000-000000000099","choiceId":"approve"}"#
            let first = try sandbox.write(lines.joined(separator: "\n") + "\n", to: "first.jsonl")
            let second = try sandbox.write([
                Self.permissionLine(30_000),
                Self.permissionLine(30_001, id: "stream-1"),  // line 2: the id of another event of the first file
                "not json",  // line 3
                Self.permissionLine(30_003),
            ].joined(separator: "\n") + "\n", to: "second.jsonl")

            let result = try sandbox.run(["import", "--ledger", ledger, first, second])
            #expect(result.status == 1, "\(result)")
            let places = result.errorLines.map { $0.split(separator: ":", maxSplits: 2).prefix(2).joined(separator: ":") }
            #expect(places == ["\(first):9000", "\(first):12000", "\(second):2", "\(second):3", "rejected: nothing was written"], "\(result)")
            #expect(result.errorLines.last == "rejected: nothing was written", "\(result)")
            #expect(result.errorLines[1].contains("question.answered"), "\(result)")
            #expect(result.errorLines[2].contains("stream-1"), "\(result)")
            #expect(try sandbox.export(ledger) == before, "nothing was written")
        }
    }

    @Test("reports the first 100 problems in input order and says that there are more")
    func reportsAtMost100Problems() throws {
        try withSandbox { sandbox in
            // 150 bad lines among good ones: odd ones do not parse, even ones break a rule (a reused id).
            var lines = Self.goodLines(1_000)
            for bad in 0..<150 {
                lines[100 + 5 * bad] = bad.isMultiple(of: 2) ? Self.permissionLine(100 + 5 * bad, id: "stream-0") : "{"
            }
            let file = try sandbox.write(lines.joined(separator: "\n") + "\n", to: "bad.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(result.status == 1, "\(result)")
            let reported = result.errorLines.filter { $0.hasPrefix("\(file):") }
            #expect(reported.count == 100, "\(result)")
            for (line, bad) in zip(reported, 0..<100) {
                #expect(line.hasPrefix("\(file):\(101 + 5 * bad): "), "\(result)")
            }
            #expect(result.errorLines.suffix(2) == ["… and more problems; the first 100 are shown", "rejected: nothing was written"], "\(result)")
            let export = try sandbox.run(["export", "--ledger", sandbox.ledger])
            #expect(export.stdout.isEmpty, "nothing was written: \(export)")
        }
    }

    @Test("checks that every file can be read before writing anything: a missing second file keeps the first out")
    func missingSecondFileWritesNothing() throws {
        try withSandbox { sandbox in
            let missing = sandbox.path("no-such-file.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, Fixture.path("decline.jsonl"), missing])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines == ["\(missing): no such file; nothing was written"], "\(result)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.ledger), "the ledger was not even created")

            // A directory is not a file of events either.
            let directory = sandbox.path("a-directory")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let again = try sandbox.run(["import", "--ledger", sandbox.ledger, Fixture.path("decline.jsonl"), directory])
            #expect(again.status == 1, "\(again)")
            #expect(again.errorLines == ["\(directory): cannot be read; nothing was written"], "\(again)")
            #expect(!FileManager.default.fileExists(atPath: sandbox.ledger))
        }
    }
}
