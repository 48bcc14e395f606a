import Foundation
import Testing

@Suite("usage errors", .timeLimit(.minutes(10)))
struct UsageTests {
    @Test("wrong usage exits 2 (not 64) with a message on standard error", arguments: [
        [],
        ["frobnicate"],
        ["verify", "--frobnicate"],
        ["question"],
        ["import"],
        ["replay"],
        ["known-handles"],
        ["permissions"],
        ["export", "--after", "ten"],
        ["verify", "--format", "xml"],
        ["questions", "--as-of"],
        ["digest", "--as-of", "tomorrow"],
    ])
    func wrongUsage(_ arguments: [String]) throws {
        try withSandbox { sandbox in
            // In the working directory of the default ledger, ./permission-ledger.
            let result = try sandbox.run(arguments)
            #expect(result.status == 2, "\(result)")
            #expect(!result.crashed)
            #expect(!result.errorLines.isEmpty, "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [], "no ledger is created")
        }
    }

    /// An argument that is not UTF-8 would be repaired into another value (U+FFFD for each bad byte) and recorded,
    /// or name another file: it is wrong usage, naming the option, not the argument, which may be personal.
    @Test("an argument that is not valid UTF-8 is wrong usage naming its option, and nothing is written", arguments: [
        (["--reference", "BAD"], "argument 9 (after --reference)"),
        (["--reference=BAD"], "the value of --reference"),
        (["BAD"], "argument 8"),
        (["--", "BAD"], "argument 9"),
    ])
    func argumentNotUTF8(_ extra: [String], _ named: String) throws {
        try Self.expectNotUTF8(extra, named)
    }

    @Test("a variable of the tool's whose value is not valid UTF-8 is wrong usage naming it", arguments: [
        "PERMISSION_LEDGER", "PERMISSION_LEDGER_KEY_FILE",
    ])
    func variableNotUTF8(_ variable: String) throws {
        try Self.expectNotUTF8([], "the value of \(variable)", variable: variable)
    }

    static func expectNotUTF8(_ extra: [String], _ named: String, variable: String? = nil) throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let before = try sandbox.run(["export", "--ledger", ledger]).out
            // The shell puts the byte 0xFF where the arguments say BAD: a Swift string cannot hold it.
            let exported = variable.map { #"export \#($0)="$PWD/x$bad"; "# } ?? ""
            let script = #"bad=$(printf '\377'); "# + exported + #"set -- "$@" "# + extra.map { "\"" + $0.replacingOccurrences(of: "BAD", with: "$bad") + "\"" }.joined(separator: " ")
                + #"; exec "$0" "$@""#
            let result = try sandbox.run(["erase", "--ledger", ledger, "--subject", "kid-ben", "--basis", "other"],
                                         launcher: ["/bin/sh", "-c", script])
            #expect(result.status == 2 && !result.crashed, "\(result)")
            #expect(result.errorLines == ["usage: \(named) is not valid UTF-8 text (see permission-ledger --help)"], "\(result)")
            #expect(try sandbox.run(["export", "--ledger", ledger]).out == before, "nothing is written")
        }
    }

    @Test("--help of every command exits 0 and shows an example", arguments: [
        "import", "export", "verify", "digest", "replay", "question", "questions", "known-handles", "permissions",
    ])
    func help(_ command: String) throws {
        try withSandbox { sandbox in
            let result = try sandbox.run([command, "--help"])
            #expect(result.status == 0, "\(result)")
            #expect(result.out.contains("Example"), "\(result)")
            #expect(result.out.contains("permission-ledger \(command)"), "the example runs this command: \(result)")
        }
    }

    @Test("the tool's own --help lists every command")
    func rootHelp() throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(["--help"])
            #expect(result.status == 0, "\(result)")
            for command in ["import", "export", "verify", "digest", "replay", "question", "questions", "known-handles", "permissions"] {
                #expect(result.out.contains(command), "\(command) in \(result)")
            }
        }
    }
}

@Suite("ledger errors", .timeLimit(.minutes(10)))
struct UnreadableLedgerTests {
    /// Things at the ledger path that are not a ledger.
    enum NotALedger: String, CaseIterable, Sendable {
        case emptyDirectory, directoryOfOtherFiles, regularFile, garbageDataFile

        func make(at path: String) throws {
            let fm = FileManager.default
            switch self {
            case .emptyDirectory:
                try fm.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .directoryOfOtherFiles:
                try fm.createDirectory(atPath: path, withIntermediateDirectories: false)
                try Data("holiday photos\n".utf8).write(to: URL(fileURLWithPath: path).appendingPathComponent("notes.txt"))
            case .regularFile:
                try Data("not a ledger\n".utf8).write(to: URL(fileURLWithPath: path))
            case .garbageDataFile:
                try fm.createDirectory(atPath: path, withIntermediateDirectories: false)
                try Data(repeating: 0x5A, count: 16384).write(to: URL(fileURLWithPath: path).appendingPathComponent("data.mdb"))
            }
        }
    }

