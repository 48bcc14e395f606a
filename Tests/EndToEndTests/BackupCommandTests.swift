import Foundation
import Testing

/// `permission-ledger backup --out DIR` (docs/spec/CLI.md): a compacted, verified copy of the ledger in a new
/// directory, usable as `--ledger`.
@Suite("backup", .timeLimit(.minutes(10)))
struct BackupCommandTests {
    /// The permissions bits of a file or directory.
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    /// The source's head hash, as `verify --format json` gives it.
    static func head(of ledger: String, in sandbox: Sandbox) throws -> String {
        try #require(try sandbox.json(["verify", "--ledger", ledger]).string("head"))
    }

    @Test("backup prints the copy's head in each format, and the copy, used as --ledger, exports and digests as the ledger does")
    func formatsAndRestore() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let head = try Self.head(of: ledger, in: sandbox)

            let table = try sandbox.run(["backup", "--ledger", ledger, "--out", sandbox.path("table"), "--format", "table"])
            #expect(table.status == 0, "\(table)")
            #expect(table.out == "backup: 1200 events, head seq 1200, hash \(head), verified\n", "\(table)")

            let json = try sandbox.json(["backup", "--ledger", ledger, "--out", sandbox.path("json")])
            #expect(json.string("out") == sandbox.path("json"))
            #expect(json.int("seq") == 1200)
            #expect(json.string("head") == head)
            #expect(json.bool("verified") == true)
            #expect(json.count == 4)

            let csv = try sandbox.run(["backup", "--ledger", ledger, "--out", sandbox.path("csv"), "--format", "csv"])
            #expect(csv.status == 0, "\(csv)")
            #expect(parseCSV(csv.out) == [["out", "seq", "head", "verified"], [sandbox.path("csv"), "1200", head, "true"]], "\(csv)")

