import Foundation
import LMDB
import PermissionModel

/// The named databases of a ledger environment. See `docs/STORAGE.md`.
struct Tables: Sendable {
    /// `format` → the storage format version.
    let meta: Database
    /// seq (8 bytes, big-endian) → chain hash (32 bytes) followed by the event record.
    let events: Database
    /// event id (UTF-8) → seq.
    let eventIDs: Database
    /// recordedAt (8 bytes, sortable) + seq → empty: resolves an as-of time to a seq.
    let byRecordedAt: Database
    /// subject (UTF-8) → seq of its first event.
    let subjects: Database
    /// askedAt (8 bytes, sortable) + question id (16 bytes) → seq of the question.asked event.
    let questionsByAsked: Database
    /// question id + seq → ``QuestionRow``.
    let questions: Database
    /// subject NUL kind value NUL + seq → ``HandleRow``.
    let handles: Database
    /// subject NUL permission NUL + seq → ``PermissionRow``.
    let permissions: Database
    /// subject NUL + seq → empty: a subject's events, for history by subject.
    let subjectEvents: Database
    /// kind value NUL (as in `handles`) + subject → seq of the first row: which subjects a handle concerns.
    let handleSubjects: Database
    /// subject NUL + seq + kind value NUL → ``HandleRow``: each change of a subject's handles, in log order.
    let handleChanges: Database
    /// subject NUL + seq → ``HandleCheckpoint``: the subject's whole handle set after that event.
    let handleCheckpoints: Database
    /// expiresAt (8 bytes, sortable) + question id (16 bytes) → empty: the pending questions that have an
    /// `expiresAt`, soonest first, for expiry sweeps. Not versioned: it describes the head only.
    let expiries: Database

    static let names = [
        "meta", "events", "eventIDs", "byRecordedAt", "subjects", "questionsByAsked", "questions", "handles", "permissions",
        "subjectEvents", "handleSubjects", "handleChanges", "handleCheckpoints", "expiries",
    ]

    init(environment: Environment, create: Bool) throws {
        let dbs = try Self.names.map { try environment.openDatabase($0, create: create) }
        (meta, events, eventIDs, byRecordedAt, subjects, questionsByAsked, questions, handles, permissions) =
            (dbs[0], dbs[1], dbs[2], dbs[3], dbs[4], dbs[5], dbs[6], dbs[7], dbs[8])
        (subjectEvents, handleSubjects, handleChanges, handleCheckpoints, expiries) = (dbs[9], dbs[10], dbs[11], dbs[12], dbs[13])
    }

    func database(_ table: VersionedTable) -> Database {
        switch table {
        case .questions: questions
        case .handles: handles
        case .permissions: permissions
        }
    }

    /// Every table holding derived state, with its name: what `verify` compares against a rebuild.
    var derived: [(String, Database)] {
        [("eventIDs", eventIDs), ("byRecordedAt", byRecordedAt), ("subjects", subjects), ("questionsByAsked", questionsByAsked),
         ("questions", questions), ("handles", handles), ("permissions", permissions), ("subjectEvents", subjectEvents),
         ("handleSubjects", handleSubjects), ("handleChanges", handleChanges), ("handleCheckpoints", handleCheckpoints),
         ("expiries", expiries)]
    }
}

extension ReadTransaction {
    /// The latest version of `entity` in a versioned table at or before `seq`.
    func latest(_ db: Database, _ entity: consuming [UInt8], atMost seq: UInt64 = .max) throws -> (seq: UInt64, value: UnsafeRawBufferPointer)? {
        let cursor = try self.cursor(db)
        return try cursor.latest(entity, atMost: seq)
    }

    /// The stored event at `seq`, with its `seq`, `recordedAt` and `hash`.
    func event(_ tables: Tables, seq: UInt64) throws -> PermissionEvent? {
        guard let value = try get(tables.events, key: Keys.seq(seq)) else { return nil }
        return try decodeStoredEvent(value, seq: seq)
    }

