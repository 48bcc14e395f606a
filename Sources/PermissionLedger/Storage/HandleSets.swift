import Foundation
internal import LMDB
import PermissionModel

/// A byte-string dictionary key hashed in one pass (an array of bytes hashes element by element).
struct ByteKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Reading a subject's handle set through its checkpoints and change log.
enum HandleSets {
    /// Every handle's latest row for the subject at or before `seq`, ordered by handle: the latest checkpoint,
    /// then the changes after it.
    ///
    /// A checkpoint holds its rows in key order, which is the handles' order but for values over 200
    /// bytes (keyed by their hash); at most a checkpoint interval of changes is then merged in by binary
    /// search. No dictionary, no keys rebuilt from handles, no sort in the usual case.
    static func sortedRows(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> [HandleRow] {
        var rows: [HandleRow] = []
        var from: UInt64 = 1
        if let checkpoint = try txn.cursor(tables.handleCheckpoints).latest(prefix, atMost: seq) {
            rows = try HandleCheckpoint.decodeRows(checkpoint.value)
            from = checkpoint.seq + 1
            if !zip(rows, rows.dropFirst()).allSatisfy({ $0.handle < $1.handle }) { rows.sort { $0.handle < $1.handle } }
        }
        guard from <= seq else { return rows }
        let cursor = try txn.cursor(tables.handleChanges)
        var entry = try cursor.seek(atOrAfter: Keys.versioned(prefix, from))
        while let e = entry, e.key.count > prefix.count + 8, e.key.starts(with: prefix) {
            let changeSeq = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key[prefix.count..<(prefix.count + 8)]))
            if changeSeq > seq { break }
            let row = try HandleRow(decoding: e.value)
            var low = 0, high = rows.count
            while low < high {
                let middle = (low + high) / 2
                if rows[middle].handle < row.handle { low = middle + 1 } else { high = middle }
            }
            if low < rows.count, rows[low].handle == row.handle { rows[low] = row } else { rows.insert(row, at: low) }
            entry = try cursor.next()
        }
        return rows
    }

    /// How many changes of the subject's handles follow its latest checkpoint.
    static func changesSinceCheckpoint(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8]) throws -> Int {
        let from = try txn.cursor(tables.handleCheckpoints).latest(prefix, atMost: .max).map { $0.seq + 1 } ?? 1
        let cursor = try txn.cursor(tables.handleChanges)
        var count = 0
        var entry = try cursor.seek(atOrAfter: Keys.versioned(prefix, from))
        while let e = entry, e.key.count > prefix.count + 8, e.key.starts(with: prefix) {
            count += 1
            entry = try cursor.next()
        }
        return count
    }
}
