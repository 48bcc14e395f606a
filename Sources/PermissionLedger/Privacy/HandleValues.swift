import Foundation
internal import LMDB
import PermissionModel

/// The values of handles that the tables hold as tokens, found in the events that named them.
///
/// A handle row's source names the event that holds its value: the `question.asked` of an approving question,
/// or the `handles.observed` of an observation. That event's record lists its handles' tokens in the order of
/// its handles, so the value of a token is found by opening the event once. A ledger of format 1 holds values.
struct HandleValues {
    let txn: ReadTransaction
    let tables: Tables
    /// Each opened event's handles by their tokens.
    private var opened: [UInt64: (handles: [String: CommunicationHandle], erased: ErasureMark?)] = [:]

    init(txn: ReadTransaction, tables: Tables) {
        self.txn = txn
        self.tables = tables
    }

    /// Whether the tables hold tokens in place of values (format 2).
    var holdsTokens: Bool { tables.keys != nil }

    /// The handle `stored` (a token) stands for, from the event `source` names, and the erasure that made its
    /// value unreadable, if one did (the handle's value is then empty).
    mutating func value(of stored: CommunicationHandle, source: HandleSource) throws -> (handle: CommunicationHandle, erased: ErasureMark?) {
        guard holdsTokens else { return (stored, nil) }
        let seq = try sourceSeq(source)
        if opened[seq] == nil { opened[seq] = try handlesByToken(at: seq) }
        guard let event = opened[seq], let handle = event.handles[stored.value], handle.kind == stored.kind else {
            throw LedgerError(.damaged, "a handle row names an event that does not hold its handle", seq: seq)
        }
        return (handle, event.erased)
    }

    /// Whether an erasure erased the event `source` names (of `subject`): its handles are then not matched by
    /// value (docs/spec/PRIVACY.md). Read from the erasure entries and the event's header, without a key.
    func isErased(_ source: HandleSource, subject: String) throws -> Bool {
        guard holdsTokens else { return false }
        let seq = try sourceSeq(source)
        guard let value = try txn.get(tables.events, key: Keys.seq(seq)) else {
            throw LedgerError(.damaged, "event missing from the log", seq: seq)
        }
        let recordedAt = try decodeStoredHeader(value, id: false).header.recordedAt
        return try KeyRing.erasure(txn, tables, subject: subject, seq: seq, recordedAt: recordedAt) != nil
    }

    /// The seq of the event that holds the handles of `source`.
    private func sourceSeq(_ source: HandleSource) throws -> UInt64 {
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
        let event = try decodeStoredEvent(value, seq: seq, txn: txn, tables: tables)
        return (Dictionary(zip(tokens.map(\.value), SealedRecord.handles(of: event)), uniquingKeysWith: { first, _ in first }), event.erased)
    }

    /// `handle` as the tables of `subject` hold it: its token under the subject's lookup key, or `nil` when the
    /// subject has no token key (no handle of it was stored yet); the handle itself in a ledger of format 1.
    ///
    /// The lookup key is the subject's latest, at every as-of point: a handle's rows keep one token through
    /// their history, and rows whose key is gone can no longer be matched, at any point.
    func stored(_ handle: CommunicationHandle, subject: String) throws -> CommunicationHandle? {
        guard holdsTokens else { return handle }
        guard let keyRing = tables.keyRing else { throw LedgerError.missingKey(tables.keyLocation) }
        return try keyRing.tokenHasher(txn, tables, subject: subject)?.tokenHandle(handle)
    }
}