    /// The header of the stored event at `seq` (see `EventRecord.decodeHeader`).
    func eventHeader(_ tables: Tables, seq: UInt64, id: Bool = true) throws -> EventRecord.Header? {
        guard let value = try get(tables.events, key: Keys.seq(seq)) else { return nil }
        return try decodeStoredHeader(value, id: id).header
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

/// A stored `events` value split into the chain hash in front and the event record after it.
private func storedParts(_ value: UnsafeRawBufferPointer) throws -> (hash: ChainHash, record: UnsafeRawBufferPointer) {
    guard value.count > 32 else { throw EventRecord.DecodingError(reason: "stored value of \(value.count) bytes is too short") }
    return (ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: value[0..<32]))), UnsafeRawBufferPointer(rebasing: value[32...]))
}

/// The header of a stored event (see `EventRecord.decodeHeader`), with the chain hash stored before its record.
func decodeStoredHeader(_ value: UnsafeRawBufferPointer, id: Bool = true) throws -> (header: EventRecord.Header, hash: ChainHash) {
    let stored = try storedParts(value)
    return (try EventRecord.decodeHeader(stored.record, id: id), stored.hash)
}

func decodeStoredEvent(_ value: UnsafeRawBufferPointer, seq: UInt64) throws -> PermissionEvent {
    let stored = try storedParts(value)
    var event = try EventRecord.decode(stored.record)
    event.seq = seq
    event.hash = stored.hash
    return event
}

/// The projection store over one LMDB write transaction.
final class LMDBStore: ProjectionStore {
    let txn: WriteTransaction
    let tables: Tables
    /// What the rules learned of the tables: given by the caller, perhaps from the write just before.
    let cache: WriterCache
    private var cursors: [VersionedTable: Cursor] = [:]
    /// Whether `storeEvent` appends to the log (false while rebuilding projections from it). A rebuild replays
    /// the stored log, which holds each event id once: it does not look the id up before each event, and an
    /// id found twice all the same (damage) fails the rebuild when `eventIDs` refuses it.
    var rewritesLog = true
    /// Cursors kept open on tables written at or near the same place again and again: LMDB puts a key that
    /// falls within the cursor's current page there without searching the tree from its root. `byRecordedAt`
    /// (whose keys ascend) and `questionsByAsked` (whose keys mostly do) are appended at the end; in `eventIDs`,
    /// ids that grow with time (counters, ULIDs, version 7 UUIDs) land next to the last one.
    private var keptCursors: [Database: Cursor] = [:]
    private var touchedSubjects: [ByteKey] = []
    /// While projections are rebuilt (`rewritesLog` false): each subject's seqs, in log order, not yet in
    /// `subjectEvents`. Nothing reads that table while it is rebuilt, so its rows are written subject by
    /// subject in key order (``flushHeldRows()``) instead of one random place in the tree per event.
    private var pendingSubjectEvents: [ByteKey: [UInt64]] = [:]
    private var pendingSubjectEventCount = 0
    /// While projections are rebuilt: the `expiries` keys of the pending questions that have an `expiresAt`,
    /// not yet written. Most questions end within the log, and their row would be written only to be deleted
    /// when they end: held back, it is neither, and the rest are written in key order (``flushHeldRows()``).
    private var pendingExpiries: Set<ByteKey> = []
    /// The most rows of each table a rebuild holds back (`subjectEvents`' seqs, `expiries`' keys) before it
    /// writes them.
    var heldRowLimit = 1 << 20
    /// The most entries each of the store's caches (``WriterCache``: question definitions, known subjects, handle changes
    /// since a subject's checkpoint, stored `handleSubjects` keys) holds before it is emptied, so that a rebuild of a large log, or a
    /// streamed append of millions of events in one transaction, keeps them bounded. Emptying one changes
    /// nothing but speed: what it held is read again from the transaction.
    var cacheLimit: Int

    init(txn: WriteTransaction, tables: Tables, cacheLimit: Int = 200_000, cache: WriterCache = WriterCache()) {
        self.txn = txn
        self.tables = tables
        self.cacheLimit = cacheLimit
        self.cache = cache
    }

    private func cursor(_ table: VersionedTable) throws -> Cursor {
        if let cursor = cursors[table] { return cursor }
        let cursor = try txn.cursor(tables.database(table))
        cursors[table] = cursor
        return cursor
    }