            let export = try sandbox.export(ledger)
            let digest = try sandbox.run(["digest", "--ledger", ledger]).out
            for name in ["table", "json", "csv"] {
                let copy = sandbox.path(name)
                #expect(try Self.mode(copy) == 0o700)
                #expect(try Self.mode(copy + "/data.mdb") == 0o600)
                #expect(try sandbox.export(copy) == export, "\(name): the copy exports as the ledger does")
                #expect(try sandbox.run(["digest", "--ledger", copy]).out == digest)
                #expect(try Self.head(of: copy, in: sandbox) == head)
            }
            #expect(try sandbox.contents(of: sandbox.root) == ["csv", "cwd", "io", "json", "ledger", "table", "tmp"],
                    "no temporary directory is left")
        }
    }

    @Test("a backup taken without the key, kept outside the ledger, still holds the key store, and the key opens it")
    func keyKeptElsewhere() throws {
        try withSandbox { sandbox in
            let ledger = sandbox.path("ledger"), key = sandbox.path("elsewhere.key")
            let imported = try sandbox.run(["import", "--ledger", ledger, "--key-file", key, Fixture.path("decline.jsonl")])
            #expect(imported.status == 0, "\(imported)")
            let out = sandbox.path("copy")
            let backup = try sandbox.run(["backup", "--ledger", ledger, "--out", out])
            #expect(backup.status == 0, "\(backup)")
            let store = "/data-keys"
            #expect(FileManager.default.contents(atPath: out + store) == FileManager.default.contents(atPath: ledger + store))
            #expect(!FileManager.default.fileExists(atPath: out + "/ledger.key"), "the key kept elsewhere is not copied")
            let later = sandbox.path("later.jsonl")
            try Data(#"{"type":"handles.observed","id":"later","subject":"kid-new","occurredAt":"2026-12-01T09:00:00Z","recordedAt":"2026-12-01T09:00:00Z","checked":[{"kind":"custom","value":"robo_rex"}],"known":[]}"#.utf8 + [10]).write(to: URL(fileURLWithPath: later))
            let written = try sandbox.run(["import", "--ledger", out, "--key-file", key, later])
            #expect(written.status == 0, "\(written)")
            let read = try sandbox.run(["export", "--ledger", out, "--key-file", key])
            #expect(read.status == 0 && read.out.contains("decline"), "\(read.err)")
        }
    }

    @Test("backup's JSON is one line: out, seq, head and verified in that order, out escaped as JSON")
    func jsonBytes() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let head = try Self.head(of: ledger, in: sandbox)
            let out = sandbox.path(#"copy "1" \ é"#)
            let result = try sandbox.run(["backup", "--ledger", ledger, "--out", out, "--format", "json"])
            #expect(result.status == 0, "\(result)")
            let escaped = sandbox.path(#"copy \"1\" \\ é"#)
            #expect(result.out == #"{"out":""# + escaped + #"","seq":6,"head":""# + head + #"","verified":true}"# + "\n", "\(result)")
        }
    }

    @Test("backup only reads the ledger: data.mdb's bytes and mtime, and the directory's names, are unchanged")
    func leavesTheLedgerAlone() throws {
        try withFixtureLedger("handles-observed.jsonl") { sandbox, ledger in
            let file = ledger + "/data.mdb"
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            let modified = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date
            let names = try FileManager.default.contentsOfDirectory(atPath: ledger).sorted()

            let result = try sandbox.run(["backup", "--ledger", ledger, "--out", sandbox.path("copy")])
            #expect(result.status == 0, "\(result)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == bytes)
            #expect(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date == modified)
            #expect(try FileManager.default.contentsOfDirectory(atPath: ledger).sorted() == names)
            #expect(try sandbox.contents(of: sandbox.workingDirectory) == [])
            #expect(try sandbox.contents(of: sandbox.temporaryDirectory) == [])
        }
    }

    @Test("an existing DIR is wrong usage: exit 2, one line, and DIR is left as it was")
    func existingDirectory() throws {
        try withFixtureLedger("decline.jsonl") { sandbox, ledger in
            let out = sandbox.path("out")
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
            try sandbox.write("keep", to: "out/note")
            let before = try sandbox.contents(of: sandbox.root)

            let result = try sandbox.run(["backup", "--ledger", ledger, "--out", out])
            #expect(result.status == 2, "\(result)")
            #expect(result.errorLines == ["usage: --out \"\(out)\": already exists; a backup is written into a new directory"], "\(result)")
            #expect(result.out.isEmpty)
            #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["note"])
            #expect(try sandbox.contents(of: sandbox.root) == before)
        }
    }

    @Test("a missing ledger: exit 3, one line, and no DIR is created")
    func missingLedger() throws {
        try withSandbox { sandbox in
            let out = sandbox.path("out")
            let result = try sandbox.run(["backup", "--ledger", sandbox.path("missing"), "--out", out])
            #expect(result.status == 3, "\(result)")
            #expect(result.errorLines.count == 1, "\(result)")
            #expect(result.err.hasPrefix(sandbox.path("missing") + ": "), "\(result)")
            #expect(try sandbox.contents(of: sandbox.root) == ["cwd", "io", "tmp"], "nothing is created")
        }
    }

    @Test("past the file size limit (ulimit -f): exit 6, one line, no DIR and no temporary directory left")
    func fileSizeLimit() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            let before = try sandbox.contents(of: sandbox.root)
            let out = sandbox.path("out")
            let limited = try sandbox.run(
                ["backup", "--ledger", ledger, "--out", out], launcher: ["/usr/bin/prlimit", "--fsize=65536"])
            #expect(!limited.crashed, "\(limited)")
            #expect(limited.status == 6, "\(limited)")
            #expect(limited.errorLines == [
                "\(out): the copy reached this process's file size limit (ulimit -f); the backup was not written",
            ], "\(limited)")
            #expect(try sandbox.contents(of: sandbox.root) == before, "neither DIR nor a temporary directory is left")
        }
    }

    @Test("on a full file system: exit 6 with 'no space left on the device', and nothing left on it",
          .enabled(if: TinyFileSystem.canMount, "needs root to mount a small tmpfs"))
    func fullFileSystem() throws {
        try withFixtureLedger("family-day.jsonl") { sandbox, ledger in
            try TinyFileSystem.with(bytes: 256 << 10, at: sandbox.path("tiny")) { mount in
                let out = mount + "/backup"
                let full = try sandbox.run(["backup", "--ledger", ledger, "--out", out])
                #expect(!full.crashed, "\(full)")
                #expect(full.status == 6, "\(full)")
                #expect(full.errorLines == ["\(out): no space left on the device; the backup was not written"], "\(full)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: mount) == [], "no partial copy is left")
            }
            #expect(try sandbox.run(["verify", "--ledger", ledger]).status == 0)
        }
    }

    @Test("backups taken while another process imports each verify, and each export is a prefix of the ledger's")
    func whileAnotherProcessWrites() throws {
        try withSandbox { sandbox in
            let lines = try fixtureEventLines("family-day.jsonl")
            let chunks = try sandbox.chunks(of: lines, size: 20)
            let ledger = try sandbox.ledger(importing: chunks[0])
            let writer = try sandbox.importer(chunks.dropFirst(), into: ledger)
            try spawn(writer)

            var copies: [(path: String, seq: Int)] = []
            repeat {
                let copy = sandbox.path("copy-\(copies.count)")
                let result = try sandbox.run(["backup", "--ledger", ledger, "--out", copy, "--format", "json"])
                try #require(result.status == 0, "\(result)")
                copies.append((copy, try #require(try result.json().int("seq"))))
            } while writer.isRunning && copies.count < 6
            writer.waitUntilExit()
            #expect(writer.terminationStatus == 0)

            let export = String(decoding: try sandbox.export(ledger), as: UTF8.self)
            #expect(export.split(separator: "\n").count == 1200)
            for (copy, seq) in copies {
                #expect(try sandbox.run(["verify", "--ledger", copy]).status == 0)
                let copied = String(decoding: try sandbox.export(copy), as: UTF8.self)
                #expect(copied.split(separator: "\n").count == seq)
                #expect(export.hasPrefix(copied), "\(copy) (seq \(seq)) is a prefix of the ledger's export")
            }
            #expect(copies.map(\.seq) == copies.map(\.seq).sorted())
        }
    }
}
