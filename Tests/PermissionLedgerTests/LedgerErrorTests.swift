import Foundation
import LMDB
@testable import PermissionLedger
import Testing

/// What a ledger error offers to do about it is a value (`LedgerError.Remedy`), worded in terms of this API:
/// the engine names no command of the tool.
@Suite struct LedgerErrorTests {
    @Test("a ledger whose indexes an older PermissionLedger made offers a rebuild through the API")
    func olderIndexesOfferARebuild() async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            // The projections version of a ledger made by an older build (the environment closed again after).
            do {
                let environment = try Environment(path: path, options: .init(maxDatabases: 32))
                let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: false)
                try environment.write { txn in
                    try txn.put(meta, key: Array("projections".utf8), value: [Ledger.projectionsVersion - 1])
                }
            }

            let error = try #require(ledgerError { _ = try Ledger(path: path, options: .init(readOnly: true)) })
            #expect(error.kind == .notALedger)
            #expect(error.remedy == .rebuildProjections(path: path))
            #expect(error.message == "\(path): the ledger's indexes were made by an older PermissionLedger")
            #expect(error.description == """
                \(path): the ledger's indexes were made by an older PermissionLedger; rebuild them once with \
                Ledger.rebuildProjections(path:) (the log itself is unchanged)
                """)
            #expect(!error.description.contains("permission-ledger"))
        }
    }

    @Test("a disk that failed a read or a write offers a full check through the API")
    func diskFailureOffersAVerify() {
        let error = LedgerError.storage(LMDBError.ioError, path: "/nowhere/ledger")
        #expect(error.kind == .storage)
        #expect(error.remedy == .verify(path: "/nowhere/ledger"))
        #expect(error.description.hasSuffix("the disk failed a read or a write; check the ledger with Ledger.verify(path:)"))
        #expect(!error.description.contains("permission-ledger"))
    }

    @Test("a full disk offers no remedy beyond the message: nothing stored was touched")
    func fullDiskOffersNoRemedy() {
        let error = LedgerError.storage(LMDBError.noSpace, path: "/nowhere/ledger")
        #expect(error.remedy == nil)
        #expect(error.description.contains("no space left on the device"))
    }

    @Test("the remedy follows the message and the seq leads, in the words the reporting program gives")
    func describedInAnotherProgramsWords() {
        let error = LedgerError(.storage, "it broke", seq: 7, remedy: .verify(path: "p"))
        #expect(error.described(remedy: "run the check") == "seq 7: it broke; run the check")
        #expect(error.described(remedy: nil) == "seq 7: it broke")
        #expect(LedgerError(.storage, "it broke").description == "it broke")
    }
}
