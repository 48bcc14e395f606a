import Foundation
import Testing

/// `rebuild` opens LMDB's map writable, which sizes the data file as it opens: what refuses it must be found
/// before that, so that a refused rebuild leaves the data file and the key store as they were.
@Suite("a refused rebuild", .timeLimit(.minutes(10)))
struct RefusedRebuildTests {
    @Test("a key file that holds no key or another ledger's key: exit 3, one line, the data file and key store byte for byte as they were")
    func aWrongKeyChangesNothing() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            // Made from another seed than the sandbox's, so that its key is another.
            let other = sandbox.path("other")
            let made = try sandbox.run(["import", "--ledger", other, Fixture.path("time-limited.jsonl")], environment: [Sandbox.seedVariable: "another seed"])
            try #require(made.status == 0, "\(made)")
            let key = ledger + "/ledger.key"
            let keys: [(String, Data)] = [
                ("a key file that holds no key", Data("garbage\n".utf8)),
                ("another ledger's key", try Data(contentsOf: URL(fileURLWithPath: other + "/ledger.key"))),
            ]
            for (what, bytes) in keys {
                let original = try Data(contentsOf: URL(fileURLWithPath: key))
                try bytes.write(to: URL(fileURLWithPath: key))
                let before = try ["data.mdb", "data-keys"].map { try Data(contentsOf: URL(fileURLWithPath: ledger + "/" + $0)) }
                let run = try sandbox.run(["rebuild", "--ledger", ledger])
                #expect(run.status == 3 && run.errorLines.count == 1, "\(what): \(run)")
                let after = try ["data.mdb", "data-keys"].map { try Data(contentsOf: URL(fileURLWithPath: ledger + "/" + $0)) }
                #expect(after == before, "\(what): a refused rebuild changed the files")
                try original.write(to: URL(fileURLWithPath: key))
            }
            #expect(try sandbox.run(["rebuild", "--ledger", ledger]).status == 0)
        }
    }
}
