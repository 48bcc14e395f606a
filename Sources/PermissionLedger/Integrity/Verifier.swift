internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// One verification, in one read transaction. Damage is returned as a report; LMDB errors met while reading
/// (a damaged page) are damage too, at the stage and `seq` the check was at.
final class Verifier {
    let txn: ReadTransaction
    let tables: Tables
    /// No value can be longer than the data file: a longer one comes from a damaged length.
    let fileSize: Int
    let progress: VerificationProgress?
    /// Stops the check with `CancellationError` when the task that asked for it is cancelled.
    let cancellation: Cancellation?
    /// How many places the check has reported: cancellation is looked at every ``cancellationInterval``.
    private var steps: UInt64 = 0
    private var stage = VerificationStage.dataFile
    private var seq: UInt64 = 1
    /// The chain hash after the last event checked.
    private var previous = ChainHash.genesis

    init(txn: ReadTransaction, tables: Tables, fileSize: Int, progress: VerificationProgress?, cancellation: Cancellation?) {
        self.txn = txn
        self.tables = tables
        self.fileSize = fileSize
        self.progress = progress
        self.cancellation = cancellation
    }

    private func at(_ stage: VerificationStage, _ seq: UInt64) throws {
        self.stage = stage
        self.seq = seq
        progress?(stage, seq)
        steps &+= 1
        try cancellation?.check(every: cancellationInterval, steps)
    }

    /// The events read from the log so far.
    private var eventsRead: UInt64 = 0

    private func damaged(_ seq: UInt64, _ why: String) -> VerificationReport {
        // The log's last key tells how many events it holds, even when an event before it is damaged.
        let events = (try? txn.cursor(tables.events).last()).flatMap { $0 }.map { Keys.decodeSeq($0.key) } ?? eventsRead
        return VerificationReport(events: events, head: previous, damagedSeq: max(seq, 1), problem: why, stage: stage)
    }

    func run() throws -> VerificationReport {
        do {
            return try check()
        } catch let error as LMDBError {
            switch error {
            // The transaction began, so what fails while reading is the data (LMDB also fails every call after
            // one that met a damaged page, some of which it does not report, with MDB_BAD_TXN) or the machine.
            case .readersFull, .mapResized, .outOfMemory, .ioError: throw error
            case .badTransaction: return damaged(seq, "LMDB met a damaged page in \(stage) and reads no further")
            default: return damaged(seq, "LMDB cannot read \(stage) past this point: \(error)")
            }
        }
    }

    private func check() throws -> VerificationReport {
        try at(.dataFile, 1)
        do {
            _ = try txn.databaseNames()
        } catch {
            guard error == .corrupted else { throw error }
            return damaged(1, "LMDB's list of the tables does not hold as many as LMDB's record of it counts")
        }
        for table in StorageTable.allCases {
            guard let db = tables.opened(table) else { continue }
            let flags = try txn.flags(db)
            guard flags.isEmpty else {
                return damaged(1, "LMDB's record of the \(table.rawValue) table gives it the flags \(flags), which a ledger never sets")
            }
        }
        if let report = try checkLog() { return report }
        let head = LogHead(seq: seq, hash: previous, recordedAt: nil)
        for (table, db) in tables.derived {
            if let report = try checkTable(table, db) { return report }
        }
        if let db = tables.handleValues, let report = try checkHandleValues(db) { return report }
        try at(.freeList, 1)
        if let problem = try txn.freeListProblem() { return damaged(1, "LMDB's free list is damaged: \(problem)") }
        return VerificationReport(events: head.seq, head: previous, damagedSeq: nil, problem: nil)
    }

    /// Whether `record` keeps no sealed fields though it commits to some (an event imported erased, or erased
    /// here) while no erasure in the ledger covers it: the readers take that for damage, and so does `verify`.
    private func isErasedWithoutAnErasure(_ record: [UInt8], event: PermissionEvent, seq: UInt64) throws -> Bool {
        guard record.first == SealedRecord.version, let recordedAt = event.recordedAt else { return false }
        // The trailer first: only a record without sealed fields is decoded again, for its commitment.
        let commitsWithoutFields = try record.withUnsafeBytes { bytes in
            Result { () throws(EventRecord.DecodingError) -> Bool in
                let parts = try SealedRecord.parts(of: bytes, checkingTrailer: false)
                guard parts.box.isEmpty else { return false }
                return try SealedRecord.envelope(parts.chained).commitment != nil
            }
        }.get()
        guard commitsWithoutFields else { return false }
        return try KeyRing.erasure(txn, tables, subject: event.subject, seq: seq, recordedAt: recordedAt) == nil
    }

