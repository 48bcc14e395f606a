import Foundation
import Testing

/// Every reading command that takes --format.
private let readingCommands = queryCommands

/// The formats of a query.
private let formats = ["table", "json", "csv"]

/// Runs the tool as `launcher` with standard output on /dev/full, where every write fails with ENOSPC.
private let onFullDevice = ["/bin/sh", "-c", #"exec "$0" "$@" > /dev/full"#]

/// Runs the tool as `launcher` with standard error on /dev/full.
private let errorsOnFullDevice = ["/bin/sh", "-c", #"exec "$0" "$@" 2> /dev/full"#]

/// Runs the tool as `launcher` with both standard output and standard error on /dev/full.
private let bothOnFullDevice = ["/bin/sh", "-c", #"exec "$0" "$@" > /dev/full 2> /dev/full"#]

/// The one line of a command whose standard output could not be written.
private let outputFailedLine = "standard output: no space left on the device; the output could not be written"

/// Output that cannot be written (docs/spec/CLI.md, "Common"): exit 6, said in one line, never a crash.
@Suite("output on a full device", .timeLimit(.minutes(10)),
       .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
struct UnwritableOutputTests {
    /// A run whose output could not be written: exit 6 with the one line, not a signal.
    static func expectOutputFailed(
        _ result: ToolRun, line: String = outputFailedLine, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(!result.crashed, "\(result)", sourceLocation: sourceLocation)
        #expect(result.status == 6, "\(result)", sourceLocation: sourceLocation)
        #expect(result.errorLines == [line], "\(result)", sourceLocation: sourceLocation)
        #expect(!result.err.contains("Fatal error"), "\(result)", sourceLocation: sourceLocation)
    }

    @Test("a query in each format exits 6 with one line", arguments: readingCommands)
    func query(_ command: [String]) throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            for format in formats {
                let result = try sandbox.run(command + ["--ledger", ledger, "--format", format], launcher: onFullDevice)
                Self.expectOutputFailed(result)
            }
        }
    }

    @Test("export, which writes in chunks from inside a read transaction, exits 6 with one line; --follow too")
    func export() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let none = "standard output: no space left on the device; no event was written"
            Self.expectOutputFailed(try sandbox.run(["export", "--ledger", ledger], launcher: onFullDevice), line: none)
            Self.expectOutputFailed(try sandbox.run(["export", "--ledger", ledger, "--after", "1199"], launcher: onFullDevice), line: none)
            // The kill is a safety net against a follow that would go on writing into nothing, not a timing assertion.
            let follow = try sandbox.run(["export", "--ledger", ledger, "--follow"], launcher: onFullDevice, killAfter: 300)
            #expect(!follow.timedOut, "\(follow)")
            Self.expectOutputFailed(follow, line: none)
        }
    }

    /// A file size limit lets the first bytes through: the line names the last event written whole, and the
    /// output holds exactly those events' lines, then a part of the next.
    @Test("an export cut short says up to which seq the events were written", arguments: [200, 100_000, 300_000])
    func partialExport(_ limit: Int) throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let whole = try sandbox.export(ledger)
            let result = try sandbox.run(["export", "--ledger", ledger], launcher: ["/usr/bin/prlimit", "--fsize=\(limit)"])
            #expect(result.stdout.count == limit, "\(result)")
            #expect(whole.starts(with: result.stdout))
            let complete = result.stdout.filter { $0 == 0x0A }.count
            let said = complete == 0 ? "no event was written" : "the events up to seq \(complete) were written, not those after it"
            Self.expectOutputFailed(
                result, line: "standard output: the file reached this process's file size limit (ulimit -f); \(said)")
        }
    }

    @Test("--help, a command's --help and the help command exit 6 with one line", arguments: [
        ["--help"], ["export", "--help"], ["help", "known-handles"],
    ])
    func help(_ arguments: [String]) throws {
        try withSandbox { sandbox in
            Self.expectOutputFailed(try sandbox.run(arguments, launcher: onFullDevice))
            #expect(try sandbox.run(arguments).status == 0)
        }
    }

    /// The projections are rebuilt before the summary is printed.
    @Test("rebuild exits 6 with one line saying the rebuild is done")
    func rebuild() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            Self.expectOutputFailed(
                try sandbox.run(["rebuild", "--ledger", ledger], launcher: onFullDevice),
                line: "standard output: no space left on the device; the projections were rebuilt; only this summary was not written")
            #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0)
        }
    }

    @Test("replay exits 6 with one line", arguments: formats)
    func replay(_ format: String) throws {
        try withSandbox { sandbox in
            let result = try sandbox.run(["replay", Fixture.path("decline.jsonl"), "--format", format], launcher: onFullDevice)
            Self.expectOutputFailed(result)
        }
    }

    /// The copy is complete and verified before the summary is printed: a summary that cannot be written leaves
    /// DIR in place, usable.
    @Test("backup exits 6 with one line when its summary cannot be written, and DIR is a verified copy", arguments: formats)
    func backup(_ format: String) throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let out = sandbox.path("copy")
            let result = try sandbox.run(["backup", "--ledger", ledger, "--out", out, "--format", format], launcher: onFullDevice)
            Self.expectOutputFailed(
                result, line: "standard output: no space left on the device; the backup \(out) is written and verified; only this summary was not written")
            #expect(try sandbox.run(["verify", "--ledger", out]).status == 0)
            #expect(try sandbox.export(out) == sandbox.export(ledger))
        }
    }

    /// The events are stored before the summary is printed: the output failed, not the import.
    @Test("import exits 6 with one line when its summary cannot be written; the events are stored")
    func importSummary() throws {
        try withSandbox { sandbox in
            let ledger = sandbox.path("ledger")
            let result = try sandbox.run(["import", "--ledger", ledger, Fixture.path("decline.jsonl")], launcher: onFullDevice)
            Self.expectOutputFailed(
                result, line: "standard output: no space left on the device; the events were imported (head seq 6); only this summary was not written")
            let again = try sandbox.run(["import", "--ledger", ledger, Fixture.path("decline.jsonl")])
            #expect(again.status == 0, "\(again)")
            #expect(again.out.hasPrefix("imported 0 events, "), "every event was stored by the first run: \(again)")
        }
    }

    /// With nowhere to say what went wrong, the exit code still says it.
    @Test("with standard error on /dev/full too, a failure is its exit code alone, not a crash")
    func errorsUnwritable() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let missing = try sandbox.run(["questions", "--ledger", sandbox.path("missing")], launcher: errorsOnFullDevice)
            #expect(!missing.crashed, "\(missing)")
            #expect(missing.status == 3, "\(missing)")
            let usage = try sandbox.run(["questions", "--no-such-option"], launcher: errorsOnFullDevice)
            #expect(!usage.crashed, "\(usage)")
            #expect(usage.status == 2, "\(usage)")
            let both = try sandbox.run(["export", "--ledger", ledger], launcher: bothOnFullDevice)
            #expect(!both.crashed, "\(both)")
            #expect(both.status == 6, "\(both)")
        }
    }
}
