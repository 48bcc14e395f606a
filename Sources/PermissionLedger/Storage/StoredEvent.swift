import Foundation
internal import LMDB
import PermissionModel

/// A stored `events` value split into the chain hash in front and the event record after it.
func storedParts(_ value: UnsafeRawBufferPointer) throws -> (hash: ChainHash, record: UnsafeRawBufferPointer) {
    guard value.count > 32 else { throw EventRecord.DecodingError(reason: "stored value of \(value.count) bytes is too short") }
    return (ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: value[0..<32]))), UnsafeRawBufferPointer(rebasing: value[32...]))
}

/// The header of a stored event (see `EventRecord.decodeHeader`), with the chain hash stored before its record.
func decodeStoredHeader(_ value: UnsafeRawBufferPointer, id: Bool = true) throws -> (header: EventRecord.Header, hash: ChainHash) {
    let stored = try storedParts(value)
    return (try EventRecord.decodeHeader(stored.record, id: id), stored.hash)
}

/// The stored event at `seq`, with its `seq`, `recordedAt` and `hash`, and its personal fields: a sealed record
/// (format 2) is opened with its key, from `tables.keyRing`.
///
/// A query that shows what it reads and hands out no salt passes `salted: false`: the event comes without its
/// salt, and its fields are not checked against the commitment, which the AEAD's tag covers already. A point query
/// that may ask for the same event again passes `kept: true` too (``openedSealedEvent(_:seq:txn:tables:salted:kept:)``).
///
/// - Throws: `.keyUnavailable` when the record is sealed and the ledger was opened without its key.
func decodeStoredEvent(
    _ value: UnsafeRawBufferPointer, seq: UInt64, txn: ReadTransaction, tables: Tables, salted: Bool = true, kept: Bool = false
) throws -> PermissionEvent {
    let stored = try storedParts(value)
    var event: PermissionEvent
    if stored.record.first == SealedRecord.version {
        let record = try SealedRecord.parts(of: stored.record, checkingTrailer: false)
        if let opened = try openedSealedEvent(record, seq: seq, txn: txn, tables: tables, salted: salted, kept: kept) {
            event = opened
        } else {
            let (envelope, commitment) = try SealedRecord.envelope(record.chained)
            try SealedRecord.checkBox(record.box.count, commitment: commitment)
            if commitment == nil || record.box.isEmpty {
                // What is read from the trailer without a key (the tokens, or that the box is gone) is checked first.
                try SealedRecord.checkTrailer(stored.record)
            }
            if commitment == nil {
                event = envelope
            } else {
                guard let keyRing = tables.keyRing else { throw tables.keyUnavailable }
                // An erased event imported holds no sealed fields at all; one erased here, fields no key opens.
                if let mark = try KeyRing.erasure(txn, tables, subject: envelope.subject, seq: seq, recordedAt: envelope.recordedAt!) {
                    if !record.box.isEmpty { try SealedRecord.checkTrailer(stored.record) }
                    // Erased: the envelope, whose personal fields are empty, which erasure emptied them, and what the
                    // record keeps in their place.
                    event = envelope
                    event.erased = mark
                    event.erasedFields = ErasedFields(commitment: commitment!, tokens: SealedRecord.tokenList(record.tokens))
                } else if record.box.isEmpty {
                    throw LedgerError(.damaged, "the event's personal fields are missing and no erasure covers it", seq: seq)
                } else if let newer = try readAfterAnErasure(seq: seq, txn: txn, tables: tables, salted: salted) {
                    event = newer
                } else {
                    throw LedgerError(.damaged, "the key of the event's personal fields is missing from the key store", seq: seq)
                }
            }
        }
    } else {
        event = try EventRecord.decode(stored.record)
    }
    event.seq = seq
    event.hash = stored.hash
    return event
}

