import Foundation
import LMDB
@_spi(StorageEngine) import PermissionLedger

/// The floor set by the disk and LMDB: the ledger's stored bytes for each event (chain hash followed by the
/// event record, exactly as the ledger stores them) appended under sequential keys with `MDB_APPEND`, one
/// durable transaction per batch, and nothing else: no rules, no indexes, no projections.
final class RawLMDBLog {
    let path: String
    private let environment: Environment
    private let events: Database
    private var seq: UInt64 = 0
    private var previous = ChainHash.genesis

    init(path: String) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        environment = try Environment(path: path, options: .init(mapSize: 16 << 30, durable: true))
        events = try environment.openDatabase("events", create: true)
    }

    /// The values to store for `batch`, made before the clock starts: what the ledger would store.
    func encode(_ batch: [PermissionEvent]) -> [[UInt8]] {
        batch.map { event in
            let record = EventRecord.encode(event, recordedAt: event.recordedAt!)
            previous = chainHash(previous: previous, record: record)
            return previous.bytes + record
        }
    }

    /// The chain hash after the last encoded event.
    var head: ChainHash { previous }

    /// Appends encoded values in one durable transaction.
    func append(_ values: [[UInt8]]) throws {
        try environment.write { txn in
            for value in values {
                seq += 1
                try txn.put(events, key: withUnsafeBytes(of: seq.bigEndian, Array.init), value: value, flags: .append)
            }
        }
    }

    var bytesOnDisk: Int { fileSize(path + "/data.mdb") }
}

/// The size of a file in bytes (0 when it is missing).
func fileSize(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}
