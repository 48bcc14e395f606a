internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// A consistent, read-only view of a ledger as of one point of its log.
///
/// Every query reads indexed, versioned projections: its cost does not grow with the length of the
/// log before the point. Obtain a view from ``Ledger/read(asOf:_:)``; it is valid only inside that closure.
public struct LedgerView {
    let txn: ReadTransaction
    let tables: Tables
    /// The log's head (independent of the as-of point).
    public let head: LogHead
    /// The point this view answers for.
    public let point: AsOfPoint
    /// The wall clock when the view was made: the clock of `.now` in ``at(_:)``.
    let now: Timestamp

    init(txn: ReadTransaction, tables: Tables, asOf: AsOf, now: Timestamp, head knownHead: LogHead? = nil) throws {
        self.txn = txn
        self.tables = tables
        head = try knownHead ?? Ledger.head(txn, tables)
        self.now = now
        switch asOf {
        case .now:
            point = AsOfPoint(seq: head.seq, time: now)
        case .seq(let n):
            guard n <= head.seq else {
                throw LedgerError(.notFound, "seq:\(n) is beyond the end of the log (the head is seq \(head.seq))")
            }
            let time = n == 0 ? Timestamp.earliest : try txn.eventHeader(tables, seq: n, id: false)?.recordedAt
            guard let time else { throw LedgerError(.damaged, "event missing from the log", seq: n) }
            point = AsOfPoint(seq: n, time: time)
        case .time(let t):
            // The last event recorded at or before t: seek past t, step back.
            let cursor = try txn.cursor(tables.byRecordedAt)
            let after = t.microseconds == .max ? nil : try cursor.seek(atOrAfter: Keys.time(Timestamp(microseconds: t.microseconds + 1)))
            let entry = after != nil ? try cursor.previous() : try cursor.last()
            point = AsOfPoint(seq: entry.map { Keys.decodeSeq($0.key) } ?? 0, time: t)
        }
    }

    // MARK: Questions

    /// The question with this id as of the point, or `nil` if it had not been asked by then.
    public func question(_ id: UUID) throws -> QuestionStatus? {
        let cursor = try txn.cursor(tables.questions)
        guard let latest = try cursor.latest(Keys.uuid(id), atMost: point.seq) else { return nil }
        let row = try QuestionRow(decoding: latest.value)
        var status = try status(id: id, row: row, versionSeq: latest.seq)
        // The versions of a question's row are keyed by the seqs of its events: list them.
        let prefix = Keys.uuid(id)
        var entry = try cursor.seek(atOrAfter: prefix)
        while let e = entry, e.key.starts(with: prefix) {
            let seq = Keys.decodeSeq(e.key)
            if seq > point.seq { break }
            guard let event = try txn.eventHeader(tables, seq: seq) else { throw LedgerError(.damaged, "event missing from the log", seq: seq) }
            status.events.append(EventSummary(seq: seq, type: event.type, id: event.id, occurredAt: event.occurredAt, recordedAt: event.recordedAt))
            entry = try cursor.next()
        }
        return status
    }

    /// The questions asked by the point, ordered by `askedAt` then id, optionally filtered.
    public func questions(subject: String? = nil, state: QuestionState? = nil) throws -> [QuestionStatus] {
        var result: [QuestionStatus] = []
        try forEachQuestionRow { id, row, versionSeq in
            guard subject == nil || row.subject.utf8.elementsEqual(subject!.utf8) else { return }
            let status = try status(id: id, row: row, versionSeq: versionSeq)
            if state == nil || status.state == state { result.append(status) }
        }
        return result
    }

    /// Calls `body` with each question asked by the point, ordered by `askedAt` then id: its id, its row as of
    /// the point, and the seq of the event that wrote that version of the row.
    func forEachQuestionRow(_ body: (UUID, QuestionRow, UInt64) throws -> Void) throws {
        let index = try txn.cursor(tables.questionsByAsked)
        let rows = try txn.cursor(tables.questions)
        var entry = try index.first()
        while let e = entry {
            let id = Keys.decodeUUID(UnsafeRawBufferPointer(rebasing: e.key[8..<24]))
            if Keys.decodeSeq(e.value) <= point.seq, let latest = try rows.latest(Keys.uuid(id), atMost: point.seq) {
                try body(id, try QuestionRow(decoding: latest.value), latest.seq)
            }
            entry = try index.next()
        }
    }

