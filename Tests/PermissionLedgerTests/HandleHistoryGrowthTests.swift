import Foundation
import LMDB
@testable import PermissionLedger
import Testing

/// What a ledger stores grows with the number of handle changes, however many handles one subject has:
/// each change writes its own rows and nothing that holds the subject's whole set again. Measured in bytes
/// stored (keys and values of every derived table), not in time.
@Suite struct HandleHistoryGrowthTests {
    /// The bytes of every key and value the ledger's derived tables hold.
    static func derivedBytes(_ path: String) throws -> Int {
        let environment = try Environment(path: path, options: .init(maxDatabases: 32, readOnly: true))
        var total = 0
        for table in StorageTable.derived {
            let db = try environment.openDatabase(table.rawValue, create: false)
            try environment.read { txn in
                let cursor = try txn.cursor(db)
                var entry = try cursor.first()
                while let e = entry {
                    total += e.key.count + e.value.count
                    entry = try cursor.next()
                }
            }
        }
        return total
    }

    /// One subject observed `events` times, each time with `perEvent` handles it never had and the
    /// `perEvent` of the previous observation again (now not known): `2 × perEvent` changes an event but the
    /// first. Returns the derived bytes stored for each handle change.
    static func bytesPerChange(events: Int, perEvent: Int) async throws -> Double {
        try await withTemporaryDirectory { directory async throws in
            let path = directory + "/ledger"
            var changes = 0
            do {
                let ledger = try Ledger(path: path, options: .init(mapSize: 64 << 20, durable: false))
                var lines: [String] = []
                for n in 0..<events {
                    let clock = String(format: "10:%02d:%02d", n / 60, n % 60)
                    let fresh = (0..<perEvent).map { ("friend-\(n)-\($0)", "custom") }
                    let again = n == 0 ? [] : (0..<perEvent).map { ("friend-\(n - 1)-\($0)", "custom") }
                    lines.append(JSONLine.observed("obs-\(n)", subject: "kid-busy", checked: fresh + again, known: fresh, at: clock, recorded: clock))
                    changes += fresh.count + again.count
                }
                try ledger.appendSynchronously(try lines.map { try decodeEvent($0) })
                #expect(try ledger.read { try $0.knownHandles(subject: "kid-busy") }.count == perEvent)
            }
            return Double(try derivedBytes(path)) / Double(changes)
        }
    }

    @Test("one subject's derived bytes per handle change stay under the same bound as its set grows sixtyfourfold")
    func storedBytesGrowLinearlyWithHandleChanges() async throws {
        let small = try await Self.bytesPerChange(events: 4, perEvent: 100)
        var larger: [Int: Double] = [:]
        for events in [16, 64, 256] { larger[events] = try await Self.bytesPerChange(events: events, perEvent: 100) }
        // A handle row and its key (about 60 bytes here), the change in the subject's `handleSets` record
        // (about 35), and the first change's `handleSubjects` entry; whole sets add at most two rows a change
        // however large the set grows, a share that varies with where the last whole set fell.
        #expect(small < 150, "\(small) bytes per change")
        for (events, bytes) in larger {
            #expect(bytes <= small * 1.5, "\(bytes) bytes per change with \(events / 4) times the changes, \(small) with 1")
        }
    }
}
