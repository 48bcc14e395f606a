import Foundation
import PermissionModel

/// The data of an event's leaf in the Merkle tree (docs/STORAGE.md, "Leaf data"): one line of JSON that an
/// auditor compares with the event's readable JSON line.
///
/// It is the event as `export` writes it, with each personal member left out (a handle's `value`, a person's
/// `name`, an update's `description`, a choice's `title`, an ask error's `message`), without `salt` and `hash`,
/// followed by `commitment` (the 64 hex digits of the commitment to its personal fields, when it has any) and
/// `subjectPrevious` (the `seq` of the subject's event before it, when there is one). The leaf commits to the
/// personal fields through their commitment, without showing them, and an erasure, which changes neither the
/// envelope nor the commitment, changes no leaf. Its bytes are fixed forever: the tree's stored hashes, and every
/// checkpoint ever signed, depend on them.
enum LeafData {
    /// The leaf data of the event at `seq` whose envelope (the event without its personal values) is `envelope`.
    static func make(envelope: PermissionEvent, seq: UInt64, commitment: [UInt8]?, subjectPrevious: UInt64?) -> [UInt8] {
        var event = envelope
        event.seq = seq
        var w = JSONWriter()
        EventJSON.writeMembers(event, form: .withheld, to: &w)
        if let commitment { w.key("commitment"); w.string(hexString(commitment)) }
        if let subjectPrevious { w.key("subjectPrevious"); w.integer(subjectPrevious) }
        w.raw("}")
        return w.bytes
    }
}

extension LeafData {
    /// The leaf data of the event at `seq` stored as `record`, read from the record's chained part alone (no key
    /// needed); `nil` for a record of format version 1, which commits to no personal field (such a ledger keeps no
    /// tree). `subjectPrevious` is given the event's subject.
    static func of(
        storedRecord record: [UInt8], seq: UInt64, subjectPrevious: (_ subject: String) throws -> UInt64?
    ) throws -> [UInt8]? {
        guard record.first == SealedRecord.version else { return nil }
        let (envelope, commitment) = try record.withUnsafeBytes { stored in
            Result { () throws(EventRecord.DecodingError) in try SealedRecord.envelope(try SealedRecord.chainedPart(of: stored)) }
        }.get()
        return make(envelope: envelope, seq: seq, commitment: commitment, subjectPrevious: try subjectPrevious(envelope.subject))
    }
}

extension LeafData {
    /// Whether the leaf data `leaf` ends by naming `seq` as its subject's event before it.
    static func namesPrevious(_ leaf: [UInt8], _ seq: UInt64) -> Bool {
        String(decoding: leaf, as: UTF8.self).hasSuffix(",\"subjectPrevious\":\(seq)}")
    }
}
