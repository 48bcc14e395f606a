import Foundation
import LMDB
@testable import PermissionLedger
import PermissionModel
import Testing

/// `Ledger.backup(to:)`: a compacted, verified copy of the ledger in a new directory (docs/spec/CLI.md, `backup`).
@Suite struct BackupTests {
    /// The permissions bits of a file or directory.
    static func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    static func size(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
    }

    /// `count` permission changes from `start` on, a second apart, that append after `family-day.jsonl`.
    static func permissionChanges(_ range: Range<Int>) throws -> [PermissionEvent] {
        try range.map { n in
            let at = "2026-11-21T\(String(format: "%02d:%02d:%02d", n / 3600, n / 60 % 60, n % 60))Z"
            let line = #"{"type":"permission.changed","id":"backup-\#(n)","subject":"kid-ava","occurredAt":"\#(at)","recordedAt":"\#(at)","permission":"camera","state":"\#(n % 2 == 0 ? "authorized" : "denied")"}"#
            return try decodeEvent(line)
        }
    }

    @Test("a backup holds the same events: the same export byte for byte, digest and head; it verifies; 0700 and 0600")
    func sameEventsVerifiedOwnerOnly() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("family-day.jsonl")
            let out = directory + "/backup"

            let head = try await ledger.backup(to: out)
            #expect(head == (try ledger.head()))
            #expect(head.seq == 1200)
            #expect(try Self.mode(out) == 0o700)
            #expect(try Self.mode(out + "/data.mdb") == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["data-keys", "data.mdb", "ledger.key"],
                    "the data file, the key store, and the ledger's key, kept in the ledger's directory")
            #expect(try Self.mode(out + "/data-keys") == 0o600)
            #expect(try Self.mode(out + "/ledger.key") == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["backup", "ledger"],
                    "no temporary directory is left beside it")

            do {
                let copy = try Ledger(path: out, options: .init(readOnly: true))
                #expect(try copy.exportText() == (try ledger.exportText()))
                #expect(try await copy.digest() == (try ledger.digest()))
                #expect(try copy.head() == head)
            }
            #expect(try await Ledger.verify(path: out).isIntact)
        }
    }

    @Test("a key store of several mebibytes is copied byte for byte, a mebibyte at a time")
    func largeKeyStoreIsCopiedWhole() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("decline.jsonl")
            // Slots past the ones in use, as a write that failed before its commit leaves: 3.5 MiB of them, with
            // bytes that differ from one mebibyte to the next, so that a chunk copied twice or left out shows.
            let store = directory + "/ledger/" + KeyStore.fileName
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((0..<(7 << 19)).map { UInt8(truncatingIfNeeded: $0 / 4093) }))
            try handle.close()

            try await ledger.backup(to: directory + "/backup")
            let copied = try Data(contentsOf: URL(fileURLWithPath: directory + "/backup/" + KeyStore.fileName))
            #expect(copied == (try Data(contentsOf: URL(fileURLWithPath: store))))
            #expect(copied.count > 7 << 19)
        }
    }

    @Test("a backup leaves out the pages LMDB freed: after a rebuild, it is smaller than the ledger's pages in use")
    func compactsFreedPages() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("family-day.jsonl")
            try await ledger.backup(to: directory + "/before")
            // The rebuild writes every derived table anew and frees the old ones' pages.
            try await ledger.rebuildProjections()
            let used = try ledger.environment.usedSize
            try await ledger.backup(to: directory + "/after")

            let before = try Self.size(directory + "/before/data.mdb")
            let after = try Self.size(directory + "/after/data.mdb")
            #expect(after < used, "the copy (\(after) bytes) holds none of the \(used) bytes' free pages")
            // The same events and tables, compacted: within 10% of the copy made before the rebuild.
            #expect(after * 10 <= before * 11 && before * 10 <= after * 11, "\(before) before the rebuild, \(after) after")
            #expect(try Ledger(path: directory + "/after", options: .init(readOnly: true)).exportText() == (try ledger.exportText()))
        }
    }

    @Test("an existing DIR (a directory, empty or not, or a file) is refused with .storage, and left as it was")
    func existingDirectoryIsRefused() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("decline.jsonl")
            let fm = FileManager.default
            try fm.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: false)
            try fm.createDirectory(atPath: directory + "/full", withIntermediateDirectories: false)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: directory + "/full/note"))
            try Data("keep".utf8).write(to: URL(fileURLWithPath: directory + "/file"))
            for name in ["empty", "full", "file", "full/"] {
                let error = ledgerError { try ledger.backup(to: directory + "/" + name) }
                #expect(error?.kind == .storage)
                #expect(error?.message.contains("already exists") == true, "\(String(describing: error))")
            }
            #expect(try fm.contentsOfDirectory(atPath: directory + "/empty") == [])
            #expect(try fm.contentsOfDirectory(atPath: directory + "/full") == ["note"])
            #expect(try String(contentsOfFile: directory + "/file", encoding: .utf8) == "keep")
            #expect(try fm.contentsOfDirectory(atPath: directory).sorted() == ["empty", "file", "full", "ledger"])
        }
    }

    @Test("a DIR whose parent is missing is refused with .storage, and nothing is created")
    func missingParent() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("decline.jsonl")
            let error = ledgerError { try ledger.backup(to: directory + "/missing/backup") }
            #expect(error?.kind == .storage)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["ledger"])
        }
    }

    @Test("a ledger opened read-only is backed up, and its directory and data file are left as they were")
    func readOnlySourceIsUnchanged() async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.importFixture("family-day.jsonl")
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
            let names = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            let ledger = try Ledger(path: path, options: .init(readOnly: true))
            let head = try await ledger.backup(to: directory + "/backup")
            #expect(head == (try ledger.head()))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb")) == bytes)
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == names)
        }
    }

    @Test("appends go on during a backup: the backup verifies, and its export is a prefix of the ledger's")
    func appendsDuringBackup() async throws {
        try await withTemporaryDirectory { directory async throws in
            let ledger = try Ledger(path: directory + "/ledger", options: .init(durable: false))
            try await ledger.importFixture("family-day.jsonl")
            let start = try ledger.head()
            let more = try Self.permissionChanges(0..<400)

            async let appending: Void = {
                for batch in stride(from: 0, to: more.count, by: 10) {
                    try await ledger.append(Array(more[batch..<batch + 10]))
                }
            }()
            var heads: [LogHead] = []
            for index in 0..<3 {
                await heads.append(try ledger.backup(to: directory + "/backup-\(index)"))
            }
            try await appending

            let export = try ledger.exportText()
            #expect(try ledger.head().seq == start.seq + 400)
            for (index, head) in heads.enumerated() {
                let out = directory + "/backup-\(index)"
                #expect(head.seq >= start.seq)
                #expect(try await Ledger.verify(path: out).isIntact)
                let copied = try Ledger(path: out, options: .init(readOnly: true)).exportText()
                #expect(copied.split(separator: "\n").count == Int(head.seq))
                #expect(export.hasPrefix(copied), "backup \(index) (head seq \(head.seq)) is a prefix of the ledger's export")
            }
            #expect(heads.map(\.seq) == heads.map(\.seq).sorted())
        }
    }
}
