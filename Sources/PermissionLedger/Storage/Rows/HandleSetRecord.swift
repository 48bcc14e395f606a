import Foundation
import PermissionModel

/// A value of the `handleSets` table: what one event changed of one subject's handle set, or the subject's
/// whole set after that event. Rows are ordered by handle (kind, then value by code point), each handle once.
///
/// Layout: a byte, 1 for a whole set or 2 for changes; the number of rows (a varint); the rows. Each row is
/// written as its difference from the row before it (the first from an empty row), since neighbours in handle
/// order share most of their value, and the rows of one event their time and source:
///
/// - a flags byte: bit 0 known, bit 1 an `until`, bits 2 and 3 the source (1 a question, 2 an observation);
/// - the handle: its kind's code, the number of bytes its value shares with the previous row's value (0 when
///   the kinds differ), then the rest of the value (a varint length and the bytes);
/// - `since`, in microseconds, less the previous row's (zigzag varint, wrapping);
/// - when there is one, `until` less `since` (zigzag varint, wrapping);
/// - the source: a question's 16-byte id, or an observation's seq less the previous observation's in the
///   record (zigzag varint, wrapping).
///
/// A record is refused as damaged (``EventRecord/DecodingError``) when a row is out of order or repeats a
/// handle, a code or length is out of range, a value is not UTF-8, or bytes trail.
enum HandleSetRecord {
    case whole([HandleRow])
    case changes([HandleRow])

    /// The fewest changes the set records since the latest whole set before another whole set is written.
    static let leastChangesBetweenWholeSets = 32

    /// Whether an event that brings the changes recorded since the subject's latest whole set to
    /// `changesSinceWholeSet` records the whole set rather than its changes.
    ///
    /// A whole set follows at least as many changes as the previous whole set held rows (and at least
    /// ``leastChangesBetweenWholeSets``): the whole sets together hold at most twice as many rows as there
    /// were changes, whatever the size of the set, so storage grows linearly with the changes; and the set as
    /// of any point is one whole set and fewer changes than it holds rows (or than that least number) away.
    static func recordsWholeSet(changesSinceWholeSet: Int, wholeSetCount: Int) -> Bool {
        changesSinceWholeSet >= max(leastChangesBetweenWholeSets, wholeSetCount)
    }

    var rows: [HandleRow] {
        switch self {
        case .whole(let rows), .changes(let rows): rows
        }
    }

    var isWhole: Bool {
        if case .whole = self { return true }
        return false
    }

    func encoded() -> [UInt8] {
        let rows = self.rows
        var w = RecordWriter(capacity: 8 + 16 * rows.count)
        w.byte(isWhole ? 1 : 2)
        w.unsigned(UInt64(rows.count))
        var previous = Previous()
        for row in rows {
            var flags: UInt8 = row.known ? 1 : 0
            if row.until != nil { flags |= 2 }
            switch row.source {
            case .question: flags |= 1 << 2
            case .observation: flags |= 2 << 2
            }
            w.byte(flags)
            w.byte(Codes.kind(row.handle.kind))
            var value = row.handle.value
            value.withUTF8 { utf8 in
                var shared = 0
                if row.handle.kind == previous.kind {
                    let limit = min(utf8.count, previous.value.count)
                    while shared < limit, utf8[shared] == previous.value[shared] { shared += 1 }
                }
                w.unsigned(UInt64(shared))
                w.unsigned(UInt64(utf8.count - shared))
                w.bytes.append(contentsOf: utf8[shared...])
                previous.value.removeAll(keepingCapacity: true)
                previous.value.append(contentsOf: utf8)
            }
            previous.kind = row.handle.kind
            w.signed(row.since.microseconds &- previous.since)
            previous.since = row.since.microseconds
            if let until = row.until { w.signed(until.microseconds &- row.since.microseconds) }
            switch row.source {
            case .question(let id): w.uuid(id)
            case .observation(let seq):
                w.signed(Int64(bitPattern: seq &- previous.observation))
                previous.observation = seq
            }
        }
        return w.bytes
    }