    @Test("a path that is not a ledger exits 3 for reading commands", arguments: NotALedger.allCases)
    func notALedger(_ kind: NotALedger) throws {
        try withSandbox { sandbox in
            let path = sandbox.path("not-a-ledger")
            try kind.make(at: path)
            for command in [["verify"], ["questions"], ["export"]] {
                let result = try sandbox.run(command + ["--ledger", path])
                #expect(result.status == 3, "\(kind): \(result)")
                #expect(!result.crashed, "\(kind): \(result)")
                #expect(result.err.contains(path), "names the path: \(result)")
            }
        }
    }

    @Test("import refuses a directory of other files (exit 3) and leaves it as it was")
    func importIntoOtherDirectory() throws {
        try withSandbox { sandbox in
            let path = sandbox.path("documents")
            try NotALedger.directoryOfOtherFiles.make(at: path)
            let result = try sandbox.run(["import", "--ledger", path, Fixture.path("approval-messages.jsonl")])
            #expect(result.status == 3, "\(result)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["notes.txt"])
        }
    }

    @Test("$PERMISSION_LEDGER names the ledger when --ledger is not given; --ledger wins over it")
    func environmentVariable() throws {
        try withSandbox { sandbox in
            let fromEnvironment = sandbox.path("from-environment")
            let environment = ["PERMISSION_LEDGER": fromEnvironment]
            let imported = try sandbox.run(["import", Fixture.path("decline.jsonl")], environment: environment)
            #expect(imported.status == 0, "\(imported)")
            #expect(FileManager.default.fileExists(atPath: fromEnvironment), "created where the variable says")
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [], "not in ./permission-ledger")

            let verified = try sandbox.run(["verify", "--format", "json"], environment: environment)
            #expect(verified.status == 0, "\(verified)")
            #expect(try verified.json().int("events") == 6)

            let other = try sandbox.ledger(importing: Fixture.path("approval-messages.jsonl"), named: "other")
            let overridden = try sandbox.run(["verify", "--format", "json", "--ledger", other], environment: environment)
            #expect(try overridden.json().int("events") == 2)

            let missing = try sandbox.run(["verify"], environment: ["PERMISSION_LEDGER": sandbox.path("nowhere")])
            #expect(missing.status == 3, "\(missing)")
        }
    }

    @Test("without --ledger or $PERMISSION_LEDGER the ledger is ./permission-ledger")
    func defaultLedger() throws {
        try withSandbox { sandbox in
            let imported = try sandbox.run(["import", Fixture.path("approval-messages.jsonl")])
            #expect(imported.status == 0, "\(imported)")
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == ["permission-ledger"])
            let verified = try sandbox.run(["verify", "--format", "json"])
            #expect(try verified.json().int("events") == 2)
        }
    }
}

@Suite("table output", .timeLimit(.minutes(10)))
struct TableOutputTests {
    @Test("--format table cuts no value short in questions, known-handles and permissions (family-day.jsonl)")
    func valuesWhole() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            var commands = [["questions"], ["questions", "--subject", "kid-cleo", "--state", "approved"]]
            for subject in ["kid-ava", "kid-ben", "kid-cleo", "kid-dev"] {
                commands.append(["known-handles", "--subject", subject])
                commands.append(["permissions", "--subject", subject, "--require", "camera,microphone"])
            }
            for command in commands {
                let result = try sandbox.run(command + ["--ledger", ledger, "--as-of", "seq:1200", "--format", "table"])
                #expect(result.status == 0, "\(result)")
                let cut = result.outLines.filter { $0.contains("…") }
                #expect(cut.count == 0, "\(command.joined(separator: " ")): lines with a value cut short, such as\n\(cut.first ?? "")")
            }

            // The table lists every question, one a line, each with its whole id, which `question` accepts.
            let all = try sandbox.run(["questions", "--ledger", ledger, "--as-of", "seq:1200", "--format", "table"])
            let rows = all.outLines.filter { $0.hasPrefix("FAD10000-") }
            #expect(rows.count == 375)
            let id = try #require(rows.last?.split(separator: " ").first.map(String.init))
            #expect(id.count == 36)
            let one = try sandbox.run(["question", id, "--ledger", ledger, "--format", "json"])
            #expect(one.status == 0, "\(one)")
            #expect(one.out.contains("\"id\":\"FAD10000-0000-4000-8000-"))
        }
    }
}
