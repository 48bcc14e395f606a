internal import Crypto
import Foundation
import PermissionModel

/// A version of what the ledger knows about one handle of one subject.
@_spi(StorageEngine) public struct HandleRow: Hashable {
    public var handle: CommunicationHandle
    public var known: Bool
    public var since: Timestamp
    public var until: Timestamp?
    public var source: HandleSource

    public func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 48)
        w.byte(1)
        w.handle(handle)
        w.byte(known ? 1 : 0)
        w.signed(since.microseconds)
        w.optionalTime(until)
        switch source {
        case .question(let id): w.byte(1); w.uuid(id)
        case .observation(let seq): w.byte(2); w.unsigned(seq)
        }
        return w.bytes
    }

    public init(handle: CommunicationHandle, known: Bool, since: Timestamp, until: Timestamp?, source: HandleSource) {
        self.handle = handle
        self.known = known
        self.since = since
        self.until = until
        self.source = source
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown handle row version") }
        handle = try r.handle()
        let k = try r.byte()
        guard k <= 1 else { throw .init(reason: "bad known flag") }
        known = k == 1
        since = Timestamp(microseconds: try r.signed())
        until = try r.optionalTime()
        switch try r.byte() {
        case 1: source = .question(try r.uuid())
        case 2: source = .observation(try r.unsigned())
        case let other: throw .init(reason: "unknown handle source \(other)")
        }
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in handle row") }
    }
}

extension HandleRow {
    /// How `a`'s handle sorts against `b`'s, as `<` and `==` of handles order them (kind, then the value's bytes),
    /// in one comparison: negative, zero or positive.
    static func order(_ a: HandleRow, _ b: HandleRow) -> Int {
        if a.handle.kind != b.handle.kind { return a.handle.kind < b.handle.kind ? -1 : 1 }
        return compareUTF8(a.handle.value, b.handle.value)
    }
}
