import Foundation
import Testing

/// What `import` makes of input that is not plain JSON Lines at its edges: a line with no end, a byte order mark.
@Suite("import's input at its edges", .timeLimit(.minutes(10)))
struct ImportInputEdgeTests {
    static let tooLong = "the line is longer than 1048576 bytes: at most 1048576 (1 MiB) are allowed; the rest of this input was not read"

    /// A line with no end is reported once its first 1 MiB are read; the kill is only a safety net against a hang.
    @Test("import /dev/zero ends: line 1 is too long, exit 1, nothing written",
          .enabled(if: FileManager.default.fileExists(atPath: "/dev/zero"), "needs /dev/zero"))
    func endlessLine() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let before = try sandbox.export(ledger)
            let result = try sandbox.run(["import", "--ledger", ledger, "/dev/zero"], killAfter: 120)
            #expect(!result.timedOut, "\(result)")
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines == ["/dev/zero:1: \(Self.tooLong)", "rejected: nothing was written"], "\(result)")
            #expect(try sandbox.export(ledger) == before)
        }
    }

    /// The rest of a file after a line too long is not read, but the other files are.
    @Test("after a line too long the rest of its file is not read; the next file is")
    func stopsThatInputOnly() throws {
        try withSandbox { sandbox in
            let long = String(repeating: "x", count: (1 << 20) + 10)
            let first = try sandbox.write("# first\n\(long)\nnot json at all\n", to: "first.jsonl")
            let second = try sandbox.write("not json either\n", to: "second.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, first, second])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.count == 3, "\(result)")
            #expect(result.errorLines.first == "\(first):2: \(Self.tooLong)", "\(result)")
            #expect(result.errorLines.dropFirst().first?.hasPrefix("\(second):1: ") == true, "\(result)")
        }
    }

    /// Lines are read and decoded on a thread of their own, in batches: the problems of a long input, far apart
    /// and across files, still come in input order with their files and lines.
    @Test("problems far apart in long inputs are reported in input order, with their files and lines")
    func problemsAcrossBatches() throws {
        try withSandbox { sandbox in
            let bad: Set<Int> = [5, 600, 1_999]
            let first = try sandbox.write((1...2_000).map { bad.contains($0) ? "not json \($0)\n" : "# line \($0)\n" }.joined(), to: "first.jsonl")
            let second = try sandbox.write("# one\n{\n", to: "second.jsonl")
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, first, second])
            #expect(result.status == 1, "\(result)")
            let places = result.errorLines.dropLast().map { $0.split(separator: ":").prefix(2).joined(separator: ":") }
            #expect(places == ["\(first):5", "\(first):600", "\(first):1999", "\(second):2"], "\(result)")
            #expect(result.errorLines.last == "rejected: nothing was written", "\(result)")

            // More problems than are shown: the first 100, in order, then a line that says there are more.
            let many = try sandbox.write((1...1_000).map { $0.isMultiple(of: 3) ? "bad \($0)\n" : "# \($0)\n" }.joined(), to: "many.jsonl")
            let cut = try sandbox.run(["import", "--ledger", sandbox.ledger, many])
            #expect(cut.status == 1, "\(cut)")
            #expect(cut.errorLines.count == 102, "\(cut)")
            #expect(cut.errorLines.first?.hasPrefix("\(many):3: ") == true, "\(cut)")
            #expect(cut.errorLines.dropFirst(99).first?.hasPrefix("\(many):300: ") == true, "\(cut)")
            #expect(cut.errorLines.dropFirst(100).first == "… and more problems; the first 100 are shown", "\(cut)")
        }
    }

    @Test("a UTF-8 byte order mark at the start of a file (or of standard input) is skipped")
    func byteOrderMark() throws {
        try withSandbox { sandbox in
            let text = try Fixture.text("decline.jsonl")
            let file = sandbox.path("bom.jsonl")
            try Data([0xEF, 0xBB, 0xBF] + Array(text.utf8)).write(to: URL(fileURLWithPath: file))
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(try ImportSummary(result) == ImportSummary(appended: 6, duplicates: 0, head: 6))
            let piped = try sandbox.run(["import", "--ledger", sandbox.path("piped"), "-"], stdin: file)
            #expect(try ImportSummary(piped) == ImportSummary(appended: 6, duplicates: 0, head: 6))
            #expect(try sandbox.export(sandbox.ledger) == sandbox.export(sandbox.path("piped")))
        }
    }

    @Test("a byte order mark anywhere but the start of a file is still rejected where it is")
    func byteOrderMarkInside() throws {
        try withSandbox { sandbox in
            let lines = try Fixture.text("decline.jsonl").split(separator: "\n").filter { $0.hasPrefix("{") }
            let file = sandbox.path("inside.jsonl")
            try Data(Array((lines[0] + "\n").utf8) + [0xEF, 0xBB, 0xBF] + Array((lines[1] + "\n").utf8)).write(to: URL(fileURLWithPath: file))
            let result = try sandbox.run(["import", "--ledger", sandbox.ledger, file])
            #expect(result.status == 1, "\(result)")
            #expect(result.errorLines.first?.hasPrefix("\(file):2: ") == true, "\(result)")
        }
    }
}
