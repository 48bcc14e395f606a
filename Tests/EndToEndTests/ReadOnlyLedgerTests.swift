import Foundation
import Testing

/// Stands for a directory that does not exist yet in a command's arguments (`backup --out DIR`): each run of the
/// command gets a new one, in the sandbox but outside the working directory.
private let newDirectory = "<new directory>"

/// Every reading command, with arguments that make it read handles-observed.jsonl's ledger and find something.
/// `backup` reads the ledger it copies, and writes only into its new DIR.
private let auditReadingCommands: [[String]] = queryCommands + [
    ["export"],
    ["backup", "--out", newDirectory],
]

extension Sandbox {
    /// `command` with each ``newDirectory`` replaced by a new path in the sandbox.
    fileprivate func fresh(_ command: [String]) -> [String] {
        command.map { $0 == newDirectory ? path("new-\(UUID().uuidString)") : $0 }
    }
}

/// What a reading command must leave as it was: the data file's bytes and modification time, and the names in
/// the ledger's directory.
private struct LedgerSnapshot: Equatable, CustomStringConvertible {
    var data: Data
    var modified: Date?
    var names: [String]

    init(_ ledger: String) throws {
        let file = ledger + "/data.mdb"
        data = try Data(contentsOf: URL(fileURLWithPath: file))
        modified = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
        names = try FileManager.default.contentsOfDirectory(atPath: ledger).sorted()
    }

    var description: String {
        "data.mdb \(data.count) bytes, modified \(modified.map { "\($0.timeIntervalSince1970)" } ?? "?"), files \(names)"
    }
}

@Suite("reading commands leave the ledger alone", .timeLimit(.minutes(10)))
struct ReadOnlyLedgerTests {
    @Test("a reading command changes neither data.mdb's bytes nor its mtime, and adds no file", arguments: auditReadingCommands)
    func leavesLedgerUnchanged(_ command: [String]) throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let before = try LedgerSnapshot(ledger)
            #expect(before.names.contains("data.mdb"))
            // export has no --format; the queries are run in each format.
            let formats: [[String]] = command == ["export"] ? [[]] : [["--format", "json"], ["--format", "table"], ["--format", "csv"]]
            for format in formats {
                let shown = (command + format).joined(separator: " ")
                let result = try sandbox.run(sandbox.fresh(command) + ["--ledger", ledger] + format)
                #expect(result.status == 0, "\(result)")
                #expect(!result.crashed)
                let after = try LedgerSnapshot(ledger)
                #expect(after.data == before.data, "\(shown) changed data.mdb's bytes")
                #expect(after.modified == before.modified, "\(shown) changed data.mdb's mtime")
                #expect(after.names == before.names, "\(shown) added or removed files: \(before.names) → \(after.names)")
            }
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [], "nothing left in the working directory")
            #expect(try sandbox.contents(of: sandbox.temporaryDirectory) == [], "nothing left in TMPDIR")
        }
    }

    @Test("on a missing ledger a reading command exits 3 with one line naming it, and creates nothing", arguments: auditReadingCommands)
    func missingLedger(_ command: [String]) throws {
        try withSandbox { sandbox in
            let missing = sandbox.path("missing")
            let result = try sandbox.run(sandbox.fresh(command) + ["--ledger", missing])
            #expect(result.status == 3, "\(result)")
            #expect(result.errorLines.count == 1, "one line: \(result)")
            #expect(result.err.contains(missing), "names the ledger: \(result)")
            #expect(result.stdout.isEmpty, "\(result)")
            #expect(!FileManager.default.fileExists(atPath: missing), "not created")

            // Nor the default ledger, ./permission-ledger, nor one named by $PERMISSION_LEDGER.
            let byDefault = try sandbox.run(sandbox.fresh(command))
            #expect(byDefault.status == 3, "\(byDefault)")
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [], "no ./permission-ledger")
            let named = sandbox.path("from-environment")
            let fromEnvironment = try sandbox.run(sandbox.fresh(command), environment: ["PERMISSION_LEDGER": named])
            #expect(fromEnvironment.status == 3, "\(fromEnvironment)")
            #expect(!FileManager.default.fileExists(atPath: named), "not created")
            #expect(try sandbox.contents(of: sandbox.root) == ["cwd", "io", "tmp"], "nothing created (backup: no DIR)")
        }
    }
}
