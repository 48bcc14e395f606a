internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

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
    /// The handle rows the event being written changed, in the order written, per subject (with its key prefix).
    private var eventHandleRows: [(subject: String, prefix: [UInt8], rows: [HandleRow])] = []
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
    /// The most entries each of the store's caches (``WriterCache``: question definitions, known subjects, stored
    /// `handleSubjects` keys, subjects' `handleSets` states) holds before it is emptied, so that a rebuild of a large log, or a
    /// streamed append of millions of events in one transaction, keeps them bounded. Emptying one changes
    /// nothing but speed: what it held is read again from the transaction.
    var cacheLimit: Int

    init(txn: WriteTransaction, tables: Tables, cacheLimit: Int = 200_000, cache: WriterCache = WriterCache()) {
        self.txn = txn
        self.tables = tables
        self.cacheLimit = cacheLimit
        self.cache = cache
        // Not lazy: a lazy property is changed through a copy, which would copy the chunks held on each change.
        pendingChunks = HandleDirectory.PendingChunks(known: cache, knownLimit: min(cacheLimit, WriterCache.lastChunkLimit))
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

    /// The seq of the event whose record was made last: the one the rules are applying.
    private var recordingSeq: UInt64 = 0

    /// `handle` as the tables hold it: in a ledger whose personal fields are sealed, appended events' handles
    /// are replaced by their tokens (``TokenHasher/tokenHandle(_:)``); a rebuild reads the tokens from the
    /// records, and a ledger of format 1 keeps handles as they are.
    private func stored(_ handle: CommunicationHandle, subject: String) throws -> CommunicationHandle {
        if let token = DataKeys.givenToken(handle) { return token }
        guard rewritesLog, let keyRing = tables.keyRing else { return handle }
        if recordingTokens.subject == subject, let tokens = recordingTokens.tokens { return token(of: handle, tokens).handle }
        return token(of: handle, try tokens(of: subject, keyRing)).handle
    }

    /// The tokens of the subject of the event whose record was made last: the rules look its handles up and write
    /// their rows, and each would otherwise find the subject's tokens again.
    private var recordingTokens: (subject: String, tokens: WriterCache.SubjectTokens?) = ("", nil)

    /// The token hash of `subject`'s handles in the event being written, with the tokens it made, found once and
    /// kept in ``cache``: a subject's lookup key holds from one seq on, so one found for an earlier event holds for a
    /// later one until a new generation starts, which only an erasure does (``erase(subject:_:seq:recordedAt:)``
    /// empties the cache).
    private func tokens(of subject: String, _ keyRing: KeyRing) throws -> WriterCache.SubjectTokens {
        let key = ByteKey(Array(subject.utf8))
        if let known = cache.tokenHashers[key] { return known }
        if cache.tokenHashers.count >= cacheLimit {
            cache.tokenHashers.removeAll()
            cache.tokensMade = 0
        }
        let tokens = WriterCache.SubjectTokens(hasher: try keyRing.tokenHasherForWriting(txn, tables, subject: subject, seq: recordingSeq))
        cache.tokenHashers[key] = tokens
        return tokens
    }

    /// The token of `handle` among a subject's `tokens`, made once and kept (up to ``WriterCache/tokenLimit``).
    private func token(of handle: CommunicationHandle, _ tokens: WriterCache.SubjectTokens) -> WriterCache.Token {
        if let known = tokens.made[handle] { return known }
        if cache.tokensMade >= cache.tokenLimit { cache.forgetTokens() }
        let bytes = tokens.hasher.token(handle)
        let token = WriterCache.Token(bytes: bytes, handle: DataKeys.tokenHandle(kind: handle.kind, token: bytes))
        tokens.made[handle] = token
        cache.tokensMade += 1
        return token
    }

    /// The salts and commitments made ahead for the batch being applied, if any, and the place in it of the event the
    /// rules are applying: set by ``GroupCommitter/apply(_:store:head:clock:progress:)`` as it gives each event.
    var commitmentsAhead: CommitmentsAhead?
    var pulledIndex = 0
    /// How many records this store sealed with a salt and commitment made ahead.
    private(set) var commitmentsTakenAhead = 0

    /// The handle values chunks the events written so far changed, not yet sealed: ``finishWriting()`` writes them.
    private var pendingChunks: HandleDirectory.PendingChunks

    /// Writes what the store holds back from the transaction while events are appended: called once the last
    /// event is applied, before the transaction commits.
    func finishWriting() throws {
        try writeFinished()
        guard !pendingChunks.isEmpty, let keyRing = tables.keyRing else { return }
        try pendingChunks.write(txn, tables, keyRing)
    }

    /// What gives the event keys of a subject's day, found once and kept in ``cache``: a generation holds from its
    /// seq on, until an erasure starts a new one.
    private func eventKeys(subject: String, recordedAt: Timestamp, _ keyRing: KeyRing) throws -> EventKeys {
        let day = DataKeys.day(of: recordedAt)
        var bytes = Keys.subjectPrefix(subject)
        bytes.appendSeq(UInt64(bitPattern: day))
        let key = ByteKey(bytes)
        if let known = cache.eventKeys[key] { return known }
        if cache.eventKeys.count >= cacheLimit { cache.eventKeys.removeAll() }
        let keys = try keyRing.eventKeysForWriting(txn, tables, subject: subject, day: day, seq: recordingSeq)
        cache.eventKeys[key] = keys
        return keys
    }

    func record(_ event: PermissionEvent, recordedAt: Timestamp, seq: UInt64) throws -> (stored: [UInt8], chained: [UInt8]) {
        guard let keyRing = tables.keyRing else {
            if event.erasedFields != nil {
                throw EventRejection("an erased event can be imported only into a ledger whose personal fields are sealed (storage format 2 or later)", eventType: event.type.rawValue)
            }
            let record = EventRecord.encode(event, recordedAt: recordedAt)
            return (record, record)
        }
        recordingSeq = seq
        // The subject's tokens are found when the event has a handle, and kept for the rules' lookups.
        recordingTokens = ("", nil)
        if let fields = event.erasedFields {
            let record = SealedRecord.erased(event, recordedAt: recordedAt, fields: fields)
            recorded = Recorded(seq: seq, commitment: fields.commitment)
            return (record.stored(), record.chained)
        }
        var ahead: CommitmentsAhead.Made?
        func subjectTokens() throws -> WriterCache.SubjectTokens {
            if let tokens = recordingTokens.tokens { return tokens }
            let tokens = try self.tokens(of: event.subject, keyRing)
            recordingTokens = (event.subject, tokens)
            return tokens
        }
        var sealed = try SealedRecord.prepare(
            event, seq: seq, recordedAt: recordedAt,
            eventKey: try eventKeys(subject: event.subject, recordedAt: recordedAt, keyRing).key(seq: seq),
            token: { token(of: $0, try subjectTokens()).bytes }, secrets: keyRing.secrets,
            ahead: { ahead = commitmentsAhead?.made(at: pulledIndex); return ahead }())
        if let ahead, sealed.salt == ahead.salt { commitmentsTakenAhead += 1 }
        var made = Recorded(seq: seq, commitment: sealed.salt == nil ? nil : Array(sealed.record.chained.suffix(SealedFields.commitmentSize)))
        if let sealing = sealed.sealing {
            if tables.tree != nil {
                // Sealed on the second thread (``storeEvent(_:seq:record:hash:newSubject:)``); until then the
                // record stands without its box, which only the box's own readers miss.
                made.sealing = (sealed.record, sealing)
            } else {
                sealed.record.box = try sealing.sealed()
            }
        }
        let handles = SealedRecord.handles(of: event)
        if !handles.isEmpty, rewritesLog {
            made.handleValues = zip(sealed.record.tokenList, handles).map { HandleDirectory.Entry(token: $0, handle: $1) }
        }
        recorded = made
        // A record whose box is sealed on the second thread is made whole there too: nothing reads its stored bytes
        // before (``storeEvent(_:seq:record:hash:newSubject:)`` hands them to ``finish(_:seq:record:hash:newSubject:)``).
        return (made.sealing == nil ? sealed.record.stored() : [], sealed.record.chained)
    }

    func erase(subject: String, _ erasure: Erasure, seq: UInt64, recordedAt: Timestamp) throws {
        guard rewritesLog, let keyRing = tables.keyRing else { return }
        // The erasure reads and rewrites the subject's events and handle values: they are all written first.
        try writeFinished()
        try pendingChunks.write(txn, tables, keyRing)
        // A cut after the erasure's own time covers all the subject's events before it: a whole erasure.
        let before = erasure.before.flatMap { $0 > recordedAt ? nil : $0 }
        try keyRing.erase(txn, tables, subject: subject, basis: erasure.basis, before: before, erasureSeq: seq)
        cache.forgetKeys()
        recordingTokens = ("", nil)
        // The erased questions' handles are known from now on by their tokens alone (``question(_:)``).
        cache.definitions.removeAll(keepingCapacity: true)
    }

    func handle(subject: String, _ handle: CommunicationHandle) throws -> HandleRow? {
        let handle = try stored(handle, subject: subject)
        return try cursor(.handles).latest(Keys.handle(subject: subject, handle), atMost: .max).map { try HandleRow(decoding: $0.value) }
    }

    func putHandle(subject: String, _ given: HandleRow, seq: UInt64) throws {
        var row = given
        row.handle = try stored(given.handle, subject: subject)
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
        // An event's rows are nearly always of one subject; subjects compare by their bytes, as keys do.
        if let index = eventHandleRows.firstIndex(where: { $0.subject.utf8.elementsEqual(subject.utf8) }) {
            eventHandleRows[index].rows.append(row)
        } else {
            eventHandleRows.append((subject, Keys.subjectPrefix(subject), [row]))
        }
    }

    /// Records what the event changed of each subject's handle set: its rows, or the whole set once enough
    /// changes followed the last whole set (``HandleSetRecord/recordsWholeSet(changesSinceWholeSet:wholeSetCount:)``).
    func endEvent(seq: UInt64) throws {
        guard !eventHandleRows.isEmpty else { return }
        for (_, prefix, changed) in eventHandleRows {
            let subject = ByteKey(prefix)
            var state = try cache.handleSetStates[subject] ?? HandleSets.state(txn.reader, tables, subjectPrefix: prefix)
            let record = try HandleSets.record(changed: changed, state: &state) {
                try HandleSets.sortedRows(txn.reader, tables, subjectPrefix: prefix, atMost: seq - 1)
            }
            try txn.put(tables.handleSets, key: Keys.versioned(prefix, seq), value: record.encoded())
            if cache.handleSetStates.count >= cacheLimit { cache.handleSetStates.removeAll(keepingCapacity: true) }
            cache.handleSetStates[subject] = state
        }
        eventHandleRows.removeAll(keepingCapacity: true)
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
        try writeFinished()
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

    /// The stored event at `seq` as the rules see it: with its personal fields when appending, and with its
    /// handles as the tables hold them (tokens, in sealed records) when rebuilding, as every event of a rebuild is.
    func storedEvent(_ seq: UInt64) throws -> PermissionEvent {
        try writeFinished(before: seq)
        if !rewritesLog {
            guard let value = try txn.get(tables.events, key: Keys.seq(seq)), value.count > 32 else {
                throw EventRecord.DecodingError(reason: "seq \(seq) is indexed but missing from the log")
            }
            var event = try replayedEvent(UnsafeRawBufferPointer(rebasing: value[32...])).event
            event.seq = seq
            return event
        }
        guard let event = try txn.reader.event(tables, seq: seq) else {
            throw EventRecord.DecodingError(reason: "seq \(seq) is indexed but missing from the log")
        }
        return event
    }

    /// The `question.asked` at `seq` as the rules need it. Where records are sealed, its handles are the tokens its
    /// record holds, marked as given (``DataKeys/markedTokenHandle(kind:token:)``): they are what the tables hold
    /// for them, erased or not, and a rebuild reads the same; no key is needed.
    private func askedEvent(_ seq: UInt64) throws -> PermissionEvent {
        guard rewritesLog, tables.keys != nil else { return try storedEvent(seq) }
        try writeFinished(before: seq)
        guard let value = try txn.get(tables.events, key: Keys.seq(seq)), value.count > 32 else {
            throw EventRecord.DecodingError(reason: "seq \(seq) is indexed but missing from the log")
        }
        let tokenized = try replayedEvent(UnsafeRawBufferPointer(rebasing: value[32...])).event
        return SealedRecord.replacingHandles(of: tokenized, DataKeys.marked)
    }

    func question(_ id: UUID) throws -> QuestionDefinition? {
        if let cached = cache.definitions[id] { return cached }
        guard let latest = try cursor(.questions).latest(Keys.uuid(id), atMost: .max) else { return nil }
        let row = try QuestionRow(decoding: latest.value)
        guard case .questionAsked(let question) = try askedEvent(row.askedSeq).payload else {
            throw EventRecord.DecodingError(reason: "seq \(row.askedSeq) is not the question.asked of \(id.uuidString)")
        }
        let definition = QuestionDefinition(question: question, row: row)
        remember(definition)
        return definition
    }

    func updateQuestion(_ id: UUID, row given: QuestionRow, seq: UInt64) throws {
        var row = given
        // An ask failure's message is personal: where records are sealed, the row keeps the code alone, and the
        // message is read from the failure's event (as a replay of sealed records, which hold no message, makes it).
        if tables.keys != nil { row.error?.message = nil }
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
        // With a Merkle tree, the second thread makes the event's leaf and its `events` entry
        // (``finish(_:seq:record:hash:newSubject:)``).
        if tables.tree != nil { try finish(event, seq: seq, record: record, hash: hash, newSubject: newSubject) }
        let seqKey = Keys.seq(seq)
        if rewritesLog {
            if tables.tree == nil { try txn.put(tables.events, key: seqKey, value: hash.bytes + record, flags: .append) }
            if let recorded, recorded.seq == seq, !recorded.handleValues.isEmpty, let keyRing = tables.keyRing {
                try pendingChunks.add(recorded.handleValues, subject: event.subject, seq: seq, txn, tables, keyRing)
            }
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

    /// What the record ``record(_:recordedAt:seq:)`` made last leaves to the storing of its event. Each record made
    /// replaces it, so that an event rejected after its record was made (its given hash did not match) leaves
    /// nothing to the next, which takes the same seq.
    private struct Recorded {
        var seq: UInt64
        /// The commitment: the leaf of an event this transaction records is made from the event in memory with
        /// it, without reading its record again.
        var commitment: [UInt8]?
        /// The record without its box, and what sealing its personal fields takes: the box is sealed on the second
        /// thread (``finish(_:seq:record:hash:newSubject:)``).
        var sealing: (record: SealedRecord, sealing: SealedFields.Sealing)?
        /// The values of its handles, by token: added to ``pendingChunks`` once the event is stored.
        var handleValues: [HandleDirectory.Entry] = []
    }
    private var recorded: Recorded?
    /// The right edge of the Merkle tree, for the leaves this transaction adds.
    private var treeAppender = TreeAppender()
    /// The leaves and `events` entries of the events stored and not yet written, made on a second thread.
    private lazy var finishing = EventFinishing()
    /// The seq of each subject's latest event this transaction stored: the next one's leaf names it.
    private var latestSeqOfSubject: [ByteKey: UInt64] = [:]

    /// Hands the event's leaf, with the seq of its subject's event before it, and, when appending, its `events`
    /// entry, its personal fields sealed there, to ``finishing``: ``writeFinished()`` writes the entry and adds the
    /// leaf to the Merkle tree (``StoredTree``).
    private func finish(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws {
        let subject = ByteKey(Keys.subjectPrefix(event.subject))
        var previous: UInt64?
        if !newSubject {
            // A rebuild holds its subjectEvents rows back; an append has written the earlier ones.
            previous = try latestSeqOfSubject[subject] ?? pendingSubjectEvents[subject]?.last
                ?? txn.reader.latest(tables.subjectEvents, subject.bytes, atMost: seq - 1)?.seq
        }
        if latestSeqOfSubject.count >= cacheLimit { latestSeqOfSubject.removeAll(keepingCapacity: true) }
        latestSeqOfSubject[subject] = seq
        if let recorded, recorded.seq == seq {
            // Appended: the event as recorded, its personal members left out as they are in the record's envelope,
            // and the record with its box sealed.
            finishing.add(seq: seq) { [event, previous] in
                let data = LeafData.make(envelope: event, seq: seq, commitment: recorded.commitment, subjectPrevious: previous)
                var stored = record
                if var (sealed, sealing) = recorded.sealing {
                    sealed.box = try sealing.sealed()
                    stored = sealed.stored()
                }
                assert(data == (try? LeafData.of(storedRecord: stored, seq: seq, subjectPrevious: { _ in previous })),
                       "the leaf of seq \(seq) made from the event differs from the one its record gives")
                return .init(leaf: data, entry: hash.bytes + stored)
            }
        } else {
            // The record as it is: appended to a ledger of format 1, or stored already (a rebuild, which writes no
            // entry).
            let entry = rewritesLog ? hash.bytes + record : nil
            finishing.add(seq: seq) { [previous] in
                .init(leaf: try LeafData.of(storedRecord: record, seq: seq, subjectPrevious: { _ in previous }), entry: entry)
            }
        }
        // What is made waits in memory until written: a transaction of millions of events writes it as it goes.
        if finishing.count >= Self.leavesHeldBack { try writeFinished() }
    }

    /// The events ``finishing`` holds at most before what it made of them is written.
    static let leavesHeldBack = 16_384

    /// Writes what ``finishing`` made so far, in seq order: each appended event's `events` entry, and each leaf,
    /// added to the Merkle tree with its entries (``StoredTree``). Called before the transaction commits
    /// (``finishWriting()``, ``flushHeldRows()``), as events pile up, and before the transaction reads an event
    /// it stored (``writeFinished(before:)``).
    private func writeFinished() throws {
        guard let tree = tables.tree, finishing.count > 0 else { return }
        for finished in try finishing.take() {
            let seq = finished.seq
            if let entry = finished.entry { try keptCursor(tables.events).put(key: Keys.seq(seq), value: entry, flags: .append) }
            guard let leaf = finished.leaf else { continue }
            let entry = try treeAppender.entry(leaf: leaf, seq: seq) { level, index in
                try StoredTree.subtree(txn.reader, tree, level: level, index: index)
            }
            try keptCursor(tree).put(key: Keys.seq(seq), value: entry, flags: .append)
            if let top = tables.treeTop {
                for (key, hash) in StoredTree.upperRows(of: entry, seq: seq) { try txn.put(top, key: key, value: Array(hash)) }
            }
        }
    }

    /// ``writeFinished()`` when the event at `seq` is one of those whose `events` entry waits: before it is read.
    private func writeFinished(before seq: UInt64) throws {
        if tables.tree != nil, let first = finishing.firstSeq, seq >= first { try writeFinished() }
    }

    /// Caches a definition for the rest of the transaction; a rebuild of a large log keeps the cache bounded.
    private func remember(_ definition: QuestionDefinition) {
        if cache.definitions.count >= cacheLimit { cache.definitions.removeAll(keepingCapacity: true) }
        cache.definitions[definition.question.id] = definition
    }
}
