import Foundation
@testable import PermissionLedger
import Testing

/// The signer never signs two checkpoints of one size with different roots (docs/DECISIONS.md, "One size, one
/// root"): it proves each new checkpoint of one history with the largest it signed, recorded beside the key.
@Suite struct CheckpointSignerTests {
    @Test func aKeySignsGrowingAndEarlierTreesOfOneLedger() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded("signer", mapSize: 1 << 20, durable: false))
            try await ledger.importFixture("family-day.jsonl")
            let signer = try CheckpointSigner.create(keyFile: directory + "/signing.key", origin: "example.com/one")
            let head = try ledger.checkpoint(signer: signer)
            #expect(head.checkpoint.size == 1200)
            let earlier = try ledger.checkpoint(asOf: .seq(700), signer: signer)
            #expect(earlier.checkpoint.size == 700)
            #expect(try ledger.checkpoint(signer: signer).checkpoint == head.checkpoint)
            // The record holds the largest checkpoint signed, and the key file and record are the owner's alone.
            let record = try String(contentsOfFile: signer.recordFile, encoding: .utf8)
            #expect(record == head.serialized)
            for file in [signer.keyFile, signer.recordFile] {
                #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
            }
        }
    }

    @Test func aKeyRefusesALedgerWithAnotherHistoryOfTheSameSize() async throws {
        try await withTemporaryDirectory { directory in
            let first = try Ledger(path: directory + "/first", options: .seeded("first", mapSize: 1 << 20, durable: false))
            let second = try Ledger(path: directory + "/second", options: .seeded("second", mapSize: 1 << 20, durable: false))
            try await first.importFixture("decline.jsonl")
            try await second.importFixture("decline.jsonl")
            let signer = try CheckpointSigner.create(keyFile: directory + "/signing.key", origin: "example.com/one")
            let signed = try first.checkpoint(signer: signer)
            // The same events under other salts: another root for the same size.
            #expect(try second.read { try $0.treeHead().root } != signed.checkpoint.root)
            let error = try #require(throws: LedgerError.self) { try second.checkpoint(signer: signer) }
            #expect(error.kind == .damaged && error.message.contains("refusing to sign"), "\(error)")
            // Nor a size the record's tree does not contain: a ledger restored from an older backup.
            let error2 = try #require(throws: LedgerError.self) { try second.checkpoint(asOf: .seq(1), signer: signer) }
            #expect(error2.message.contains("refusing to sign"), "\(error2)")
            #expect(try String(contentsOfFile: signer.recordFile, encoding: .utf8) == signed.serialized)
        }
    }

    @Test func aLedgerShorterThanTheLargestSignedIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let long = try Ledger(path: directory + "/long", options: .seeded("long", mapSize: 1 << 20, durable: false))
            try await long.importFixture("family-day.jsonl")
            let signer = try CheckpointSigner.create(keyFile: directory + "/signing.key", origin: "example.com/one")
            _ = try long.checkpoint(signer: signer)
            let short = try Ledger(path: directory + "/short", options: .seeded("long", mapSize: 1 << 20, durable: false))
            try await short.importFixture("decline.jsonl")
            let error = try #require(throws: LedgerError.self) { try short.checkpoint(signer: signer) }
            #expect(error.message.contains("signed a checkpoint of 1200 events"), "\(error)")
        }
    }

    @Test func aKeyFileThatIsNotOneIsRefusedWithoutShowingIt() throws {
        try withTemporaryDirectorySync { directory in
            let path = directory + "/signing.key"
            #expect(throws: LedgerError.self) { try CheckpointSigner(keyFile: path) }
            _ = try CheckpointSigner.create(keyFile: path, origin: "example.com/one")
            #expect(throws: LedgerError.self) { try CheckpointSigner.create(keyFile: path, origin: "example.com/one") }
            chmod(path, 0o644)
            let error = try #require(throws: LedgerError.self) { try CheckpointSigner(keyFile: path) }
            #expect(error.kind == .keyUnavailable && error.message.contains("chmod 600"))
            let other = directory + "/other.key"
            FileManager.default.createFile(atPath: other, contents: Data("PRIVATE+KEY+x+00000000+secretmaterial\n".utf8), attributes: [.posixPermissions: 0o600])
            let bad = try #require(throws: LedgerError.self) { try CheckpointSigner(keyFile: other) }
            #expect(!bad.message.contains("secretmaterial"))
        }
    }
}

private func withTemporaryDirectorySync(_ body: (String) throws -> Void) throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("CheckpointSignerTests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: url) }
    try body(url.path)
}