    /// The status of question `id` from its row as of the point, the version written by the event at `versionSeq`.
    private func status(id: UUID, row: QuestionRow, versionSeq: UInt64) throws -> QuestionStatus {
        guard let asked = try txn.event(tables, seq: row.askedSeq, salted: false, kept: true), case .questionAsked(let question) = asked.payload else {
            throw LedgerError(.damaged, "question \(id.uuidString) points at an event that is not its question.asked", seq: row.askedSeq)
        }
        var state = row.state
        var resolvedAt = row.resolvedAt
        var error = row.error
        var errorErased: ErasureMark?
        // Where records are sealed, a failure's message is read from the failure's event.
        if tables.keys != nil, row.state == .failed, let event = try txn.event(tables, seq: versionSeq, salted: false),
           case .questionAskFailed(_, let failure) = event.payload {
            error = failure
            errorErased = event.erased
        }
        if state == .pending, let expiresAt = question.expiresAt, expiresAt <= point.time {
            state = .expired
            resolvedAt = expiresAt
        }
        return QuestionStatus(
            question: question, subject: row.subject, state: state, late: row.late, askedAt: row.askedAt,
            resolvedAt: resolvedAt, choice: row.choiceID.flatMap(question.choice(id:)), via: row.via, error: error,
            events: [], erased: asked.erased, errorErased: errorErased)
    }

    // MARK: Subjects

    /// Every subject with an event at or before the point, by code point.
    public func subjects() throws -> [String] {
        var result: [String] = []
        let cursor = try txn.cursor(tables.subjects)
        var entry = try cursor.first()
        while let e = entry {
            if Keys.decodeSeq(e.value) <= point.seq, let s = validUTF8(e.key) { result.append(s) }
            entry = try cursor.next()
        }
        return result
    }

    /// The handles `subject` may talk to at the point: known, and not lapsed at the clock. Ordered by kind, then value.
    public func knownHandles(subject: String) throws -> [KnownHandle] {
        try knownHandles(subject: subject, identities: false).handles
    }

    /// ``knownHandles(subject:)``, and with `identities`, each handle's stored form (its kind and token, or its
    /// value where the tables hold values), in the same order: what tells apart two erased handles of one kind,
    /// whose values are both gone.
    func knownHandles(subject: String, identities: Bool) throws -> (handles: [KnownHandle], identities: [[UInt8]]) {
        // The subject's latest whole handle set at or before the point, and the changes recorded after it.
        // Read packed: no handle is made but those of the answer.
        let (set, rows) = try HandleSets.packedRows(txn, tables, subjectPrefix: Keys.subjectPrefix(subject), atMost: point.seq)
        var values = HandleValues(txn: txn, tables: tables)
        var known: [KnownHandle] = []
        var stored: [[UInt8]] = []
        for row in rows where row.known && (row.until.map { $0 > point.time } ?? true) {
            let (handle, erased) = try set.withValue(of: row) { text in
                if identities { stored.append([Codes.kind(row.kind)] + Array(text)) }
                return try values.value(ofStoredText: text, kind: row.kind, source: row.source, subject: subject)
            }
            known.append(KnownHandle(handle: handle, since: row.since, until: row.until, source: row.source, erased: erased))
        }
        // Rows are in the order of what the tables hold: tokens, when they hold tokens. The answer's values are
        // packed too, so that sorting them compares bytes and touches no string; indices are sorted, not the
        // handles themselves, which are large to move.
        if values.holdsTokens {
            var answer = PackedHandleSet()
            let packed = known.map { answer.append($0.handle, known: true, since: $0.since, until: $0.until, source: $0.source) }
            let order = answer.values.withUnsafeBytes { values in
                packed.indices.sorted { PackedHandleSet.order(packed[$0], packed[$1], values: values) < 0 }
            }
            known = order.map { known[$0] }
            if identities { stored = order.map { stored[$0] } }
        }
        return (known, stored)
    }

