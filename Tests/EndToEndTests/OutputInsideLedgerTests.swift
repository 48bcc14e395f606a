import Foundation
import Testing

/// The commands that read a ledger and write files (`report`, `bundle`, `backup`) refuse to write them inside the
/// ledger's directory or over its key file: a report renamed over `data.mdb`, the key store or the key file would
/// lose the ledger, or every personal field in it.
@Suite(.timeLimit(.minutes(10)))
struct OutputInsideLedgerTests {
    /// The bytes of each file of the ledger's directory but its lock file, and of `others`, by path.
    static func files(_ ledger: String, _ others: [String] = []) throws -> [String: Data] {
        let names = try FileManager.default.contentsOfDirectory(atPath: ledger).filter { $0 != "lock.mdb" }.map { ledger + "/" + $0 }
        var contents: [String: Data] = [:]
        for path in names + others { contents[path] = try Data(contentsOf: URL(fileURLWithPath: path)) }
        return contents
    }

    @Test func reportBundleAndBackupRefuseToWriteIntoTheLedger() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let keygen = try sandbox.run(["keygen", "--origin", "example.com/family-day", "--out", sandbox.path("signing.key")])
            try #require(keygen.status == 0, "\(keygen)")
            try FileManager.default.createSymbolicLink(atPath: sandbox.path("alias"), withDestinationPath: ledger)
            let keyFile = sandbox.path("outside.key")
            try FileManager.default.copyItem(atPath: ledger + "/ledger.key", toPath: keyFile)
            let before = try Self.files(ledger, [keyFile])
            #expect(before.keys.contains(ledger + "/data.mdb") && before.keys.contains(ledger + "/data-keys"))

            let report = ["report", "--ledger", ledger, "--subject", "kid-ben", "--out"]
            let refused: [(arguments: [String], out: String, why: String)] = [
                (report + [ledger + "/data.mdb"], ledger + "/data.mdb", "is inside the ledger's directory"),
                (report + [ledger + "/ledger.key"], ledger + "/ledger.key", "is inside the ledger's directory"),
                (report + [sandbox.path("alias") + "/data-keys"], sandbox.path("alias") + "/data-keys", "is inside the ledger's directory"),
                (report + ["ledger/../ledger/data.mdb"], "ledger/../ledger/data.mdb", "is inside the ledger's directory"),
                (["report", "--ledger", ledger, "--all", "--out", ledger], ledger, "is inside the ledger's directory"),
                (["report", "--ledger", ledger, "--key-file", keyFile, "--subject", "kid-ben", "--out", keyFile], keyFile, "is the ledger's key file"),
                (["bundle", "--ledger", ledger, "--signing-key", sandbox.path("signing.key"), "--subject", "kid-ben", "--out", ledger + "/proofs"],
                 ledger + "/proofs", "is inside the ledger's directory"),
                (["backup", "--ledger", ledger, "--out", ledger + "/copy"], ledger + "/copy", "is inside the ledger's directory"),
            ]
            for (arguments, out, why) in refused {
                let run = try sandbox.run(arguments, in: sandbox.root)
                #expect(run.status == 2, "\(run)")
                #expect(run.errorLines == ["usage: --out \"\(out)\" \(why); write it elsewhere"], "\(run)")
                #expect(try Self.files(ledger, [keyFile]) == before, "\(arguments)")
            }
            #expect(!FileManager.default.fileExists(atPath: ledger + "/proofs") && !FileManager.default.fileExists(atPath: ledger + "/copy"))

            // Beside the ledger, and through a link the report replaces rather than follows, it is written.
            try FileManager.default.createSymbolicLink(atPath: sandbox.path("link.html"), withDestinationPath: ledger + "/data.mdb")
            for out in [sandbox.path("kid-ben.html"), sandbox.path("link.html")] {
                let run = try sandbox.run(report + [out])
                #expect(run.status == 0, "\(run)")
            }
            #expect(try Self.files(ledger, [keyFile]) == before)
        }
    }
}