    /// What a row is written against: the previous row's handle and time, and the record's previous observation.
    private struct Previous {
        var kind: CommunicationHandle.Kind?
        var value: [UInt8] = []
        var since: Int64 = 0
        var observation: UInt64 = 0
    }

    /// The kind and row count of a stored record, without its rows.
    static func header(_ bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> (isWhole: Bool, count: Int) {
        var r = RecordReader(bytes)
        let isWhole = try kind(&r)
        return (isWhole, try r.count())
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var set = PackedHandleSet()
        let (isWhole, packed) = try Self.readRows(bytes, into: &set)
        let rows = packed.map { row in
            HandleRow(
                handle: set.withValue(of: row) { CommunicationHandle(normalizedValue: String(decoding: $0, as: UTF8.self), kind: row.kind) },
                known: row.known, since: row.since, until: row.until, source: row.source)
        }
        self = isWhole ? .whole(rows) : .changes(rows)
    }

    /// Reads the rows of a stored record in order, checking each (see the type's description), with their values
    /// added to `set`'s (``PackedHandleSet``), and whether the record is a whole set.
    static func readRows(_ bytes: UnsafeRawBufferPointer, into set: inout PackedHandleSet) throws(EventRecord.DecodingError) -> (isWhole: Bool, rows: [PackedHandleSet.Row]) {
        var r = RecordReader(bytes)
        let isWhole = try kind(&r)
        let count = try r.count()
        var rows: [PackedHandleSet.Row] = []
        rows.reserveCapacity(count)
        var previous: PackedHandleSet.Row?
        var observation: UInt64 = 0
        for _ in 0..<count {
            let flags = try r.byte()
            guard flags & ~0b1111 == 0 else { throw .init(reason: "bad handle set row flags \(flags)") }
            let kind = try Codes.kind(try r.byte())
            let shared = try r.unsigned()
            guard kind == previous?.kind || shared == 0, shared <= UInt64(previous?.valueCount ?? 0) else {
                throw .init(reason: "a handle shares more than the previous one holds")
            }
            // The value: the start it shares with the previous one's, then its own bytes.
            let start = set.values.count
            if let previous {
                for index in 0..<Int(shared) { set.values.append(set.values[Int(previous.valueStart) + index]) }
            }
            set.values.append(contentsOf: try r.raw(try r.count()))
            let since = (previous?.since.microseconds ?? 0) &+ (try r.signed())
            let until = flags & 2 != 0 ? Timestamp(microseconds: since &+ (try r.signed())) : nil
            let source: HandleSource
            switch flags >> 2 {
            case 1: source = .question(try r.uuid())
            case 2:
                observation = observation &+ UInt64(bitPattern: try r.signed())
                source = .observation(observation)
            default: throw .init(reason: "unknown handle source \(flags >> 2)")
            }
            let row = PackedHandleSet.Row(
                kind: kind, kindRank: PackedHandleSet.rank(kind), known: flags & 1 != 0, valueStart: Int32(start),
                valueCount: Int32(set.values.count - start), since: Timestamp(microseconds: since), until: until, source: source)
            guard row.valueCount > 0, set.withValue(of: row, isUTF8) else { throw .init(reason: "a handle value is empty or not UTF-8") }
            if let previous {
                guard set.values.withUnsafeBytes({ PackedHandleSet.order(previous, row, values: $0) }) < 0 else {
                    throw .init(reason: "handle set rows out of order")
                }
            }
            rows.append(row)
            previous = row
        }
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in handle set record") }
        return (isWhole, rows)
    }

    /// Whether `bytes` are UTF-8: at once when they are ASCII, as handle tokens are.
    private static func isUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 < 0x80 } || validUTF8(bytes) != nil
    }

    private static func kind(_ r: inout RecordReader) throws(EventRecord.DecodingError) -> Bool {
        switch try r.byte() {
        case 1: true
        case 2: false
        case let other: throw .init(reason: "unknown handle set record kind \(other)")
        }
    }
}
