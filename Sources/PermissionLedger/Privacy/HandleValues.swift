import Foundation
internal import LMDB
import PermissionModel

/// The values of handles that the tables hold as tokens.
///
/// A handle row's token stands for a value of its subject's handle values (``HandleDirectory``), unless the event
/// its source names (the `question.asked` of an approving question, or the `handles.observed` of an observation)
/// is erased: the row's value is then erased too, whatever later events hold. A ledger made before it kept handle
/// values, open read-only, is read from those events instead: their records list their handles' tokens in the order
/// of their handles. A ledger of format 1 holds values.
struct HandleValues {
    let txn: ReadTransaction
    let tables: Tables
    /// The subject whose handle values were read last, and them (`nil`: the ledger keeps none).
    private var directory: (subject: String, values: HandleValueIndex?)?
    /// The erasures of the subjects asked about: when a subject has none, no row of it is erased.
    private var erasures = KeyRing.ErasureLookup()
    /// Each opened event's handles by their tokens, where the ledger keeps no handle values.
    private var opened: [UInt64: (handles: [String: CommunicationHandle], erased: ErasureMark?)] = [:]

    init(txn: ReadTransaction, tables: Tables) {
        self.txn = txn
        self.tables = tables
    }

    /// Whether the tables hold tokens in place of values (format 2).
    var holdsTokens: Bool { tables.keys != nil }

    /// The handle `stored` (a token of `subject`'s) stands for, and the erasure that made the value of the row whose
    /// source is `source` unreadable, if one did (the handle's value is then empty).
    mutating func value(of stored: CommunicationHandle, source: HandleSource, subject: String) throws -> (handle: CommunicationHandle, erased: ErasureMark?) {
        var text = stored.value
        return try text.withUTF8 { text in
            try value(ofStoredText: UnsafeRawBufferPointer(text), kind: stored.kind, source: source, subject: subject)
        }
    }

    /// ``value(of:source:subject:)`` of the handle of `kind` whose value, as the tables hold it, is `text`: a row
    /// read without making its handle (``PackedHandleSet``).
    mutating func value(ofStoredText text: UnsafeRawBufferPointer, kind: CommunicationHandle.Kind, source: HandleSource, subject: String) throws -> (handle: CommunicationHandle, erased: ErasureMark?) {
        func stored() -> CommunicationHandle { CommunicationHandle(normalizedValue: String(decoding: text, as: UTF8.self), kind: kind) }
        guard holdsTokens else { return (stored(), nil) }
        if directory?.subject != subject { directory = (subject, try HandleDirectory.values(of: subject, txn, tables)) }
        guard let values = directory?.values else { return try valueFromEvent(of: stored(), source: source) }
        if let mark = try erasure(of: source, subject: subject) {
            return (CommunicationHandle(normalizedValue: "", kind: kind), mark)
        }
        guard let token = HandleToken(text: text), let handle = values.handle(kind: kind, token: token) else {
            // An event written to the log by an earlier version of the engine has no handle values: its own.
            return try valueFromEvent(of: stored(), source: source)
        }
        return (handle, nil)
    }

    /// ``value(of:source:subject:)`` read from the event `source` names.
    private mutating func valueFromEvent(of stored: CommunicationHandle, source: HandleSource) throws -> (handle: CommunicationHandle, erased: ErasureMark?) {
        let seq = try sourceSeq(source)
        if opened[seq] == nil { opened[seq] = try handlesByToken(at: seq) }
        guard let event = opened[seq], let handle = event.handles[stored.value], handle.kind == stored.kind else {
            throw LedgerError(.damaged, "a handle row names an event that does not hold its handle", seq: seq)
        }
        return (handle, event.erased)
    }

    /// Whether an erasure erased the event `source` names (of `subject`): its handles are then not matched by
    /// value (docs/spec/PRIVACY.md). Read from the erasure entries and the event's header, without a key.
    mutating func isErased(_ source: HandleSource, subject: String) throws -> Bool {
        try erasure(of: source, subject: subject) != nil
    }

    /// The erasure that erased the event `source` names, of `subject`: looked for only when the subject has one.
    private mutating func erasure(of source: HandleSource, subject: String) throws -> ErasureMark? {
        guard holdsTokens else { return nil }
        let (txn, tables) = (self.txn, self.tables)
        return try erasures.erasure(txn, tables, subject: subject) {
            let seq = try Self.sourceSeq(source, txn, tables)
            guard let value = try txn.get(tables.events, key: Keys.seq(seq)) else {
                throw LedgerError(.damaged, "event missing from the log", seq: seq)
            }
            return (seq, try decodeStoredHeader(value, id: false).header.recordedAt)
        }
    }

    /// The seq of the event that holds the handles of `source`.
    private func sourceSeq(_ source: HandleSource) throws -> UInt64 { try Self.sourceSeq(source, txn, tables) }

    private static func sourceSeq(_ source: HandleSource, _ txn: ReadTransaction, _ tables: Tables) throws -> UInt64 {
        switch source {
        case .observation(let seq): return seq
        case .question(let id):
            guard let latest = try txn.latest(tables.questions, Keys.uuid(id)) else {
                throw LedgerError(.damaged, "a handle row names question \(id.uuidString), which is not in the ledger")
            }
            return try QuestionRow(decoding: latest.value).askedSeq
        }
    }

    /// The handles of the event at `seq`, by the tokens its record lists for them.
    private func handlesByToken(at seq: UInt64) throws -> (handles: [String: CommunicationHandle], erased: ErasureMark?) {
        guard let value = try txn.get(tables.events, key: Keys.seq(seq)), value.count > 32 else {
            throw LedgerError(.damaged, "event missing from the log", seq: seq)
        }
        let record = try SealedRecord(stored: UnsafeRawBufferPointer(rebasing: value[32...]))
        let tokens = SealedRecord.handles(of: try record.tokenizedEvent())
        let event = try decodeStoredEvent(value, seq: seq, txn: txn, tables: tables, salted: false)
        return (Dictionary(zip(tokens.map(\.value), SealedRecord.handles(of: event)), uniquingKeysWith: { first, _ in first }), event.erased)
    }

    /// `handle` as the tables of `subject` hold it: its token under the subject's lookup key, or `nil` when the
    /// subject has no token key (no handle of it was stored yet); the handle itself in a ledger of format 1.
    ///
    /// The lookup key is the subject's latest, at every as-of point: a handle's rows keep one token through
    /// their history, and rows whose key is gone can no longer be matched, at any point.
    func stored(_ handle: CommunicationHandle, subject: String) throws -> CommunicationHandle? {
        guard holdsTokens else { return handle }
        guard let keyRing = tables.keyRing else { throw tables.keyUnavailable }
        if let token = try keyRing.tokenHandle(of: handle, txn, tables, subject: subject) { return token }
        // No lookup key: the subject's was destroyed by an erasure, or it never stored a handle. A subject with
        // handle rows and no lookup key entry at all is damage, not an answer.
        let prefix = Keys.subjectPrefix(subject)
        if let keys = tables.keys, let first = try txn.cursor(tables.handleSets).seek(atOrAfter: prefix), first.key.starts(with: prefix),
           try txn.latest(keys, KeyRing.entry(subject: subject, .lookup), atMost: .max) == nil {
            throw LedgerError(.damaged, "\(subject) has handles in the tables but no lookup key in the keys table")
        }
        return nil
    }
}
