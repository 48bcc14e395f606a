internal import Crypto
import Foundation
import PermissionModel

/// A subject's whole handle set at one seq: every handle's latest row, ordered by key. Written every
/// ``interval`` handle changes of the subject, so that the set as of any point is one checkpoint plus
/// at most that many changes away.
enum HandleCheckpoint {
    static let interval = 32

    static func encode(_ rows: [(key: ByteKey, row: HandleRow)]) -> [UInt8] {
        encode(inKeyOrder: rows.sorted(by: { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }).map(\.row))
    }

    /// The same bytes as ``encode(_:)``, from rows ordered by handle (``HandleSets/sortedRows(_:_:subjectPrefix:atMost:)``).
    /// Handle order is key order unless a value is over 200 bytes (keyed by its hash): only then are keys made and sorted.
    static func encode(sortedRows rows: [HandleRow]) -> [UInt8] {
        guard rows.allSatisfy({ $0.handle.value.utf8.count <= Keys.longestPlainHandle }) else {
            return encode(rows.map { (ByteKey(Keys.handleOnly($0.handle)), $0) })
        }
        return encode(inKeyOrder: rows)
    }

    private static func encode(inKeyOrder rows: [HandleRow]) -> [UInt8] {
        var w = RecordWriter(capacity: 64 * rows.count + 8)
        w.byte(1)
        w.unsigned(UInt64(rows.count))
        for row in rows {
            let bytes = row.encoded()
            w.unsigned(UInt64(bytes.count))
            w.bytes.append(contentsOf: bytes)
        }
        return w.bytes
    }

    /// The rows in the order they are stored: by key.
    static func decodeRows(_ bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> [HandleRow] {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown handle checkpoint version") }
        let count = try r.count()
        var rows: [HandleRow] = []
        rows.reserveCapacity(count)
        for _ in 0..<count { rows.append(try HandleRow(decoding: try r.raw(try r.count()))) }
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in handle checkpoint") }
        return rows
    }
}
