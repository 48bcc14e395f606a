internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// Iterates the raw log inside any transaction.
enum StoredLog {
    /// Calls `body` with each stored event (with its `seq`, without `hash`), its stored record and its chain hash,
    /// after checking the record against the hash chain: damage is reported as damage, before any rule sees it.
    static func forEach(_ txn: ReadTransaction, _ tables: Tables, _ body: (PermissionEvent, [UInt8], ChainHash) throws -> Void) throws {
        let cursor = try txn.cursor(tables.events)
        var entry = try cursor.first()
        var previous = ChainHash.genesis
        while let e = entry {
            let seq = Keys.decodeSeq(e.key)
            guard e.value.count > 32 else { throw LedgerError(.damaged, "the stored event is truncated", seq: seq) }
            let record = [UInt8](copying: UnsafeRawBufferPointer(rebasing: e.value[32...]))
            let hash: ChainHash
            do {
                hash = try storedChainHash(record, previous: previous)
            } catch {
                throw LedgerError(.damaged, "\(error)", seq: seq)
            }
            guard hash.bytes.hasSameBytes(as: UnsafeRawBufferPointer(rebasing: e.value[0..<32])) else {
                throw LedgerError(.damaged, "the chain hash does not match the event's bytes", seq: seq)
            }
            previous = hash
            var event: PermissionEvent
            do {
                event = try replayedEvent(record)
            } catch {
                throw LedgerError(.damaged, "\(error)", seq: seq)
            }
            event.seq = seq
            try body(event, record, hash)
            entry = try cursor.next()
        }
    }
}
