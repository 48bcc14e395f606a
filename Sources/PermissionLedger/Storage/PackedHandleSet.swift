import Foundation
import PermissionModel

/// A subject's handle set as a query reads it: the rows of its `handleSets` records with every value in one
/// buffer, so that reading, merging and ordering them compares bytes, as LMDB compares keys, and makes no
/// string, no reference and no allocation per row (``HandleSets/packedRows(_:_:subjectPrefix:atMost:)``).
/// The rows a query answers with are made into ``HandleRow``s' parts at the end.
struct PackedHandleSet {
    /// One row: its handle's value is `values[valueStart ..< valueStart + valueCount]`.
    struct Row {
        var kind: CommunicationHandle.Kind
        /// The kind's place in the order of kinds (``CommunicationHandle/Kind/<(_:_:)``).
        var kindRank: UInt8
        var known: Bool
        var valueStart: Int32
        var valueCount: Int32
        var since: Timestamp
        var until: Timestamp?
        var source: HandleSource
    }

    /// Every row's value, one after the other.
    var values: [UInt8] = []

    /// Reads the rows of a stored record (``HandleSetRecord/readRows(_:into:)``), their values added to
    /// ``values``, and returns them in the record's order.
    mutating func read(_ record: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> [Row] {
        try HandleSetRecord.readRows(record, into: &self).rows
    }

    /// Adds a row of `handle`, with the rest of the row as given, and returns it.
    mutating func append(_ handle: CommunicationHandle, known: Bool, since: Timestamp, until: Timestamp?, source: HandleSource) -> Row {
        let start = Int32(values.count)
        values.append(contentsOf: handle.value.utf8)
        return Row(kind: handle.kind, kindRank: Self.rank(handle.kind), known: known, valueStart: start,
                   valueCount: Int32(values.count) - start, since: since, until: until, source: source)
    }

    /// Calls `body` with the value of `row`.
    func withValue<T>(of row: Row, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try values.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[Int(row.valueStart)..<Int(row.valueStart + row.valueCount)])) }
    }

    /// How the handle of `a` sorts against that of `b`, as handles order (kind, then value by code point), in
    /// one comparison: negative, zero or positive. `values` is ``values``.
    static func order(_ a: Row, _ b: Row, values: UnsafeRawBufferPointer) -> Int {
        if a.kindRank != b.kindRank { return a.kindRank < b.kindRank ? -1 : 1 }
        return compareBytes(
            UnsafeRawBufferPointer(rebasing: values[Int(a.valueStart)..<Int(a.valueStart + a.valueCount)]),
            UnsafeRawBufferPointer(rebasing: values[Int(b.valueStart)..<Int(b.valueStart + b.valueCount)]))
    }

    /// The place of `kind` in the order of kinds, by name: `custom`, `emailAddress`, `phoneNumber`.
    static func rank(_ kind: CommunicationHandle.Kind) -> UInt8 {
        switch kind {
        case .custom: 0
        case .emailAddress: 1
        case .phoneNumber: 2
        }
    }
}
