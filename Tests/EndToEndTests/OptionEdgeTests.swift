import Foundation
import Testing

/// Option values at their edges: empty, repeated, out of range, beyond the log or beyond any log.
@Suite("option values at their edges", .timeLimit(.minutes(10)))
struct OptionEdgeTests {
    /// A usage error: exit 2, one line on standard error, nothing on standard output.
    static func expectUsage(_ result: ToolRun, _ line: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!result.crashed, "\(result)", sourceLocation: sourceLocation)
        #expect(result.status == 2, "\(result)", sourceLocation: sourceLocation)
        #expect(result.errorLines == [line], "\(result)", sourceLocation: sourceLocation)
        #expect(result.stdout.isEmpty, "\(result)", sourceLocation: sourceLocation)
    }

    /// Foundation's `deletingLastPathComponent` stops the process on a bare name of one character: the tool must not.
    @Test("files named by one character, in the working directory: key file, ledger, backup and report")
    func oneCharacterNames() throws {
        try withSandbox { sandbox in
            let cwd = sandbox.workingDirectory
            let steps = [["import", "--ledger", "L", "--key-file", "K", Fixture.path("handles-observed.jsonl")],
                         ["verify", "--ledger", "L"],
                         ["known-handles", "--ledger", "L", "--key-file", "K", "--subject", "kid-ben"],
                         ["backup", "--ledger", "L", "--key-file", "K", "--out", "C"],
                         ["report", "--ledger", "L", "--key-file", "K", "--subject", "kid-ben", "--out", "r"]]
            for step in steps {
                let result = try sandbox.run(step, in: cwd)
                #expect(!result.crashed && result.status == 0, "\(result)")
            }
            #expect(try sandbox.contents(of: cwd) == ["C", "K", "L", "r"], "no temporary file or second name of the key is left")
            #expect(try sandbox.run(["verify", "--ledger", "C"], in: cwd).status == 0)
        }
    }

    @Test("--require with an empty name or an empty item is wrong usage naming the option", arguments: ["", "camera,,camera", "camera,", ",camera", " "])
    func emptyRequiredName(_ list: String) throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["permissions", "--ledger", ledger, "--subject", "kid-ben", "--require", list, "--format", "json"])
            #expect(result.status == 2, "\(result)")
            #expect(result.errorLines.count == 1 && result.err.hasPrefix("usage: --require: an empty permission name in "), "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }

    @Test("--require with a name given twice counts it once")
    func repeatedRequiredName() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let once = try sandbox.json(["permissions", "--ledger", ledger, "--subject", "kid-ben", "--require", "camera,microphone"])
            let twice = try sandbox.json(["permissions", "--ledger", ledger, "--subject", "kid-ben", "--require", "camera,microphone,camera"])
            let require = try twice.object("require")
            #expect(require["missing"] as? [String] == ["camera", "microphone"])
            #expect(NSDictionary(dictionary: try once.object("require")) == NSDictionary(dictionary: require))
            let csv = try sandbox.run(["permissions", "--ledger", ledger, "--subject", "kid-ben", "--require", "camera,camera", "--format", "csv"])
            #expect(csv.status == 0, "\(csv)")
            #expect(csv.out.components(separatedBy: "\r\n").filter { $0.hasPrefix("camera,") }.count == 1, "\(csv)")
        }
    }

    @Test("--poll outside 0.01 to 3600 seconds is wrong usage saying so", arguments: ["0", "0.000001", "0.009", "3601", "nan"])
    func pollRange(_ seconds: String) throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let result = try sandbox.run(["export", "--ledger", ledger, "--follow", "--poll", seconds], killAfter: 300)
            Self.expectUsage(result, "usage: --poll must be between 0.01 and 3600 seconds (see permission-ledger --help)")
        }
    }

    @Test("--poll 0.01 is allowed")
    func pollMinimum() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            // Without --follow the interval is checked but not used: the export ends at the head.
            let result = try sandbox.run(["export", "--ledger", ledger, "--poll", "0.01"])
            #expect(result.status == 0, "\(result)")
            #expect(result.outLines.count == 6)
        }
    }

    @Test("--ledger '' is wrong usage: an empty path")
    func emptyLedgerPath() throws {
        try withSandbox { sandbox in
            for arguments in [["questions"], ["import", Fixture.path("decline.jsonl")], ["verify"], ["rebuild"]] {
                Self.expectUsage(try sandbox.run(arguments + ["--ledger", ""]), "usage: --ledger: an empty path (see permission-ledger --help)")
            }
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [])
        }
    }

    @Test("a dangling symbolic link as --ledger is named as one, for reading and for writing; nothing is created")
    func danglingLedgerLink() throws {
        try withSandbox { sandbox in
            let link = sandbox.path("dang")
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "missing-target")
            let line = "\(link): is a symbolic link to missing-target, which does not exist; give the ledger's directory, or create the one the link names"
            for arguments in [["questions"], ["import", Fixture.path("decline.jsonl")], ["verify"], ["rebuild"], ["export"]] {
                let result = try sandbox.run(arguments + ["--ledger", link])
                #expect(result.status == 3, "\(result)")
                #expect(result.errorLines == [line], "\(result)")
            }
            #expect(!FileManager.default.fileExists(atPath: sandbox.path("missing-target")))
        }
    }

    @Test("export --after the head writes nothing and exits 0; past the head it exits 1 naming the head")
    func afterPastTheHead() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let atHead = try sandbox.run(["export", "--ledger", ledger, "--after", "6"])
            #expect(atHead.status == 0 && atHead.stdout.isEmpty && atHead.stderr.isEmpty, "\(atHead)")
            for after in ["7", "9223372036854775807"] {
                let past = try sandbox.run(["export", "--ledger", ledger, "--after", after])
                #expect(past.status == 1, "\(past)")
                #expect(past.errorLines == ["--after \(after) is beyond the end of the log (the head is seq 6)"], "\(past)")
                #expect(past.stdout.isEmpty)
                let following = try sandbox.run(["export", "--ledger", ledger, "--after", after, "--follow"], killAfter: 300)
                #expect(following.status == 1 && !following.timedOut, "\(following)")
            }
            // The same as --as-of past the head.
            let asOf = try sandbox.run(["digest", "--ledger", ledger, "--as-of", "seq:7"])
            #expect(asOf.status == 1, "\(asOf)")
            #expect(asOf.errorLines == ["seq:7 is beyond the end of the log (the head is seq 6)"], "\(asOf)")
        }
    }

    /// Past Int64.max no ledger can hold a seq: wrong usage, with one message whether the number fits in 64 bits or not.
    @Test("a seq beyond any a ledger can hold is exit 2 with one message, fitting in UInt64 or not", arguments: [
        "9223372036854775808", "18446744073709551615", "18446744073709551616", "99999999999999999999",
    ])
    func seqBeyondAnyLedger(_ n: String) throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let limit = "is beyond any seq a ledger can hold (at most 9223372036854775807)"
            Self.expectUsage(try sandbox.run(["digest", "--ledger", ledger, "--as-of", "seq:\(n)"]), "usage: --as-of seq:\(n) \(limit)")
            Self.expectUsage(try sandbox.run(["history", "--ledger", ledger, "--from", "seq:\(n)"]), "usage: --from seq:\(n) \(limit)")
            Self.expectUsage(try sandbox.run(["export", "--ledger", ledger, "--after", n]), "usage: --after \(n) \(limit)")
            // Checked before the ledger is opened, as any usage error.
            Self.expectUsage(try sandbox.run(["digest", "--ledger", sandbox.path("missing"), "--as-of", "seq:\(n)"]), "usage: --as-of seq:\(n) \(limit)")
        }
    }

    @Test("the --as-of help says each command's default: the head for digest and replay, now for the queries")
    func asOfDefaults() throws {
        try withSandbox { sandbox in
            for command in ["digest", "replay"] {
                let help = try sandbox.run([command, "--help"]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(help.contains("Default: the head (seq:N of the last event)"), "\(command): \(help)")
                #expect(!help.contains("Default: now"), "\(command): \(help)")
            }
            for command in ["question", "questions", "known-handles", "permissions", "stats", "who-approved"] {
                let help = try sandbox.run([command, "--help"]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                #expect(help.contains("Default: now (every event recorded so far"), "\(command): \(help)")
            }
        }
    }
}