    /// Writes a version through the table's cursor: when the rules have just looked the entity up (a new
    /// question's id, a handle's current row), the cursor is already on the page the version belongs to, and
    /// LMDB puts it there without searching the tree again from its root.
    private func put(_ table: VersionedTable, _ entity: consuming [UInt8], seq: UInt64, value: [UInt8]) throws {
        try cursor(table).put(key: Keys.versioned(entity, seq), value: value)
    }

    func seq(ofLatestQuestionVersion id: UUID) throws -> UInt64? {
        try cursor(.questions).latest(Keys.uuid(id), atMost: .max)?.seq
    }

    func handle(subject: String, _ handle: CommunicationHandle) throws -> HandleRow? {
        try cursor(.handles).latest(Keys.handle(subject: subject, handle), atMost: .max).map { try HandleRow(decoding: $0.value) }
    }

    func putHandle(subject: String, _ row: HandleRow, seq: UInt64) throws {
        let encoded = row.encoded()
        try put(.handles, Keys.handle(subject: subject, row.handle), seq: seq, value: encoded)
        let handleSubject = ByteKey(Keys.handleSubject(row.handle, subject: subject))
        if !cache.handleSubjectsStored.contains(handleSubject) {
            do {
                try txn.put(tables.handleSubjects, key: handleSubject.bytes, value: Keys.seq(seq), flags: .noOverwrite)
            } catch {
                // keyExists: the subject had this handle already.
                guard error == .keyExists else { throw error }
            }
            if cache.handleSubjectsStored.count >= cacheLimit { cache.handleSubjectsStored.removeAll(keepingCapacity: true) }
            cache.handleSubjectsStored.insert(handleSubject)
        }
        let subjectKey = ByteKey(Keys.subjectPrefix(subject))
        let changes = try cache.changesSinceCheckpoint[subjectKey]
            ?? HandleSets.changesSinceCheckpoint(txn.reader, tables, subjectPrefix: subjectKey.bytes)
        try txn.put(tables.handleChanges, key: Keys.handleChange(subject: subject, seq: seq, row.handle), value: encoded)
        cache.changesSinceCheckpoint[subjectKey] = changes + 1
        if !touchedSubjects.contains(subjectKey) { touchedSubjects.append(subjectKey) }
    }

    func endEvent(seq: UInt64) throws {
        for subject in touchedSubjects where cache.changesSinceCheckpoint[subject]! >= HandleCheckpoint.interval {
            let rows = try HandleSets.sortedRows(txn.reader, tables, subjectPrefix: subject.bytes, atMost: seq)
            try txn.put(tables.handleCheckpoints, key: Keys.versioned(subject.bytes, seq), value: HandleCheckpoint.encode(sortedRows: rows))
            cache.changesSinceCheckpoint[subject] = 0
        }
        touchedSubjects.removeAll(keepingCapacity: true)
        // Between events the counts are only a cache of what `handleChanges` and `handleCheckpoints` hold
        // (this transaction's rows included): a long transaction (a streamed import) keeps it bounded.
        if cache.changesSinceCheckpoint.count >= cacheLimit { cache.changesSinceCheckpoint.removeAll(keepingCapacity: true) }
    }

    func putPermission(subject: String, _ row: PermissionRow, seq: UInt64) throws {
        try put(.permissions, Keys.permission(subject: subject, row.permission), seq: seq, value: row.encoded())
    }

    func seq(ofEventID id: String) throws -> UInt64? {
        guard rewritesLog else { return nil }
        return try keptCursor(tables.eventIDs).seek(Array(id.utf8)).map { Keys.decodeSeq($0.value) }
    }

