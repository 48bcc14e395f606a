import Foundation
internal import LMDB

/// Where a handle's token in the tables is not its token under the subject's lookup key (docs/STORAGE.md, "Handle
/// values"): the token the lookup key gives, mapped to the one the tables hold.
///
/// An erasure before a cut keeps the subject's lookup key, so a value erased before the cut and recorded again
/// after it is one handle, its rows under one token. An import has the erased event's token and the later value
/// but not the lookup key that linked them: the export carries the later event's tokens too, the import takes
/// them as given for the values new to the subject, and each whose token under the import's own lookup key
/// differs gets an alias, so that a lookup by value (a query, or an event appended later) finds the rows the
/// tokens name. No rows are ever under a token that has an alias: a query may look under the token first, and
/// read the alias only when it finds nothing.
///
/// Entries of the `handleValues` table, after the subject's key prefix (`subject ‖ 0x00`):
/// `0x03 ‖ token under the lookup key` (16 bytes) → the token the tables hold (16 bytes). They go with the
/// subject's handle values: an erasure deletes them, and after a cut writes again those its readable values need.
enum HandleAliases {
    static let kind: UInt8 = 3

    static func key(_ prefix: [UInt8], hashed: some Collection<UInt8>) -> [UInt8] {
        var key = prefix
        key.append(kind)
        key += hashed
        return key
    }

    /// The token the tables hold for the value whose token under `subject`'s lookup key is `hashed`: `hashed`
    /// itself unless an alias names another.
    static func resolve(_ hashed: [UInt8], subject: String, _ txn: ReadTransaction, _ tables: Tables) throws -> [UInt8] {
        try target(of: hashed, subject: subject, txn, tables) ?? hashed
    }

    /// The token an alias names for the value whose token under `subject`'s lookup key is `hashed`, if any.
    static func target(of hashed: some Collection<UInt8>, subject: String, _ txn: ReadTransaction, _ tables: Tables) throws -> [UInt8]? {
        guard let db = tables.handleValues, let target = try txn.get(db, key: key(Keys.subjectPrefix(subject), hashed: hashed)),
              target.count == DataKeys.tokenSize else { return nil }
        return Array(target)
    }

    /// Whether `subject` has an alias: a writer that finds none looks none up for it.
    static func any(subject: String, _ txn: ReadTransaction, _ tables: Tables) throws -> Bool {
        guard let db = tables.handleValues else { return false }
        let prefix = Keys.subjectPrefix(subject) + [kind]
        guard let found = try txn.cursor(db).seek(atOrAfter: prefix) else { return false }
        return found.key.starts(with: prefix)
    }

    /// Records, in `txn`, that the value whose token under `subject`'s lookup key is `hashed` is held as `token`;
    /// nothing when the two are the same. Returns whether it wrote an alias.
    @discardableResult
    static func put(hashed: [UInt8], token: [UInt8], subject: String, _ txn: WriteTransaction, _ tables: Tables) throws -> Bool {
        guard hashed != token, let db = tables.handleValues else { return false }
        try txn.put(db, key: key(Keys.subjectPrefix(subject), hashed: hashed), value: token)
        return true
    }
}
