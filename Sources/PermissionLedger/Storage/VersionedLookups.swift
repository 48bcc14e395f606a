import Foundation
internal import LMDB
import PermissionModel

extension ReadTransaction {
    /// The latest version of `entity` in a versioned table at or before `seq`.
    func latest(_ db: Database, _ entity: consuming [UInt8], atMost seq: UInt64 = .max) throws -> (seq: UInt64, value: UnsafeRawBufferPointer)? {
        let cursor = try self.cursor(db)
        return try cursor.latest(entity, atMost: seq)
    }

    /// The stored event with event id `id`, whatever its `seq`.
    func event(_ tables: Tables, id: String) throws -> PermissionEvent? {
        guard let value = try get(tables.eventIDs, key: Array(id.utf8)) else { return nil }
        return try event(tables, seq: Keys.decodeSeq(value))
    }

    /// The stored event at `seq`, with its `seq`, `recordedAt` and `hash`; with its salt unless `salted` is false,
    /// and taken from the events point queries opened lately with `kept` (``decodeStoredEvent(_:seq:txn:tables:salted:kept:)``).
    func event(_ tables: Tables, seq: UInt64, salted: Bool = true, kept: Bool = false) throws -> PermissionEvent? {
        guard let value = try get(tables.events, key: Keys.seq(seq)) else { return nil }
        do {
            return try decodeStoredEvent(value, seq: seq, txn: self, tables: tables, salted: salted, kept: kept)
        } catch let error as EventRecord.DecodingError {
            throw LedgerError(.damaged, error.description, seq: seq)
        }
    }

    /// The header of the stored event at `seq` (see `EventRecord.decodeHeader`).
    func eventHeader(_ tables: Tables, seq: UInt64, id: Bool = true) throws -> EventRecord.Header? {
        guard let value = try get(tables.events, key: Keys.seq(seq)) else { return nil }
        do {
            return try decodeStoredHeader(value, id: id).header
        } catch let error as EventRecord.DecodingError {
            throw LedgerError(.damaged, error.description, seq: seq)
        }
    }
}

extension Cursor {
    /// The latest version of `entity` at or before `seq`.
    func latest(_ entity: consuming [UInt8], atMost seq: UInt64) throws -> (seq: UInt64, value: UnsafeRawBufferPointer)? {
        try latestAndFollowing(entity, atMost: seq).latest
    }

    /// The latest version of `entity` at or before `seq`, and the key of the first entry after `seq` in the
    /// table's order (a later version of `entity`, or a later entity's; `nil` at the end of the table): one
    /// seek and one step back.
    func latestAndFollowing(_ entity: consuming [UInt8], atMost seq: UInt64) throws
        -> (latest: (seq: UInt64, value: UnsafeRawBufferPointer)?, following: UnsafeRawBufferPointer?) {
        // The seek's key is made in the entity's own array, whose first `count` bytes stay the entity.
        let count = entity.count
        let key = Keys.versioned(entity, seq == .max ? .max : seq + 1)
        var following = try seek(atOrAfter: key)
        let entry: Entry?
        if seq == .max, let e = following, Keys.decodeSeq(e.key) == .max, e.key.count == count + 8 {
            entry = e
            following = try next()
        } else {
            entry = following != nil ? try previous() : try last()
        }
        guard let entry, entry.key.count == count + 8, entry.key.starts(with: key[0..<count]) else { return (nil, following?.key) }
        return ((Keys.decodeSeq(entry.key), entry.value), following?.key)
    }
}