    /// Whether `subject` may talk to `handle` at the point.
    public func isKnownHandle(_ handle: CommunicationHandle, subject: String) throws -> Bool {
        var values = HandleValues(txn: txn, tables: tables)
        guard let stored = try values.stored(handle, subject: subject),
              let latest = try txn.latest(tables.handles, Keys.handle(subject: subject, stored), atMost: point.seq) else { return false }
        let row = try HandleRow(decoding: latest.value)
        // An erased handle answers as if it were not in the set (docs/spec/PRIVACY.md).
        guard row.known, row.until.map({ $0 > point.time }) ?? true else { return false }
        return try !values.isErased(row.source, subject: subject)
    }

    /// The latest state of each permission of `subject` at the point, ordered by permission name.
    ///
    /// The permissions are a closed set, so each one's latest version is found with one seek to
    /// `subject ‖ name ‖ 0 ‖ (point + 1)` and one step back, in key order (which is name order), without
    /// first walking to the entity and then past its later versions. The key a seek lands on also names
    /// the next permission the subject has, so the names it has none of are skipped, and the walk stops
    /// at the end of the subject: a subject with few permissions costs a seek per permission it has.
    public func permissions(subject: String) throws -> [PermissionStatus] {
        let cursor = try txn.cursor(tables.permissions)
        let prefix = Keys.subjectPrefix(subject)
        let names = PermissionNames.inKeyOrder
        var result: [PermissionStatus] = []
        var index = 0
        while index < names.count {
            let name = names[index]
            let found = try cursor.latestAndFollowing(Keys.permission(subject: subject, name.permission), atMost: point.seq)
            if let latest = found.latest {
                let row = try PermissionRow(decoding: latest.value)
                guard row.permission == name.permission else {
                    throw LedgerError(.damaged, "the permissions row of \(subject) under \(name.permission.rawValue) holds \(row.permission.rawValue)", seq: latest.seq)
                }
                result.append(PermissionStatus(permission: row.permission, state: row.state, since: row.since, cause: row.cause))
            }
            // The key after this permission's point: past the subject, nothing follows; in a later permission,
            // the names before that one have no rows.
            guard let following = found.following, following.count > prefix.count + 9, following.starts(with: prefix) else { break }
            let next = UnsafeRawBufferPointer(rebasing: following[prefix.count..<(following.count - 9)])
            index += 1
            while index < names.count, names[index].bytes.lexicographicallyPrecedes(next) { index += 1 }
        }
        return result
    }

    // MARK: Events

    /// Calls `body` with each stored event with `after < seq <= through`, in order, on the calling thread: a
    /// scan, whose cost grows with the events it reads (see ``Ledger/forEachEvent(after:_:)`` for async code).
    public func forEachEvent(after: UInt64, through: UInt64, _ body: (RecordedEvent) throws -> Void) throws {
        try forEachStoredEvent(after: after, through: through) { try body(RecordedEvent(stored: $0)) }
    }

