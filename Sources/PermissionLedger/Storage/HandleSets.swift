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

/// Where a subject's `handleSets` records stand: the changes recorded since its latest whole set, and how many
/// rows that set holds.
struct HandleSetState {
    var changesSinceWholeSet = 0
    var wholeSetCount = 0
}

/// Reading a subject's handle set from its `handleSets` records (``HandleSetRecord``).
enum HandleSets {
    /// Every handle's latest row for the subject at or before `seq`, ordered by handle: the latest whole set at
    /// or before `seq`, with the changes recorded after it merged in.
    ///
    /// One seek and a step back for each record read: a whole set, and fewer changes than it holds rows (or
    /// than ``HandleSetRecord/leastChangesBetweenWholeSets``), each record stored in one place. The cost
    /// grows with the subject's set, not with the rest of the log nor with how often a handle changed.
    static func sortedRows(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> [HandleRow] {
        let (whole, changes) = try records(txn, tables, subjectPrefix: prefix, atMost: seq)
        return merging(try whole.map { try HandleSetRecord(decoding: $0).rows } ?? [], changeRecords: try changes.map { try HandleSetRecord(decoding: $0).rows })
    }

    /// ``sortedRows(_:_:subjectPrefix:atMost:)`` packed (``PackedHandleSet``): the rows of a query, compared as bytes.
    static func packedRows(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> (set: PackedHandleSet, rows: [PackedHandleSet.Row]) {
        let (whole, changes) = try records(txn, tables, subjectPrefix: prefix, atMost: seq)
        var set = PackedHandleSet()
        let wholeRows = try whole.map { try set.read($0) } ?? []
        let changeRows = try changes.map { try set.read($0) }
        let rows = set.values.withUnsafeBytes { values in
            merging(wholeRows, changeRecords: changeRows) { PackedHandleSet.order($0, $1, values: values) }
        }
        return (set, rows)
    }

    /// The records that make the subject's set at `seq`: its latest whole set at or before `seq` (`nil` when there
    /// is none), and the change records after it, in log order. The bytes are the transaction's.
    private static func records(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> (whole: UnsafeRawBufferPointer?, changes: [UnsafeRawBufferPointer]) {
        let cursor = try txn.cursor(tables.handleSets)
        var entry = try latestRecord(cursor, subjectPrefix: prefix, atMost: seq)
        var changes: [UnsafeRawBufferPointer] = []  // the latest first
        while let e = entry, isRecord(e.key, of: prefix) {
            if try HandleSetRecord.header(e.value).isWhole { return (e.value, changes.reversed()) }
            changes.append(e.value)
            entry = try cursor.previous()
        }
        return (nil, changes.reversed())
    }

    /// The set that a whole set and the change records after it make (`records` in log order, each ordered
    /// by handle): each handle's latest row, ordered by handle.
    static func merging(_ whole: [HandleRow], changeRecords records: [[HandleRow]]) -> [HandleRow] {
        merging(whole, changeRecords: records, order: HandleRow.order)
    }

    /// ``merging(_:changeRecords:)`` of any rows, ordered by `order`.
    static func merging<Row>(_ whole: [Row], changeRecords records: [[Row]], order: (Row, Row) -> Int) -> [Row] {
        switch records.count {
        case 0: return whole
        case 1: return merging(whole, sortedChanges: records[0], order: order)
        default: return merging(whole, sortedChanges: latestOfEachHandle(Array(records.joined()), order: order), order: order)
        }
    }

    /// The changes recorded since the subject's latest whole set, and that set's size: what decides whether
    /// the next event records the whole set (``HandleSetRecord/recordsWholeSet(changesSinceWholeSet:wholeSetCount:)``).
    /// Reads only the records' headers.
    static func state(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8]) throws -> HandleSetState {
        let cursor = try txn.cursor(tables.handleSets)
        var entry = try latestRecord(cursor, subjectPrefix: prefix, atMost: .max)
        var state = HandleSetState()
        while let e = entry, isRecord(e.key, of: prefix) {
            let header = try HandleSetRecord.header(e.value)
            if header.isWhole {
                state.wholeSetCount = header.count
                break
            }
            state.changesSinceWholeSet += header.count
            entry = try cursor.previous()
        }
        return state
    }

    /// The record an event writes for one subject whose records stand at `state`, given the handle rows the event
    /// changed in the order written; advances `state`. `setBefore` gives the subject's set before the event, and is
    /// called only when the policy (``HandleSetRecord/recordsWholeSet(changesSinceWholeSet:wholeSetCount:)``)
    /// asks for the whole set. Both stores decide through it, so that a rebuild writes what an append wrote.
    static func record(changed: [HandleRow], state: inout HandleSetState, setBefore: () throws -> [HandleRow]) rethrows -> HandleSetRecord {
        let rows = latestOfEachHandle(changed)
        state.changesSinceWholeSet += rows.count
        guard HandleSetRecord.recordsWholeSet(changesSinceWholeSet: state.changesSinceWholeSet, wholeSetCount: state.wholeSetCount) else {
            return .changes(rows)
        }
        let whole = merging(try setBefore(), sortedChanges: rows)
        state = HandleSetState(changesSinceWholeSet: 0, wholeSetCount: whole.count)
        return .whole(whole)
    }

    /// `rows` with `changes` in place of the rows of the same handles, both ordered by handle, each handle once.
    static func merging(_ rows: [HandleRow], sortedChanges changes: [HandleRow]) -> [HandleRow] {
        merging(rows, sortedChanges: changes, order: HandleRow.order)
    }

    /// ``merging(_:sortedChanges:)`` of any rows, ordered by `order`.
    static func merging<Row>(_ rows: [Row], sortedChanges changes: [Row], order: (Row, Row) -> Int) -> [Row] {
        guard !rows.isEmpty else { return changes }
        var merged: [Row] = []
        merged.reserveCapacity(rows.count + changes.count)
        var c = 0
        for row in rows {
            var comparison = -1
            while c < changes.count {
                comparison = order(changes[c], row)
                guard comparison < 0 else { break }
                merged.append(changes[c])
                c += 1
            }
            if c < changes.count, comparison == 0 {
                merged.append(changes[c])
                c += 1
            } else {
                merged.append(row)
            }
        }
        merged.append(contentsOf: changes[c...])
        return merged
    }

    /// Rows in the order they happened, reduced to each handle's last, ordered by handle.
    static func latestOfEachHandle(_ rows: [HandleRow]) -> [HandleRow] {
        latestOfEachHandle(rows, order: HandleRow.order)
    }

    /// ``latestOfEachHandle(_:)`` of any rows, ordered by `order`.
    static func latestOfEachHandle<Row>(_ rows: [Row], order: (Row, Row) -> Int) -> [Row] {
        // Usually an event's rows, in the order of the event's lists: often ordered already.
        if zip(rows, rows.dropFirst()).allSatisfy({ order($0, $1) < 0 }) { return rows }
        // Compared in place: a copy of each row for each comparison cost more than the comparisons.
        let sorted = rows.withUnsafeBufferPointer { rows in
            rows.indices.sorted { a, b in
                let comparison = order(rows[a], rows[b])
                return comparison < 0 || (comparison == 0 && a < b)
            }
        }
        var result: [Row] = []
        result.reserveCapacity(rows.count)
        for (n, index) in sorted.enumerated() where n + 1 == sorted.count || order(rows[sorted[n + 1]], rows[index]) != 0 {
            result.append(rows[index])
        }
        return result
    }

    /// The subject's latest record at or before `seq`, where `cursor` then stands (or an entry that is not
    /// the subject's, or `nil`).
    private static func latestRecord(_ cursor: Cursor, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> Cursor.Entry? {
        // No event has the seq UInt64.max: seeking to the one after `seq` then stepping back finds the latest.
        let following = try cursor.seek(atOrAfter: Keys.versioned(prefix, min(seq, .max - 1) + 1))
        return following != nil ? try cursor.previous() : try cursor.last()
    }

    private static func isRecord(_ key: UnsafeRawBufferPointer, of prefix: [UInt8]) -> Bool {
        key.count == prefix.count + 8 && key.starts(with: prefix)
    }
}
