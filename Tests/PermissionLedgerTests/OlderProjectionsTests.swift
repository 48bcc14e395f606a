import Foundation
import LMDB
@testable import PermissionLedger
import Testing

/// A ledger whose derived tables an older build made (docs/STORAGE.md, "Versioning rules", rule 4): version 4
/// kept each subject's handle changes and whole handle sets (`handleChanges`, `handleCheckpoints`) beside the
/// tables this build keeps, and a ledger that went through version 2 may still hold `subjectHandles`.
@Suite struct OlderProjectionsTests {
    static let retired = ["subjectHandles", "handleChanges", "handleCheckpoints"]

    /// Turns the closed ledger at `path` into one of projections version 4: the retired tables hold rows
    /// (enough for pages of their own), and the meta table says 4.
    static func makeVersion4(_ path: String) throws {
        let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
        let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: false)
        let tables = try retired.map { try environment.openDatabase($0, create: true) }
        try environment.write { txn in
            for table in tables {
                for n in 0..<300 {
                    try txn.put(table, key: Array("kid-ben\0".utf8) + withUnsafeBytes(of: UInt64(n).bigEndian, Array.init),
                                value: [UInt8](repeating: 7, count: 100))
                }
            }
            try txn.put(meta, key: Array("projections".utf8), value: [4])
        }
    }

    static func tableNames(_ path: String) throws -> [String] {
        try Ledger.tableDigests(path: path).map(\.table).sorted()
    }

    @Test("a version 4 ledger: read-only opens ask for a rebuild; opening it for writing or rebuilding it drops the retired tables", arguments: [false, true])
    func version4IsRebuiltWithoutItsRetiredTables(byRebuildCommand: Bool) async throws {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            let (digest, known): (String, [KnownHandle])
            do {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                try await ledger.importFixture("time-limited.jsonl")
                (digest, known) = try ledger.read { (try $0.digest(), try $0.knownHandles(subject: "kid-ben")) }
                #expect(!known.isEmpty)
            }
            try Self.makeVersion4(path)
            #expect(Set(Self.retired).isSubset(of: try Self.tableNames(path)))

            let error = try #require(ledgerError { _ = try Ledger(path: path, options: .init(readOnly: true)) })
            #expect(error.kind == .notALedger && error.remedy == .rebuildProjections(path: path))
            let verifyError = try #require(ledgerError { _ = try Ledger.verify(path: path) })
            #expect(verifyError.remedy == .rebuildProjections(path: path), "verify says what to do too")

            if byRebuildCommand {
                try await Ledger.rebuildProjections(path: path)
            } else {
                let ledger = try Ledger(path: path, options: .init(durable: false))
                #expect(ledger.rebuiltWhenOpened)
            }
            #expect(try Self.tableNames(path) == StorageTable.allCases.map(\.rawValue).sorted(), "the retired tables are gone, pages and all")
            let ledger = try Ledger(path: path, options: .init(readOnly: true))
            #expect(!ledger.rebuiltWhenOpened)
            #expect(try await ledger.verify().isIntact)
            #expect(try ledger.read { (try $0.digest(), try $0.knownHandles(subject: "kid-ben")) } == (digest, known))
        }
    }
}