/// The event at `seq` as the newest snapshot holds it, for a reader of an older snapshot that met its key destroyed
/// and no erasure covering it. An erasure overwrites its keys as soon as it commits (docs/DECISIONS.md, "A read that
/// meets an erasure recorded after it began"):
/// - an event an erasure with a cut keeps readable is read from the newest snapshot, under the key of its own that
///   erasure gave it (its chained part, which the chain hash covers, is the same in both);
/// - an event the erasure covers cannot be read as it was when this read began: ``LedgerError/Kind/storage``, with
///   the remedy ``LedgerError/Remedy/readAgain``, rather than the event erased by an erasure this read's log does
///   not hold, which an export would carry into a file that no import takes.
///
/// `nil` when the newest snapshot does not explain it either (the key is missing: damage), for a write transaction's
/// reader (it reads the newest snapshot), and when no reader slot is free.
private func readAfterAnErasure(seq: UInt64, txn: ReadTransaction, tables: Tables, salted: Bool) throws -> PermissionEvent? {
    do {
        return try txn.readingNewestSnapshot { newest -> PermissionEvent? in
            guard let value = try newest.get(tables.events, key: Keys.seq(seq)) else { return nil }
            let record = try SealedRecord.parts(of: try storedParts(value).record, checkingTrailer: false)
            let owner = try SealedRecord.owner(record.chained)
            if let mark = try KeyRing.erasure(newest, tables, subject: owner.subject, seq: seq, recordedAt: owner.recordedAt) {
                throw LedgerError(
                    .storage, "its personal fields were erased by seq \(mark.seq), recorded while this read was going on",
                    seq: seq, remedy: .readAgain)
            }
            return try openedSealedEvent(record, seq: seq, txn: newest, tables: tables, salted: salted)
        }
    } catch let error as LMDBError where error == .invalidArgument || error == .readersFull {
        return nil
    }
}

/// The event of a stored version 2 record with its personal fields, when they are there and their key is at hand:
/// the common case, read in place and decoded once, with its values. `nil` when the box is empty or gone, or the
/// ledger has no key ring or no key for the event: ``decodeStoredEvent(_:seq:txn:tables:salted:kept:)`` then says why.
///
/// With `kept`, an event opened lately by another such read (``KeyRing/openedEvent(seq:slot:)``) is taken as it was
/// opened, and one opened here is kept: for point reads, not scans, and only without the salt.
private func openedSealedEvent(
    _ record: (chained: UnsafeRawBufferPointer, box: UnsafeRawBufferPointer, tokens: UnsafeRawBufferPointer),
    seq: UInt64, txn: ReadTransaction, tables: Tables, salted: Bool, kept: Bool = false
) throws -> PermissionEvent? {
    guard !record.box.isEmpty, let keyRing = tables.keyRing else { return nil }
    let owner = try SealedRecord.owner(record.chained)
    guard let (key, slot) = try keyRing.eventKey(txn, tables, subject: owner.subject, recordedAt: owner.recordedAt, seq: seq) else { return nil }
    let keeping = kept && !salted
    if keeping, let event = keyRing.openedEvent(seq: seq, slot: slot) { return event }
    let event = try SealedRecord.open(chained: record.chained, box: record.box, eventKey: key, salted: salted).event
    if keeping { keyRing.keepOpenedEvent(event, seq: seq, slot: slot) }
    return event
}

/// A stored record read for a replay (a rebuild, `verify`), with no key: the event with its handles as the
/// tables hold them (tokens, for a sealed record), and the part of the record the chain hash covers.
/// With `checkCanonical`, the record must be exactly what this build writes for what it holds.
func replayedEvent(_ record: UnsafeRawBufferPointer, checkCanonical: Bool = false) throws(EventRecord.DecodingError) -> (event: PermissionEvent, chained: UnsafeRawBufferPointer) {
    guard record.first == SealedRecord.version else {
        let event = try EventRecord.decode(record)
        if checkCanonical, !EventRecord.encode(event, recordedAt: event.recordedAt!).elementsEqual(record) {
            throw .init(reason: "the stored record is not in canonical form")
        }
        return (event, record)
    }
    let sealed = try SealedRecord(stored: record)
    if checkCanonical { try sealed.checkCanonical(stored: record) }
    return (try sealed.tokenizedEvent(), try SealedRecord.chainedPart(of: record))
}

/// ``replayedEvent(_:checkCanonical:)`` of a record copied out of the map: the event alone.
func replayedEvent(_ record: [UInt8], checkCanonical: Bool = false) throws(EventRecord.DecodingError) -> PermissionEvent {
    try record.withUnsafeBytes { buffer in
        Result { () throws(EventRecord.DecodingError) -> PermissionEvent in
            try replayedEvent(buffer, checkCanonical: checkCanonical).event
        }
    }.get()
}

/// The chain hash of a stored record after `previous`: over all of a version 1 record, over the chained part of
/// a version 2 one. Read before the record is decoded, so that damage is first named as a broken chain.
func storedChainHash(_ record: [UInt8], previous: ChainHash) throws(EventRecord.DecodingError) -> ChainHash {
    try record.withUnsafeBytes { buffer in
        Result { () throws(EventRecord.DecodingError) -> ChainHash in
            chainHash(previous: previous, record: try SealedRecord.chainedPart(of: buffer))
        }
    }.get()
}