    /// ``forEachEvent(after:through:_:)`` with the events as stored: `seq`, `recordedAt` and `hash` set.
    ///
    /// With `checkingChain`, each event's chain hash is computed from the one before it (the stored hash of
    /// `after`, or the genesis hash) and must be the stored one: what hands events on to be kept or imported
    /// elsewhere (an export) never hands on bytes the log's chain does not vouch for.
    func forEachStoredEvent(after: UInt64, through: UInt64, checkingChain: Bool = false, _ body: (PermissionEvent) throws -> Void) throws {
        guard after < through else { return }
        var previous: ChainHash?
        if checkingChain {
            if after == 0 {
                previous = .genesis
            } else {
                guard let value = try txn.get(tables.events, key: Keys.seq(after)) else {
                    throw LedgerError(.damaged, "event missing from the log", seq: after)
                }
                do { previous = try storedParts(value).hash } catch { throw LedgerError(.damaged, "\(error)", seq: after) }
            }
        }
        let cursor = try txn.cursor(tables.events)
        var entry = try cursor.seek(atOrAfter: Keys.seq(after + 1))
        while let e = entry {
            let seq = Keys.decodeSeq(e.key)
            if seq > through { break }
            do {
                if let chain = previous {
                    let stored = try storedParts(e.value)
                    let computed = chainHash(previous: chain, record: try SealedRecord.chainedPart(of: stored.record))
                    guard computed == stored.hash else {
                        throw LedgerError(.damaged, "the chain hash does not match the event's bytes (run verify)", seq: seq)
                    }
                    previous = computed
                }
                try body(try decodeStoredEvent(e.value, seq: seq, txn: txn, tables: tables))
            } catch let error as EventRecord.DecodingError {
                throw LedgerError(.damaged, error.description, seq: seq)
            }
            entry = try cursor.next()
        }
    }

    /// The part of the stored record at `seq` that its chain hash covers (all of a version 1 record), for tools
    /// that check the chain as they read events back.
    package func chainedRecord(seq: UInt64) throws -> [UInt8] {
        guard let value = try txn.get(tables.events, key: Keys.seq(seq)), value.count > 32 else {
            throw LedgerError(.damaged, "event missing from the log", seq: seq)
        }
        return Array(try SealedRecord.chainedPart(of: UnsafeRawBufferPointer(rebasing: value[32...])))
    }

    // MARK: Digest

    /// The canonical serialization of all derived state at the point (see `docs/STORAGE.md`, "Digest").
    public func canonicalState() throws -> String {
        try canonicalState(cancellation: nil)
    }

    /// ``canonicalState()``, stopping with `CancellationError` once `cancellation` says its task was cancelled:
    /// looked at on the first question and subject, then every ``cancellationInterval`` of them.
    func canonicalState(cancellation: Cancellation?) throws -> String {
        var w = JSONWriter(capacity: 4096, escapingLineBreakers: false)
        w.raw("{\"questions\":[")
        var count: UInt64 = 0
        try forEachQuestionRow { id, row, versionSeq in
            try cancellation?.check(every: cancellationInterval, count)
            if count > 0 { w.raw(",") }
            count += 1
            QueryJSON.writeQuestion(try status(id: id, row: row, versionSeq: versionSeq), includeEvents: false, to: &w)
        }
        w.raw("],\"subjects\":[")
        for (i, subject) in try subjects().enumerated() {
            try cancellation?.check(every: cancellationInterval, UInt64(i))
            if i > 0 { w.raw(",") }
            w.raw("{\"subject\":"); w.string(subject)
            w.raw(",\"handles\":[")
            for (k, h) in try knownHandles(subject: subject).enumerated() {
                if k > 0 { w.raw(",") }
                QueryJSON.writeKnownHandle(h, to: &w)
            }
            w.raw("],\"permissions\":[")
            for (k, p) in try permissions(subject: subject).enumerated() {
                if k > 0 { w.raw(",") }
                QueryJSON.writePermission(p, to: &w)
            }
            w.raw("]}")
        }
        w.raw("]}")
        return w.text
    }

    /// SHA-256, in hex, of ``canonicalState()``: equal for any two ledgers holding the same events.
    public func digest() throws -> String {
        try digest(cancellation: nil)
    }

    /// ``digest()``, stopping with `CancellationError` once `cancellation` says its task was cancelled.
    func digest(cancellation: Cancellation?) throws -> String {
        hexString(SHA256.hash(data: Array(try canonicalState(cancellation: cancellation).utf8)))
    }
}

/// Every permission with the bytes of its name, in the order of their keys in `permissions` (by code point,
/// which is also ``SystemPermission``'s order: names hold no NUL, so a name before a longer one it starts
/// is also the key before).
enum PermissionNames {
    static let inKeyOrder: [(permission: SystemPermission, bytes: [UInt8])] =
        SystemPermission.allCases.sorted().map { ($0, Array($0.rawValue.utf8)) }
}