    /// Writes the `subjectEvents` and `expiries` rows a rebuild holds back, in key order: a subject's seqs are
    /// neighbours in the tree, as are the expiries of one time, so each row goes where the cursor already is.
    /// A rebuild calls it before it commits.
    func flushHeldRows() throws {
        if pendingSubjectEventCount > 0 {
            let cursor = try txn.cursor(tables.subjectEvents)
            for subject in pendingSubjectEvents.keys.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
                for seq in pendingSubjectEvents[subject]! {
                    try cursor.put(key: Keys.versioned(subject.bytes, seq), value: [])
                }
            }
            pendingSubjectEvents.removeAll(keepingCapacity: true)
            pendingSubjectEventCount = 0
        }
        if !pendingExpiries.isEmpty {
            let cursor = try txn.cursor(tables.expiries)
            for key in pendingExpiries.sorted(by: { $0.bytes.lexicographicallyPrecedes($1.bytes) }) {
                try cursor.put(key: key.bytes, value: [])
            }
            pendingExpiries.removeAll(keepingCapacity: true)
        }
    }

    /// Writes a row whose key most likely sorts after every key of `db`: appended through a cursor kept at
    /// the end when it does, stored as by `txn.put` (with `flags`) when it does not.
    private func putMostlyAscending(_ db: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws {
        let cursor = try keptCursor(db)
        do {
            try cursor.put(key: key, value: value, flags: .append)
        } catch {
            // keyExists: the key does not sort after the last one.
            guard error == .keyExists else { throw error }
            try txn.put(db, key: key, value: value, flags: flags)
        }
    }

    private func keptCursor(_ db: Database) throws -> Cursor {
        if let cursor = keptCursors[db] { return cursor }
        let cursor = try txn.cursor(db)
        keptCursors[db] = cursor
        return cursor
    }

    func storedEvent(_ seq: UInt64) throws -> PermissionEvent {
        guard let event = try txn.reader.event(tables, seq: seq) else {
            throw EventRecord.DecodingError(reason: "seq \(seq) is indexed but missing from the log")
        }
        return event
    }

    func question(_ id: UUID) throws -> QuestionDefinition? {
        if let cached = cache.definitions[id] { return cached }
        guard let latest = try cursor(.questions).latest(Keys.uuid(id), atMost: .max) else { return nil }
        let row = try QuestionRow(decoding: latest.value)
        guard case .questionAsked(let question) = try storedEvent(row.askedSeq).payload else {
            throw EventRecord.DecodingError(reason: "seq \(row.askedSeq) is not the question.asked of \(id.uuidString)")
        }
        let definition = QuestionDefinition(question: question, row: row)
        remember(definition)
        return definition
    }

    func updateQuestion(_ id: UUID, row: QuestionRow, seq: UInt64) throws {
        try put(.questions, Keys.uuid(id), seq: seq, value: row.encoded())
        if row.state == .pending {
            cache.definitions[id]?.row = row
        } else {
            // Most questions meet no event after they stop being pending; the few that do (a late answer, a
            // repeated one) read their definition again. So the cache holds about the pending questions alone.
            cache.definitions.removeValue(forKey: id)
            if let expiresAt = row.expiresAt {
                let key = Keys.expiry(expiresAt, question: id)
                // A row a rebuild holds back is not in the table yet.
                if rewritesLog || pendingExpiries.remove(ByteKey(key)) == nil {
                    try txn.delete(tables.expiries, key: key)
                }
            }
        }
    }

    func isKnownSubject(_ subject: String) throws -> Bool {
        let key = ByteKey(Array(subject.utf8))
        if cache.subjectsSeen.contains(key) { return true }
        if try txn.get(tables.subjects, key: key.bytes) != nil {
            rememberSubject(key)
            return true
        }
        return false
    }

    /// Caches that a subject is known, for the rest of the transaction, bounded like the definitions.
    private func rememberSubject(_ key: ByteKey) {
        if cache.subjectsSeen.count >= cacheLimit { cache.subjectsSeen.removeAll(keepingCapacity: true) }
        cache.subjectsSeen.insert(key)
    }

    func storeEvent(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws {
        let seqKey = Keys.seq(seq)
        if rewritesLog {
            try txn.put(tables.events, key: seqKey, value: hash.bytes + record, flags: .append)
            try txn.put(tables.subjectEvents, key: Keys.versioned(Keys.subjectPrefix(event.subject), seq), value: [])
        } else {
            pendingSubjectEvents[ByteKey(Keys.subjectPrefix(event.subject)), default: []].append(seq)
            pendingSubjectEventCount += 1
            if pendingSubjectEventCount >= heldRowLimit { try flushHeldRows() }
        }
        let ids = try keptCursor(tables.eventIDs)
        do {
            try ids.put(key: Array(event.id.utf8), value: seqKey, flags: .noOverwrite)
        } catch {
            // Appends look the id up first; a rebuild meets a second event with the same id only in a damaged log.
            guard error == .keyExists, !rewritesLog else { throw error }
            throw LedgerError(.damaged, "the event's id \(quoted(event.id)) is already used by an earlier event", seq: seq)
        }
        try keptCursor(tables.byRecordedAt).put(key: Keys.versioned(Keys.time(event.recordedAt!), seq), value: [], flags: .append)
        if newSubject {
            try txn.put(tables.subjects, key: Array(event.subject.utf8), value: seqKey, flags: .noOverwrite)
            rememberSubject(ByteKey(Array(event.subject.utf8)))
        }
        if case .questionAsked(let question) = event.payload {
            try putMostlyAscending(tables.questionsByAsked, key: Keys.asked(event.occurredAt, question: question.id), value: seqKey)
            let row = QuestionRow(askedSeq: seq, subject: event.subject, askedAt: event.occurredAt, expiresAt: question.expiresAt, state: .pending)
            try put(.questions, Keys.uuid(question.id), seq: seq, value: row.encoded())
            if let expiresAt = question.expiresAt {
                let key = Keys.expiry(expiresAt, question: question.id)
                if rewritesLog {
                    try txn.put(tables.expiries, key: key, value: [])
                } else {
                    pendingExpiries.insert(ByteKey(key))
                    if pendingExpiries.count >= heldRowLimit { try flushHeldRows() }
                }
            }
            remember(QuestionDefinition(question: question, row: row))
        }
    }

    /// Caches a definition for the rest of the transaction; a rebuild of a large log keeps the cache bounded.
    private func remember(_ definition: QuestionDefinition) {
        if cache.definitions.count >= cacheLimit { cache.definitions.removeAll(keepingCapacity: true) }
        cache.definitions[definition.question.id] = definition
    }
}

/// The projection store in memory: the fastest way to replay a log into current state, and (with
/// `keepsRows`) every row a rebuild implies, encoded as LMDB holds it, to compare with the kept projections.
final class MemoryStore: ProjectionStore {
    let keepsRows: Bool
    /// Whether events are kept to tell a duplicate from a reused id: a log replay never needs them.
    let keepsEvents: Bool
    /// Every row written, per table name, as LMDB would hold it (only when `keepsRows`).
    private var recorded: [String: [([UInt8], [UInt8])]] = [:]
    /// The keys of the `expiries` table: rows there are deleted as well as written.
    private var expiries: Set<ByteKey> = []

    /// Every row the derived tables hold, per table name, as LMDB would hold it (only when `keepsRows`).
    var rows: [String: [([UInt8], [UInt8])]] {
        var rows = recorded
        if keepsRows { rows["expiries"] = expiries.map { ($0.bytes, []) } }
        return rows
    }
    /// A subject's entity, compared by the subject's bytes as LMDB keys are.
    private struct SubjectKey<T: Hashable>: Hashable {
        var subject: ByteKey
        var item: T

        init(subject: String, item: T) {
            self.subject = ByteKey(Array(subject.utf8))
            self.item = item
        }
    }
    private var handles: [SubjectKey<CommunicationHandle>: HandleRow] = [:]
    private var permissions: [SubjectKey<SystemPermission>: PermissionRow] = [:]
    private var questions: [UUID: (definition: QuestionDefinition, seq: UInt64)] = [:]
    private var eventIDs: [ByteKey: UInt64] = [:]
    /// The records of stored events, kept when `keepsEvents`, decoded only for a duplicate, as LMDB's are.
    private var records: [UInt64: [UInt8]] = [:]
    private var subjects: Set<ByteKey> = []
    /// Per subject, when keeping rows: every handle's latest row and the changes since the last checkpoint.
    private var handleSets: [ByteKey: (rows: [ByteKey: HandleRow], changes: Int)] = [:]
    private var touchedSubjects: [ByteKey] = []

    init(keepsRows: Bool, keepsEvents: Bool = false) {
        self.keepsRows = keepsRows
        self.keepsEvents = keepsRows || keepsEvents
    }

    private func record(_ table: String, _ key: @autoclosure () -> [UInt8], _ value: @autoclosure () -> [UInt8]) {
        if keepsRows { recorded[table, default: []].append((key(), value())) }
    }

    func seq(ofEventID id: String) throws -> UInt64? { eventIDs[ByteKey(Array(id.utf8))] }

    func storedEvent(_ seq: UInt64) throws -> PermissionEvent {
        guard let record = records[seq] else { throw EventRecord.DecodingError(reason: "seq \(seq) not replayed") }
        return try record.withUnsafeBytes { bytes throws(EventRecord.DecodingError) in try EventRecord.decode(bytes) }
    }

    func question(_ id: UUID) throws -> QuestionDefinition? { questions[id]?.definition }

    func seq(ofLatestQuestionVersion id: UUID) throws -> UInt64? { questions[id]?.seq }

    func updateQuestion(_ id: UUID, row: QuestionRow, seq: UInt64) throws {
        questions[id]?.definition.row = row
        questions[id]?.seq = seq
        record("questions", Keys.versioned(Keys.uuid(id), seq), row.encoded())
        if keepsRows, row.state != .pending, let expiresAt = row.expiresAt {
            expiries.remove(ByteKey(Keys.expiry(expiresAt, question: id)))
        }
    }

    func handle(subject: String, _ handle: CommunicationHandle) throws -> HandleRow? {
        handles[SubjectKey(subject: subject, item: handle)]
    }

    func putHandle(subject: String, _ row: HandleRow, seq: UInt64) throws {
        let key = SubjectKey(subject: subject, item: row.handle)
        if keepsRows {
            if handles[key] == nil { record("handleSubjects", Keys.handleSubject(row.handle, subject: subject), Keys.seq(seq)) }
            let subjectKey = ByteKey(Keys.subjectPrefix(subject))
            let handleKey = ByteKey(Keys.handleOnly(row.handle))
            record("handleChanges", Keys.handleChange(subject: subject, seq: seq, row.handle), row.encoded())
            handleSets[subjectKey, default: ([:], 0)].rows[handleKey] = row
            handleSets[subjectKey]!.changes += 1
            if !touchedSubjects.contains(subjectKey) { touchedSubjects.append(subjectKey) }
        }
        handles[key] = row
        record("handles", Keys.versioned(Keys.handle(subject: subject, row.handle), seq), row.encoded())
    }

    func putPermission(subject: String, _ row: PermissionRow, seq: UInt64) throws {
        permissions[SubjectKey(subject: subject, item: row.permission)] = row
        record("permissions", Keys.versioned(Keys.permission(subject: subject, row.permission), seq), row.encoded())
    }

    func isKnownSubject(_ subject: String) throws -> Bool { subjects.contains(ByteKey(Array(subject.utf8))) }

    func endEvent(seq: UInt64) throws {
        for subject in touchedSubjects where handleSets[subject]!.changes >= HandleCheckpoint.interval {
            record("handleCheckpoints", Keys.versioned(subject.bytes, seq), HandleCheckpoint.encode(handleSets[subject]!.rows.map { ($0.key, $0.value) }))
            handleSets[subject]!.changes = 0
        }
        touchedSubjects.removeAll(keepingCapacity: true)
    }

    func storeEvent(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws {
        eventIDs[ByteKey(Array(event.id.utf8))] = seq
        // Only duplicates consult stored events, and a log replay holds none: keep them only when asked.
        if keepsEvents { records[seq] = record }
        let seqKey = Keys.seq(seq)
        self.record("eventIDs", Array(event.id.utf8), seqKey)
        self.record("byRecordedAt", Keys.versioned(Keys.time(event.recordedAt!), seq), [])
        self.record("subjectEvents", Keys.versioned(Keys.subjectPrefix(event.subject), seq), [])
        if newSubject {
            subjects.insert(ByteKey(Array(event.subject.utf8)))
            self.record("subjects", Array(event.subject.utf8), seqKey)
        }
        if case .questionAsked(let question) = event.payload {
            self.record("questionsByAsked", Keys.asked(event.occurredAt, question: question.id), seqKey)
            let row = QuestionRow(askedSeq: seq, subject: event.subject, askedAt: event.occurredAt, expiresAt: question.expiresAt, state: .pending)
            questions[question.id] = (QuestionDefinition(question: question, row: row), seq)
            self.record("questions", Keys.versioned(Keys.uuid(question.id), seq), row.encoded())
            if keepsRows, let expiresAt = question.expiresAt {
                expiries.insert(ByteKey(Keys.expiry(expiresAt, question: question.id)))
            }
        }
    }

    /// How many questions were replayed.
    var questionCount: Int { questions.count }
}

/// The acceptance rules applied to offered events in memory, with no storage: what an append does besides
/// writing (the rules, the record's encoding, the chain hash), with every accepted event's record kept in a
/// dictionary so that a duplicate is told from a reused id. The benchmark suite measures it as a ceiling for
/// the engines that run these very rules: the ledger, and its SQLite twin.
@_spi(StorageEngine) public struct InMemoryRules {
    private var projector = Projector(store: MemoryStore(keepsRows: false, keepsEvents: true), head: .empty)
    private let clock: () -> Timestamp

    /// - Parameter clock: assigns `recordedAt` to events that have none, as ``Ledger/Options/clock`` does.
    public init(clock: @escaping () -> Timestamp = { Timestamp(Date()) }) {
        self.clock = clock
    }

    /// The head after the events accepted so far.
    public var head: LogHead { projector.head }

    /// Offers `events` in order, as one batch of ``Ledger/appendSynchronously(_:)`` would, and returns how
    /// many were appended (the others were duplicates). Throws the first rejection; the events before it stay
    /// applied.
    public mutating func apply(_ events: [PermissionEvent]) throws -> Int {
        var appended = 0
        for event in events {
            if case .appended = try projector.apply(event, clock: clock) { appended += 1 }
        }
        return appended
    }
}

/// A byte-string dictionary key hashed in one pass (an array of bytes hashes element by element).
struct ByteKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Reading a subject's handle set through its checkpoints and change log.
enum HandleSets {
    /// Every handle's latest row for the subject at or before `seq`, ordered by handle: the latest checkpoint,
    /// then the changes after it.
    ///
    /// A checkpoint holds its rows in key order, which is the handles' order but for values over 200
    /// bytes (keyed by their hash); at most a checkpoint interval of changes is then merged in by binary
    /// search. No dictionary, no keys rebuilt from handles, no sort in the usual case.
    static func sortedRows(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8], atMost seq: UInt64) throws -> [HandleRow] {
        var rows: [HandleRow] = []
        var from: UInt64 = 1
        if let checkpoint = try txn.cursor(tables.handleCheckpoints).latest(prefix, atMost: seq) {
            rows = try HandleCheckpoint.decodeRows(checkpoint.value)
            from = checkpoint.seq + 1
            if !zip(rows, rows.dropFirst()).allSatisfy({ $0.handle < $1.handle }) { rows.sort { $0.handle < $1.handle } }
        }
        guard from <= seq else { return rows }
        let cursor = try txn.cursor(tables.handleChanges)
        var entry = try cursor.seek(atOrAfter: Keys.versioned(prefix, from))
        while let e = entry, e.key.count > prefix.count + 8, e.key.starts(with: prefix) {
            let changeSeq = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: e.key[prefix.count..<(prefix.count + 8)]))
            if changeSeq > seq { break }
            let row = try HandleRow(decoding: e.value)
            var low = 0, high = rows.count
            while low < high {
                let middle = (low + high) / 2
                if rows[middle].handle < row.handle { low = middle + 1 } else { high = middle }
            }
            if low < rows.count, rows[low].handle == row.handle { rows[low] = row } else { rows.insert(row, at: low) }
            entry = try cursor.next()
        }
        return rows
    }

    /// How many changes of the subject's handles follow its latest checkpoint.
    static func changesSinceCheckpoint(_ txn: ReadTransaction, _ tables: Tables, subjectPrefix prefix: [UInt8]) throws -> Int {
        let from = try txn.cursor(tables.handleCheckpoints).latest(prefix, atMost: .max).map { $0.seq + 1 } ?? 1
        let cursor = try txn.cursor(tables.handleChanges)
        var count = 0
        var entry = try cursor.seek(atOrAfter: Keys.versioned(prefix, from))
        while let e = entry, e.key.count > prefix.count + 8, e.key.starts(with: prefix) {
            count += 1
            entry = try cursor.next()
        }
        return count
    }
}
