import Foundation
import LMDB
@_spi(StorageEngine) import PermissionLedger
@testable import PermissionLedger
import Testing

/// What `Ledger.init` checks of the data file before anything reads it through LMDB's map.
@Suite struct OpeningCheckTests {
    @Test("a data file cut short is refused by every open, as damage naming the data file, and left as it was")
    func cutShort() async throws {
        try await withClosedLedgerOfOneEvent { path in
            let dataFile = path + "/data.mdb"
            let bytes = try Data(contentsOf: URL(fileURLWithPath: dataFile))
            try bytes.prefix(3 * 4096).write(to: URL(fileURLWithPath: dataFile))
            for options in [Ledger.Options(readOnly: true), Ledger.Options(durable: false)] {
                let error = try #require(throws: LedgerError.self) { _ = try Ledger(path: path, options: options) }
                #expect(error.kind == .damaged)
                #expect(error.message.hasPrefix("\(dataFile): the data file's meta pages are damaged"), "\(error.message)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: dataFile)) == bytes.prefix(3 * 4096))
        }
    }

    @Test("a head event whose chain hash does not match its bytes: a writer is refused at its seq, a reader opens")
    func brokenHead() async throws {
        try await withClosedLedgerOfOneEvent { path in
            do {
                let environment = try Environment(path: path, options: .init(maxDatabases: 32, durable: false))
                let events = try environment.openDatabase("events", create: false)
                try environment.write { txn in
                    var value = [UInt8](try #require(try txn.get(events, key: Keys.seq(1))))
                    value[0] ^= 0x01
                    try txn.put(events, key: Keys.seq(1), value: value)
                }
            }
            let error = try #require(throws: LedgerError.self) { _ = try Ledger(path: path, options: .init(durable: false)) }
            #expect(error.kind == .damaged && error.seq == 1, "\(error)")
            #expect(error.message.contains("the head event's chain hash does not match its bytes"), "\(error.message)")
            _ = try Ledger(path: path, options: .init(readOnly: true))
        }
    }

    @Test("with checksPages, a writer is refused a data file whose log page says it is another page")
    func damagedPage() async throws {
        try await withClosedLedgerOfOneEvent { path in
            let dataFile = path + "/data.mdb"
            guard case .consistent = try PageWalk.check(dataFile: dataFile) else {
                Issue.record("the intact ledger's pages are consistent")
                return
            }
            // Every page after the meta pages names itself in its first 8 bytes: make the last one name another.
            var bytes = try Data(contentsOf: URL(fileURLWithPath: dataFile))
            let meta = try MetaPages(dataFile: dataFile)
            let last = Int(try #require(meta.newest).lastPage)
            bytes[last * 4096] ^= 0x40
            try bytes.write(to: URL(fileURLWithPath: dataFile))
            var options = Ledger.Options(durable: false)
            options.checksPages = true
            let error = try #require(throws: LedgerError.self) { _ = try Ledger(path: path, options: options) }
            #expect(error.kind == .damaged, "\(error)")
            #expect(error.message.contains("page \(last) says it is page"), "\(error.message)")
        }
    }
}
