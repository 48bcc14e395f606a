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

/// Reading a subject's handle set from the versions in `handles`.
enum HandleSets {
    /// How many versions of one handle a walk steps over one by one before it seeks instead.
    static let versionsStepped = 8

    /// Every handle's latest row for the subject at or before `seq`, ordered by handle: one walk of the
    /// subject's keys in `handles`.
    ///
    /// A handle's versions are contiguous and in seq order: the walk keeps the last one at or before `seq` and
    /// steps over the others while there are few; with more, it seeks to the point and past the handle. The
    /// cost grows with the subject's handles, not with how often each changed, nor with the rest of the log.
    /// Keys order as handles do but for values over 200 bytes (keyed by their hash, after
    /// every plain value of their kind): those rows alone are sorted and merged in.
    static func sortedRows(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> [HandleRow] {
        let cursor = try txn.cursor(tables.handles)
        var rows: [HandleRow] = []
        var hashed: [HandleRow] = []
        var entry = try cursor.seek(atOrAfter: prefix)
        while let first = entry, first.key.count > prefix.count + 8, first.key.starts(with: prefix) {
            let found = try latestVersion(cursor, from: first, atMost: seq)
            if let latest = found.latest {
                let row = try HandleRow(decoding: latest)
                // `subject NUL kind` then 0xFF and the hash: 0xFF starts no UTF-8 value.
                if first.key[prefix.count + 1] == 0xFF { hashed.append(row) } else { rows.append(row) }
            }
            entry = found.following
        }
        guard !hashed.isEmpty else { return rows }
        hashed.sort { $0.handle < $1.handle }
        var merged: [HandleRow] = []
        merged.reserveCapacity(rows.count + hashed.count)
        var h = 0
        for row in rows {
            while h < hashed.count, hashed[h].handle < row.handle {
                merged.append(hashed[h])
                h += 1
            }
            merged.append(row)
        }
        merged.append(contentsOf: hashed[h...])
        return merged
    }

    /// The value of the latest version at or before `seq` of the handle whose first version is `first` (where
    /// `cursor` stands), and the entry that follows the handle's versions (`nil` at the end of the table).
    private static func latestVersion(_ cursor: Cursor, from first: Cursor.Entry, atMost seq: UInt64) throws
        -> (latest: UnsafeRawBufferPointer?, following: Cursor.Entry?) {
        let entityLength = first.key.count - 8
        func isVersion(_ key: UnsafeRawBufferPointer) -> Bool {
            key.count == first.key.count && memcmp(key.baseAddress!, first.key.baseAddress!, entityLength) == 0
        }
        var latest: UnsafeRawBufferPointer?
        var entry: Cursor.Entry? = first
        var stepped = 0
        while let e = entry, isVersion(e.key) {
            if stepped == versionsStepped {
                // A long history: one seek to the point rather than a step for each version.
                if Keys.decodeSeq(e.key) <= seq { latest = try cursor.latest(Array(first.key[0..<entityLength]), atMost: seq)?.value }
                break
            }
            if Keys.decodeSeq(e.key) <= seq { latest = e.value }
            stepped += 1
            entry = try cursor.next()
        }
        guard let e = entry, isVersion(e.key) else { return (latest, entry) }
        // More versions remain: seek past the last seq a version can have.
        var key = Array(first.key[0..<entityLength])
        key.appendSeq(.max)
        var following = try cursor.seek(atOrAfter: key)
        if let f = following, isVersion(f.key) { following = try cursor.next() }
        return (latest, following)
    }
}
