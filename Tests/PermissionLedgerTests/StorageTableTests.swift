import Foundation
@testable import PermissionLedger
import Testing

/// `StorageTable` is the one list of a ledger's LMDB databases; their names are part of the storage format
/// (docs/STORAGE.md), so they never change.
@Suite struct StorageTableTests {
    @Test("the tables' names are the storage format's, byte for byte, in the order a ledger opens them")
    func namesAreTheFormats() {
        #expect(StorageTable.allCases.map(\.rawValue) == [
            "meta", "events", "eventIDs", "byRecordedAt", "subjects", "questionsByAsked", "questions", "handles",
            "permissions", "subjectEvents", "handleSubjects", "handleSets", "expiries", "keys", "handleValues", "tree",
            "treeTop",
        ])
    }

    @Test("every table but meta, the log, the keys' slots and the sealed handle values is derived: rebuilt from the log and compared by verify")
    func derivedTables() {
        #expect(StorageTable.derived == StorageTable.allCases.filter { $0 != .meta && $0 != .events && $0 != .keys && $0 != .handleValues })
    }

    @Test("a new ledger's data file holds exactly these tables, each read back by its name")
    func aNewLedgerHoldsTheseTables() async throws {
        try await withClosedLedgerOfOneEvent { path async throws in
            let names = try Ledger.tableDigests(path: path).map(\.table)
            #expect(names.sorted() == StorageTable.allCases.map(\.rawValue).sorted())
        }
    }
}