    /// The rebuild from the log, kept for the comparison with the derived tables.
    private let store = MemoryStore(keepsRows: true)

    /// Checks every event in `seq` order, replaying it into ``store``; leaves `seq` at the last event.
    private func checkLog() throws -> VerificationReport? {
        var projector = Projector(store: store, head: .empty)
        var expectedSeq: UInt64 = 1
        var count = 0
        let cursor = try txn.cursor(tables.events)
        // The position is the event being read and checked: should LMDB crash on its page, it is named.
        try at(.log, 1)
        var entry = try cursor.first()
        while let e = entry {
            guard e.key.count == 8 else { return damaged(expectedSeq, "a log key of \(e.key.count) bytes is not a seq") }
            let seq = Keys.decodeSeq(e.key)
            guard seq == expectedSeq else {
                return damaged(expectedSeq, seq > expectedSeq
                    ? "the log jumps from seq \(expectedSeq - 1) to \(seq): events are missing"
                    : "the log goes back from seq \(expectedSeq - 1) to \(seq)")
            }
            guard e.value.count > 32 else { return damaged(seq, "the stored event is truncated") }
            guard e.value.count <= fileSize else {
                return damaged(seq, "the stored event claims \(e.value.count) bytes, more than the data file holds")
            }
            let record = [UInt8](copying: UnsafeRawBufferPointer(rebasing: e.value[32...]))
            let stored = ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: e.value[0..<32])))
            let hash: ChainHash
            do {
                hash = try storedChainHash(record, previous: previous)
            } catch {
                return damaged(seq, "\(error)")
            }
            guard hash == stored else {
                return damaged(seq, "the chain hash does not match the event's bytes (stored \(stored), computed \(hash))")
            }
            let event: PermissionEvent
            do {
                event = try replayedEvent(record, checkCanonical: true)
            } catch {
                return damaged(seq, "\(error)")
            }
            if try isErasedWithoutAnErasure(record, event: event, seq: seq) {
                return damaged(seq, "the event's personal fields are missing and no erasure covers it")
            }
            do {
                guard case .appended = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record) else {
                    return damaged(seq, "the event duplicates an earlier one")
                }
            } catch let rejection as EventRejection {
                return damaged(seq, "the event breaks a rule of the log: \(rejection)")
            }
            if tables.handleValues != nil, let recordedAt = event.recordedAt {
                let handles = SealedRecord.handles(of: event)
                if !handles.isEmpty { namedHandles.append((event.subject, seq, recordedAt, handles.map(\.value))) }
            }
            guard try isFoundByLookup(tables.events, e) else {
                return damaged(seq, "a lookup of seq \(seq) does not find the event a scan of the log returns (a damaged index page)")
            }
            previous = hash
            expectedSeq += 1
            count += 1
            eventsRead = UInt64(count)
            try at(.log, expectedSeq)
            entry = try cursor.next()
        }
        let entries = try txn.statistics(tables.events).entries
        guard entries == count else {
            return damaged(expectedSeq, "LMDB's record of the log counts \(entries) events, but it holds \(count)")
        }
        seq = expectedSeq - 1
        return nil
    }

    /// The handles of the log's sealed events, as tokens (the text of token handles), by subject, seq and time:
    /// what the subjects' handle values must index.
    private var namedHandles: [(subject: String, seq: UInt64, recordedAt: Timestamp, tokens: [String])] = []

    /// Checks the `handleValues` table without a key (docs/STORAGE.md, "Handle values"): each entry's form, each
    /// chunk's checksum, chunks numbered from 0 and filled in order, and each subject's index holding only tokens
    /// of its events that no erasure covers. (Not all of them: an event an earlier version of the engine wrote has
    /// none, and is read from itself.)
    private func checkHandleValues(_ db: Database) throws -> VerificationReport? {
        let table = StorageTable.handleValues
        try at(.table(table), 1)
        var expected: [String: Set<String>] = [:]
        var erasures = KeyRing.ErasureLookup()
        for named in namedHandles where try erasures.erasure(txn, tables, subject: named.subject, seq: named.seq, recordedAt: { named.recordedAt }) == nil {
            expected[named.subject, default: []].formUnion(named.tokens)
        }
        var indexed: [String: Set<String>] = [:]
        var chunks: [String: [UInt64]] = [:]
        var entriesByChunk: [String: [UInt64: Int]] = [:]
        let cursor = try txn.cursor(db)
        var entry = try cursor.first()
        var count = 0
        while let e = entry {
            guard let separator = e.key.firstIndex(of: 0), separator > e.key.startIndex, separator + 1 < e.key.endIndex,
                  let subject = validUTF8(UnsafeRawBufferPointer(rebasing: e.key[..<separator])) else {
                return damaged(1, "the \(table.rawValue) table holds a key that names no subject")
            }
            let rest = UnsafeRawBufferPointer(rebasing: e.key[(separator + 2)...])
            switch e.key[separator + 1] {
            case 1 where rest.count == 8:
                guard e.value.count >= HandleDirectory.smallestChunk,
                      HandleDirectory.checksum(chunkKey: e.key, box: e.value.dropLast(8)).elementsEqual(e.value.suffix(8)) else {
                    return damaged(1, "a chunk of the \(table.rawValue) table does not match its checksum")
                }
                chunks[subject, default: []].append(Keys.decodeSeq(rest))
            case 2 where rest.count == DataKeys.tokenSize && e.value.count == 8:
                indexed[subject, default: []].insert(DataKeys.base64URL(rest))
                entriesByChunk[subject, default: [:]][Keys.decodeSeq(e.value), default: 0] += 1
            default:
                return damaged(1, "the \(table.rawValue) table holds an entry of no known form")
            }
            guard try isFoundByLookup(db, e) else {
                return damaged(1, "a lookup in the \(table.rawValue) table does not find an entry a scan returns (a damaged index page)")
            }
            count += 1
            entry = try cursor.next()
        }
        for subject in Set(expected.keys).union(indexed.keys).union(chunks.keys) {
            let tokens = indexed[subject] ?? []
            guard tokens.isSubset(of: expected[subject] ?? []) else {
                return damaged(1, "the \(table.rawValue) table indexes a handle that none of \(subject)'s events that no erasure covers holds")
            }
            let capacity = HandleDirectory.capacity
            let chunkCount = (tokens.count + capacity - 1) / capacity
            let filled = (0..<chunkCount).map { $0 + 1 < chunkCount ? capacity : tokens.count - capacity * (chunkCount - 1) }
            guard chunks[subject] ?? [] == (0..<UInt64(chunkCount)).map({ $0 }),
                  (0..<chunkCount).allSatisfy({ entriesByChunk[subject]?[UInt64($0)] == filled[$0] }),
                  entriesByChunk[subject]?.count ?? 0 == chunkCount else {
                return damaged(1, "the chunks of \(subject)'s handle values in the \(table.rawValue) table are not numbered and filled in order")
            }
        }
        let entries = try txn.statistics(db).entries
        guard entries == count else {
            return damaged(1, "LMDB's record of the \(table.rawValue) table counts \(entries) rows, but it holds \(count)")
        }
        return nil
    }

    /// Whether a point lookup of the entry's key finds that very entry (the same bytes in the map).
    private func isFoundByLookup(_ db: Database, _ entry: Cursor.Entry) throws -> Bool {
        guard let found = try txn.get(db, key: entry.key) else { return false }
        return found.baseAddress == entry.value.baseAddress && found.count == entry.value.count
    }

    /// Compares a derived table, row by row, with the rebuild, and looks up each of its keys.
    /// Whether a stored key or value holds the bytes a rebuild implies: one `memcmp`, not a comparison per byte.
    private static func equal(_ stored: UnsafeRawBufferPointer, _ rebuilt: ArraySlice<UInt8>) -> Bool {
        stored.count == rebuilt.count && rebuilt.withUnsafeBytes { rebuilt in
            stored.isEmpty || memcmp(stored.baseAddress!, rebuilt.baseAddress!, stored.count) == 0
        }
    }

    private func checkTable(_ table: StorageTable, _ db: Database) throws -> VerificationReport? {
        let stage = VerificationStage.table(table)
        try at(stage, 1)
        let expected = store.takeSortedRows(table)
        let cursor = try txn.cursor(db)
        var row = try cursor.first()
        var index = 0
        while true {
            let want = index < expected.count ? expected.row(index) : nil
            guard let have = row else {
                if let want { return damaged(seqOf(table, want.key, want.value), "the \(table.rawValue) projection lacks a row the log implies") }
                break
            }
            try at(stage, seqOf(table, have.key, have.value))
            guard let want else {
                return damaged(seq, "the \(table.rawValue) projection holds a row the log does not imply")
            }
            if !Self.equal(have.key, want.key) || !Self.equal(have.value, want.value) {
                let ours = have.key.lexicographicallyPrecedes(want.key)
                return damaged(ours ? seq : seqOf(table, want.key, want.value), "the \(table.rawValue) projection differs from a rebuild from the log")
            }
            guard try isFoundByLookup(db, have) else {
                return damaged(seq, "a lookup in the \(table.rawValue) projection does not find a row a scan returns (a damaged index page)")
            }
            index += 1
            row = try cursor.next()
        }
        let entries = try txn.statistics(db).entries
        guard entries == index else {
            return damaged(1, "LMDB's record of the \(table.rawValue) table counts \(entries) rows, but it holds \(index)")
        }
        return nil
    }

    /// The seq a derived row belongs to, for the report (0 when the row does not say).
    private func seqOf<K: Collection<UInt8>, V: Collection<UInt8>>(_ table: StorageTable, _ key: K, _ value: V) -> UInt64 {
        func seq(_ bytes: some Collection<UInt8>) -> UInt64 {
            bytes.count >= 8 ? bytes.suffix(8).reduce(0) { $0 << 8 | UInt64($1) } : 0
        }
        switch table {
        case .questions, .handles, .permissions, .byRecordedAt, .subjectEvents, .handleSets, .tree: return seq(key)
        case .expiries, .keys, .handleValues, .treeTop: return 0
        case .meta, .events, .eventIDs, .subjects, .questionsByAsked, .handleSubjects: return value.count == 8 ? seq(value) : 0
        }
    }

    /// Weighs the report against the meta table, which holds the versions of the storage format and of the
    /// projections: a ledger of another version is not damaged, a meta table that disagrees with everything
    /// else is.
    func weigh(_ report: VerificationReport, path: String) throws -> VerificationReport {
        var rows: [(key: String, value: [UInt8])] = []
        do {
            let cursor = try txn.cursor(tables.meta)
            var entry = try cursor.first()
            while let e = entry, rows.count < 16 {
                let key = String(decoding: e.key, as: UTF8.self)
                // The head of the ledger a migration copied (40 bytes): a link, which nothing in the log implies;
                // the key store's number of slots (8 bytes), which the key store bears out, not the log.
                if !(key == "migratedFrom" && e.value.count == 40), !(tables.keys != nil && key == "keySlots" && e.value.count == 8) {
                    rows.append((key, Array(e.value.prefix(16))))
                }
                entry = try cursor.next()
            }
        } catch {
            guard report.isIntact else { return report }
            return VerificationReport(
                events: report.events, head: report.head, damagedSeq: 1,
                problem: "LMDB cannot read the meta table: \(error)", stage: .dataFile)
        }
        // A ledger of format 1 (personal fields unencrypted, and no keys table) is read and checked as it is; it
        // is written no more.
        for format in tables.keys == nil ? [1] : Array(Ledger.oldestWritableFormat...Ledger.formatVersion) {
            let written: [(key: String, value: [UInt8])] = [("format", [format]), ("projections", [Ledger.projectionsVersion])]
            if rows.elementsEqual(written, by: { $0.key == $1.key && $0.value == $1.value }) { return report }
        }
        let format = rows.first { $0.key == "format" && $0.value.count == 1 }?.value[0]
        let projections = rows.first { $0.key == "projections" && $0.value.count == 1 }?.value[0]
        let inLog = report.stage == .log
        let inTables = if case .table = report.stage { true } else { false }
        if let format, format > Ledger.formatVersion, inLog {
            throw LedgerError(.notALedger, "\(path): storage format \(format) is newer than this build reads (\(Ledger.formatVersion)); upgrade PermissionLedger")
        }
        // An older ledger's tables may happen to be what this build would make (none of its rows changed
        // between the versions): it is taken for an older ledger, as a projections version of 1 to 3 says.
        if let format, (Ledger.oldestWritableFormat...Ledger.formatVersion).contains(format), let projections, projections != Ledger.projectionsVersion,
            inTables || (report.isIntact && (1..<Ledger.projectionsVersion).contains(projections)) {
            throw projections < Ledger.projectionsVersion
                ? Ledger.olderIndexes(path: path)
                : LedgerError(.notALedger, "\(path): the ledger's indexes were made by a newer PermissionLedger (version \(projections)); this build cannot check them")
        }
        guard report.isIntact else { return report }
        let shown = rows.map { "\($0.key)=\($0.value.map(String.init).joined(separator: ","))" }.joined(separator: " ")
        return VerificationReport(
            events: report.events, head: report.head, damagedSeq: 1,
            problem: "the meta table holds \(shown.isEmpty ? "nothing" : shown) where this ledger's log and tables imply format=\(tables.keys == nil ? "1" : "\(Ledger.oldestWritableFormat) to \(Ledger.formatVersion)") projections=\(Ledger.projectionsVersion)",
            stage: .dataFile)
    }
}
