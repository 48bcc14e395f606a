import Crypto
import Foundation
import LMDB
import PermissionModel

/// What `verify` found.
public struct VerificationReport: Hashable, Sendable {
    /// How many events the log holds.
    public var events: UInt64
    /// The head's chain hash as recomputed.
    public var head: ChainHash
    /// The first damaged `seq`, if any: the event whose bytes are wrong, the event a damaged projection row
    /// belongs to, or the event the check was at when it found damage in LMDB's own records (1 when the
    /// damage is not tied to one event).
    public var damagedSeq: UInt64?
    /// What is wrong, in plain words, or `nil` when the ledger is intact.
    public var problem: String?
    /// What was being checked when the damage was found.
    var stage: VerificationStage?

    /// Whether nothing is wrong: the chain, every record and every projection check out.
    public var isIntact: Bool { problem == nil }
}

/// What a running verification is checking; with a `seq`, where it is (see ``VerificationProgress``).
public enum VerificationStage: Hashable, Sendable, CustomStringConvertible {
    /// The data file's meta pages and LMDB's records of the ledger's tables, before any event is read.
    case dataFile
    /// The log: each event's chain hash, record and rules, in `seq` order.
    case log
    /// A derived table (named as in `docs/STORAGE.md`), compared row by row with a rebuild from the log.
    case table(String)
    /// LMDB's free list, after everything else.
    case freeList

    /// The stage in plain words, such as "the log" or "the handles table".
    public var description: String {
        switch self {
        case .dataFile: "the data file's meta pages and table records"
        case .log: "the log"
        case .table(let name): "the \(name) table"
        case .freeList: "LMDB's free list"
        }
    }
}

/// Called as a verification goes, with what it checks and the `seq` it is at: in ``VerificationStage/log``
/// the event being checked, in a table the event of the row just read, else 1. Called for every event and
/// every row, so it should be cheap; a process that runs the check for another (see `permission-ledger
/// verify`) records the position where that other process can read it should the check crash.
public typealias VerificationProgress = (VerificationStage, UInt64) -> Void

/// What an in-memory replay of the log did.
public struct ReplaySummary: Hashable, Sendable {
    /// How many events were replayed.
    public var events: UInt64
    /// How many questions the replay found.
    public var questions: Int
    /// The chain hash after the last event replayed.
    public var head: ChainHash
}

extension Ledger {
    /// Recomputes the hash chain over every stored event, checks each record decodes and re-encodes to the
    /// same bytes, then rebuilds every projection from the log alone and compares it, row by row, with the
    /// kept projections.
    ///
    /// Also checked, since damage there changes what queries or later writes see: the data file's two meta
    /// pages (read from the file, see ``/LMDB/MetaPages``), which LMDB would otherwise silently fall back from
    /// to the previous commit; that every key of the log and of every table is found again by a lookup (a
    /// damaged branch page can hide rows from lookups while a scan still returns them); LMDB's records of
    /// each table (flags, number of entries); the meta table; and LMDB's free list.
    ///
    /// Damage that makes LMDB read outside the data file can crash the process; to check a file that may be
    /// damaged, run ``verify(path:progress:)`` in a child process, as `permission-ledger verify` does.
    ///
    /// - Returns: the report; damage found is in it, not thrown.
    /// - Throws: ``LedgerError`` when the ledger cannot be read at all: `.damaged` when the damage is found
    ///   before the log could be read (the meta pages, say), `.notALedger` when its meta table says it was
    ///   written by another version of PermissionLedger and its tables bear that out.
    public func verify() throws -> VerificationReport {
        try verify(progress: nil)
    }

    /// ``verify()``, calling `progress` with the stage and `seq` the check is at (see ``VerificationProgress``).
    ///
    /// - Returns: the report; damage found is in it, not thrown.
    /// - Throws: ``LedgerError``, as ``verify()`` does.
    public func verify(progress: VerificationProgress?) throws -> VerificationReport {
        try Self.checkMetaPages(path: path)
        do {
            return try Self.verify(environment: environment, tables: tables, path: path, progress: progress)
        } catch {
            throw Self.verificationError(error, path: path)
        }
    }

    /// An error met while verifying, as a ``LedgerError``; damage not tied to an event is at seq 1.
    private static func verificationError(_ error: any Error, path: String) -> LedgerError {
        var error = LedgerError.storage(error, path: path)
        if error.kind == .damaged && error.seq == nil { error.seq = 1 }
        return error
    }

    /// Opens the ledger at `path` read-only and checks it as ``verify(progress:)`` does, treating whatever
    /// of the data file is inconsistent as damage rather than as a file that is not a ledger.
    ///
    /// A directory whose LMDB environment has none of the ledger's tables is not a ledger; one that has some
    /// of them but not all, whose meta pages are inconsistent, or that LMDB reports as corrupted, is a damaged
    /// ledger. Run it in a child process when the file may be damaged: LMDB itself may crash on a damaged page.
    ///
    /// ```swift
    /// let report = try Ledger.verify(path: "family.ledger")
    /// if let seq = report.damagedSeq { print("seq \(seq): \(report.problem!)") }
    /// ```
    ///
    /// - Parameters:
    ///   - path: the ledger's directory.
    ///   - progress: called with the stage and `seq` the check is at (see ``VerificationProgress``).
    /// - Returns: the report; damage found in the log or a table is in it, not thrown.
    /// - Throws: ``LedgerError``: `.missing`, `.notALedger`, `.locked` or `.storage` when the ledger cannot be
    ///   opened or read; `.damaged` (with `seq`) when the damage is found before the log could be read.
    public static func verify(path: String, progress: VerificationProgress? = nil) throws(LedgerError) -> VerificationReport {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LedgerError(.missing, "\(path): no ledger here (the directory does not exist)")
        }
        guard isDirectory.boolValue else {
            throw LedgerError(.notALedger, "\(path): not a ledger (it is a file; a ledger is a directory)")
        }
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        guard fm.fileExists(atPath: dataFile) else {
            throw LedgerError(.notALedger, "\(path): not a ledger (no data.mdb in the directory)")
        }
        progress?(.dataFile, 1)
        try checkMetaPages(path: path)

        let environment: Environment
        do {
            environment = try Environment(path: path, options: .init(
                maxDatabases: Tables.names.count + 2, readOnly: true))
        } catch {
            throw openingError(error, path: path)
        }
        _ = try? environment.clearStaleReaders()
        var missing: [String] = []
        for name in Tables.names {
            do {
                _ = try environment.openDatabase(name, create: false)
            } catch let error as LMDBError where error == .notFound {
                missing.append(name)
            } catch {
                throw LedgerError(.damaged, "LMDB cannot open the \(name) table: \(error)", seq: 1)
            }
        }
        guard missing.count < Tables.names.count else {
            // Unless the list of tables itself is damaged.
            do {
                _ = try environment.read { try $0.databaseNames() }
            } catch {
                throw LedgerError(.damaged, "LMDB's list of the tables is damaged (\(error)): none of the ledger's tables can be found", seq: 1)
            }
            throw LedgerError(.notALedger, "\(path): not a ledger (its LMDB environment has no ledger tables)")
        }
        guard missing.isEmpty else {
            // Derived tables added by a later version are missing from an older ledger: that is no damage.
            if !missing.contains("meta"), !missing.contains("events"),
                let meta = try? environment.openDatabase("meta", create: false),
                let version = try? environment.read({ try $0.get(meta, key: Array("projections".utf8)).map(Array.init) }),
                version.count == 1, (1..<projectionsVersion).contains(version[0]) {
                throw olderIndexes(path: path)
            }
            throw LedgerError(.damaged, "the data file lacks the ledger's \(missing.joined(separator: ", ")) table\(missing.count == 1 ? "" : "s")", seq: 1)
        }
        do {
            let tables = try Tables(environment: environment, create: false)
            return try verify(environment: environment, tables: tables, path: path, progress: progress)
        } catch {
            throw verificationError(error, path: path)
        }
    }

    /// Checks the raw meta pages of the ledger's data file; a writer committing meanwhile may be caught in
    /// the middle of writing one, so a problem counts only when it is still there after a few tries.
    static func checkMetaPages(path: String) throws(LedgerError) {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        var problem: String?
        for attempt in 0..<5 {
            if attempt > 0 { usleep(20_000) }
            let pages: MetaPages
            do {
                pages = try MetaPages(dataFile: dataFile)
            } catch {
                throw openingError(error, path: path)
            }
            guard pages.isLMDBFile else {
                throw LedgerError(.notALedger, "\(path): not a ledger (data.mdb is not an LMDB data file)")
            }
            problem = pages.problem ?? rollback(pages)
            if problem == nil { return }
        }
        throw LedgerError(.damaged, "the data file's meta pages are damaged: \(problem!)", seq: 1)
    }

    /// A ledger whose derived tables an older PermissionLedger made, as `Ledger.init` says it.
    static func olderIndexes(path: String) -> LedgerError {
        LedgerError(.notALedger, """
            \(path): the ledger's indexes were made by an older PermissionLedger; rebuild them once with \
            'permission-ledger rebuild --ledger \(path)' (the log itself is unchanged)
            """)
    }

    /// Whether the commit LMDB would show holds fewer events than the other meta page's: the log only grows,
    /// so the page with the higher transaction ID must be damaged, and LMDB would show an earlier state.
    private static func rollback(_ pages: MetaPages) -> String? {
        guard pages.pages.count == 2, let shown = pages.newest else { return nil }
        let other = pages.pages[0] == shown ? pages.pages[1] : pages.pages[0]
        guard other.transactionID > 0, let shownEvents = pages.entries(ofDatabase: "events", in: shown),
            let otherEvents = pages.entries(ofDatabase: "events", in: other), otherEvents > shownEvents
        else { return nil }
        return """
            the commit LMDB would show (transaction \(shown.transactionID), \(shownEvents) events) is older than the one \
            of the other meta page (transaction \(other.transactionID), \(otherEvents) events): a transaction ID is damaged, \
            and the ledger would look rolled back
            """
    }

    /// An error opening the environment of a ledger whose meta pages check out: what the file holds is damage.
    private static func openingError(_ error: LMDBError, path: String) -> LedgerError {
        switch error {
        case .invalid, .versionMismatch, .corrupted, .pageNotFound, .panic, .incompatible:
            LedgerError(.damaged, "LMDB cannot open the data file: \(error)", seq: 1)
        case .noSuchFile: LedgerError(.missing, "\(path): no ledger here (\(error))")
        default: LedgerError.storage(error, path: path)
        }
    }

    /// Verifies in one read transaction, then weighs what the meta table says against what was found.
    private static func verify(
        environment: Environment, tables: Tables, path: String, progress: VerificationProgress?
    ) throws -> VerificationReport {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        let fileSize = ((try? FileManager.default.attributesOfItem(atPath: dataFile))?[.size] as? NSNumber)?.intValue ?? Int.max
        return try environment.read { txn in
            let verifier = Verifier(txn: txn, tables: tables, fileSize: fileSize, progress: progress)
            let report = try verifier.run()
            return try verifier.weigh(report, path: path)
        }
    }

    /// Replays the whole log into memory (current state only) through the same rules as appends.
    /// Used to measure replay and to check determinism.
    public func replayInMemory() throws -> ReplaySummary {
        try read { view in
            let store = MemoryStore(keepsRows: false)
            var projector = Projector(store: store, head: .empty)
            try StoredLog.forEach(view.txn, tables) { event, record, hash in
                _ = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record, storedHash: hash)
            }
            return ReplaySummary(events: projector.head.seq, questions: store.questionCount, head: projector.head.hash)
        }
    }

    /// Derives every projection anew from the log, replacing the kept ones, in one write transaction.
    /// Use it after `verify` reported a damaged projection while the log itself is intact.
    ///
    /// On a machine with more than one core, the log is read, checked against its hash chain and decoded on
    /// a second thread, a few hundred events ahead of the rules. The first damage in log order is reported
    /// (``LedgerError/Kind/damaged``, with its `seq`), whichever thread finds it, and nothing is changed.
    ///
    /// ``rebuildProjections(path:)`` writes the same tables faster (by 10 to 30% in the README's
    /// measurements), in a ledger not open in this process.
    public func rebuildProjections() throws(LedgerError) {
        try rebuildProjections(tuning: RebuildTuning())
    }

    /// ``rebuildProjections()`` with the log read ahead on a second thread (`readingAhead`, the default on a
    /// machine with more than one core) or on the rebuilding thread: the benchmark suite measures both.
    @_spi(StorageEngine) public func rebuildProjections(readingAhead: Bool) throws(LedgerError) {
        try rebuildProjections(tuning: RebuildTuning(readAheadBatchSize: readingAhead ? RebuildTuning.readAheadBatch : nil))
    }

    /// Derives every projection anew from the log of the ledger at `path`, opened for this alone with LMDB's
    /// map writable, and returns the log's head: what `permission-ledger rebuild` runs. It writes the very
    /// same tables as ``rebuildProjections()``, faster (by 10 to 30% in the README's measurements), as its
    /// pages are written in place in the map instead of copied and looked up in a list of the transaction's
    /// own.
    ///
    /// The data file is first made as large as the map (about twice the ledger's size in use) and its blocks
    /// reserved on disk, so that a full disk fails there, with a `.storage` error, before anything is
    /// written; the room is kept for later appends. Other processes may read the ledger meanwhile, and
    /// write to it (they wait for the rebuild's transaction), on Linux and Apple's systems.
    /// The ledger must not be open in this process (that throws `.locked`); a missing one is created empty,
    /// as ``init(path:options:)`` does.
    @discardableResult
    public static func rebuildProjections(path: String) throws(LedgerError) -> LogHead {
        try rebuildProjections(path: path, tuning: RebuildTuning())
    }

    /// ``rebuildProjections(path:)`` with the log read ahead on a second thread or not, as
    /// ``rebuildProjections(readingAhead:)``: the benchmark suite measures both.
    @_spi(StorageEngine) @discardableResult
    public static func rebuildProjections(path: String, readingAhead: Bool) throws(LedgerError) -> LogHead {
        try rebuildProjections(path: path, tuning: RebuildTuning(readAheadBatchSize: readingAhead ? RebuildTuning.readAheadBatch : nil))
    }

    private static func rebuildProjections(path: String, tuning: RebuildTuning) throws(LedgerError) -> LogHead {
        // The map (and so the file's reserved room) is sized to twice the ledger's pages in use when it opens.
        var options = Options(mapSize: 1 << 20)
        options.writableMap = true
        let ledger = try Ledger(path: path, options: options)
        // A ledger whose derived tables were older has just been rebuilt, the same way.
        if !ledger.rebuiltWhenOpened { try ledger.rebuildProjections(tuning: tuning) }
        do {
            return try ledger.head()
        } catch {
            throw error as? LedgerError ?? LedgerError.storage(error, path: path)
        }
    }

    private func rebuildProjections(tuning: RebuildTuning) throws(LedgerError) {
        guard !options.readOnly else { throw LedgerError(.storage, "\(path): the ledger is open read-only") }
        try Self.rebuildProjections(environment: environment, tables: tables, path: path, tuning: tuning)
    }

    /// How a rebuild holds memory and reads the log. The defaults are what the ledger uses; tests make the
    /// limits small, so that every fallback is taken and must write the very same tables.
    struct RebuildTuning {
        /// The events in each batch read ahead, when the log is read ahead.
        static let readAheadBatch = 256
        /// How many events the log is read ahead in at a time, on a thread of its own (``LogReadAhead``);
        /// `nil` reads on the rebuilding thread, as a machine with one core does.
        var readAheadBatchSize: Int? = ProcessInfo.processInfo.activeProcessorCount > 1 ? readAheadBatch : nil
        /// How many rows of `subjectEvents` and of `expiries` are held back at most before they are written
        /// in key order (``LMDBStore/heldRowLimit``).
        var heldRowLimit = 1 << 20
        /// The most entries of each write cache (``LMDBStore/cacheLimit``).
        var cacheLimit = 200_000
    }

    static func rebuildProjections(environment: Environment, tables: Tables, path: String, tuning: RebuildTuning = .init()) throws(LedgerError) {
        do {
            // The old derived tables' pages are freed only when the transaction commits, so the new ones take
            // room of their own. A map that fills would be grown, and the whole rebuild run again from the first
            // event (`Environment.write`); make the room first instead: as much again as the ledger uses, which
            // holds the log and the old tables. The map is address space, not memory or disk (but for a writable
            // map, whose file already holds room for twice the pages in use: see `Environment.resizeMap(to:)`).
            try environment.reserve(freeBytes: try environment.usedSize)
            try environment.write { txn in
                for (_, db) in tables.derived { try txn.drop(db) }
                try txn.put(tables.meta, key: Array("projections".utf8), value: [Ledger.projectionsVersion])
                let store = LMDBStore(txn: txn, tables: tables, cacheLimit: tuning.cacheLimit)
                store.rewritesLog = false
                store.heldRowLimit = tuning.heldRowLimit
                var projector = Projector(store: store, head: .empty)
                func apply(_ event: PermissionEvent, _ record: [UInt8], _ hash: ChainHash) throws {
                    // The log's rules held when it was written: an event they now turn away, or that does not
                    // land at its own seq (a duplicate), is damage, and no projection is kept from it.
                    let outcome: AppendOutcome
                    do {
                        outcome = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record, storedHash: hash)
                    } catch let rejection as EventRejection {
                        throw LedgerError(.damaged, "the event breaks a rule of the log: \(rejection)", seq: event.seq!)
                    }
                    guard outcome == .appended(seq: event.seq!) else {
                        throw LedgerError(.damaged, "the event duplicates an earlier one", seq: event.seq!)
                    }
                }
                // Read ahead on a second thread; on this one with one core, or when no reader slot is free for
                // the second thread's transaction (this one's write transaction needs none).
                let readAhead = try tuning.readAheadBatchSize.map { try LogReadAhead.forEach(environment, tables, batchSize: $0, apply) }
                if readAhead != true { try StoredLog.forEach(txn.reader, tables, apply) }
                try store.flushHeldRows()
            }
            try environment.sync(force: true)
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }
}

extension Ledger {
    /// The SHA-256 of every named database's key/value pairs, read with plain cursor scans and nothing else of
    /// the ledger's logic: how tests of damage detection tell whether damage changed what a reader sees.
    ///
    /// - Returns: per database (in LMDB's order of names), its name, number of rows and digest in hex.
    /// - Throws: ``/LMDB/LMDBError`` when LMDB cannot open or read the environment.
    @_spi(Testing) public static func tableDigests(path: String) throws -> [(table: String, rows: Int, digest: String)] {
        let environment = try Environment(path: path, options: .init(maxDatabases: 256, readOnly: true))
        let names = try environment.read { try $0.databaseNames() }
        let databases = try names.map { try environment.openDatabase($0, create: false) }
        return try environment.read { txn in
            try zip(names, databases).map { name, db in
                var hash = SHA256()
                var rows = 0
                let cursor = try txn.cursor(db)
                var entry = try cursor.first()
                while let e = entry {
                    for bytes in [e.key, e.value] {
                        withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { hash.update(bufferPointer: $0) }
                        hash.update(bufferPointer: bytes)
                    }
                    rows += 1
                    entry = try cursor.next()
                }
                return (name, rows, hash.finalize().map { String(format: "%02x", $0) }.joined())
            }
        }
    }
}

/// Iterates the raw log inside any transaction.
enum StoredLog {
    /// Calls `body` with each stored event (with its `seq`, without `hash`), its stored record and its chain hash,
    /// after checking the record against the hash chain: damage is reported as damage, before any rule sees it.
    static func forEach(_ txn: ReadTransaction, _ tables: Tables, _ body: (PermissionEvent, [UInt8], ChainHash) throws -> Void) throws {
        let cursor = try txn.cursor(tables.events)
        var entry = try cursor.first()
        var previous = ChainHash.genesis
        while let e = entry {
            let seq = Keys.decodeSeq(e.key)
            guard e.value.count > 32 else { throw LedgerError(.damaged, "the stored event is truncated", seq: seq) }
            let record = [UInt8](copying: UnsafeRawBufferPointer(rebasing: e.value[32...]))
            let hash = chainHash(previous: previous, record: record)
            guard hash.bytes.hasSameBytes(as: UnsafeRawBufferPointer(rebasing: e.value[0..<32])) else {
                throw LedgerError(.damaged, "the chain hash does not match the event's bytes", seq: seq)
            }
            previous = hash
            var event: PermissionEvent
            do {
                event = try record.withUnsafeBytes { buffer throws(EventRecord.DecodingError) in try EventRecord.decode(buffer) }
            } catch {
                throw LedgerError(.damaged, "\(error)", seq: seq)
            }
            event.seq = seq
            try body(event, record, hash)
            entry = try cursor.next()
        }
    }
}

/// One verification, in one read transaction. Damage is returned as a report; LMDB errors met while reading
/// (a damaged page) are damage too, at the stage and `seq` the check was at.
private final class Verifier {
    let txn: ReadTransaction
    let tables: Tables
    /// No value can be longer than the data file: a longer one comes from a damaged length.
    let fileSize: Int
    let progress: VerificationProgress?
    private var stage = VerificationStage.dataFile
    private var seq: UInt64 = 1
    /// The chain hash after the last event checked.
    private var previous = ChainHash.genesis

    init(txn: ReadTransaction, tables: Tables, fileSize: Int, progress: VerificationProgress?) {
        self.txn = txn
        self.tables = tables
        self.fileSize = fileSize
        self.progress = progress
    }

    private func at(_ stage: VerificationStage, _ seq: UInt64) {
        self.stage = stage
        self.seq = seq
        progress?(stage, seq)
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
        at(.dataFile, 1)
        do {
            _ = try txn.databaseNames()
        } catch {
            guard error == .corrupted else { throw error }
            return damaged(1, "LMDB's list of the tables does not hold as many as LMDB's record of it counts")
        }
        for (name, db) in [("meta", tables.meta), ("events", tables.events)] + tables.derived {
            let flags = try txn.flags(db)
            guard flags.isEmpty else {
                return damaged(1, "LMDB's record of the \(name) table gives it the flags \(flags), which a ledger never sets")
            }
        }
        if let report = try checkLog() { return report }
        let head = LogHead(seq: seq, hash: previous, recordedAt: nil)
        for (name, db) in tables.derived {
            if let report = try checkTable(name, db) { return report }
        }
        at(.freeList, 1)
        if let problem = try txn.freeListProblem() { return damaged(1, "LMDB's free list is damaged: \(problem)") }
        return VerificationReport(events: head.seq, head: previous, damagedSeq: nil, problem: nil)
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
        at(.log, 1)
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
            let hash = chainHash(previous: previous, record: record)
            guard hash == stored else {
                return damaged(seq, "the chain hash does not match the event's bytes (stored \(stored), computed \(hash))")
            }
            let event: PermissionEvent
            do {
                event = try record.withUnsafeBytes { buffer throws(EventRecord.DecodingError) in try EventRecord.decode(buffer) }
            } catch {
                return damaged(seq, "\(error)")
            }
            guard EventRecord.encode(event, recordedAt: event.recordedAt!) == record else {
                return damaged(seq, "the stored record is not in canonical form")
            }
            do {
                guard case .appended = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record) else {
                    return damaged(seq, "the event duplicates an earlier one")
                }
            } catch let rejection as EventRejection {
                return damaged(seq, "the event breaks a rule of the log: \(rejection)")
            }
            guard try isFoundByLookup(tables.events, e) else {
                return damaged(seq, "a lookup of seq \(seq) does not find the event a scan of the log returns (a damaged index page)")
            }
            previous = hash
            expectedSeq += 1
            count += 1
            eventsRead = UInt64(count)
            at(.log, expectedSeq)
            entry = try cursor.next()
        }
        let entries = try txn.statistics(tables.events).entries
        guard entries == count else {
            return damaged(expectedSeq, "LMDB's record of the log counts \(entries) events, but it holds \(count)")
        }
        seq = expectedSeq - 1
        return nil
    }

    /// Whether a point lookup of the entry's key finds that very entry (the same bytes in the map).
    private func isFoundByLookup(_ db: Database, _ entry: Cursor.Entry) throws -> Bool {
        guard let found = try txn.get(db, key: entry.key) else { return false }
        return found.baseAddress == entry.value.baseAddress && found.count == entry.value.count
    }

    /// Compares a derived table, row by row, with the rebuild, and looks up each of its keys.
    private func checkTable(_ name: String, _ db: Database) throws -> VerificationReport? {
        let stage = VerificationStage.table(name)
        at(stage, 1)
        var expected = store.rows[name] ?? []
        expected.sort { $0.0.lexicographicallyPrecedes($1.0) }
        let cursor = try txn.cursor(db)
        var row = try cursor.first()
        var index = 0
        while true {
            let want = index < expected.count ? expected[index] : nil
            guard let have = row else {
                if let want { return damaged(seqOf(name, want.0, want.1), "the \(name) projection lacks a row the log implies") }
                break
            }
            at(stage, seqOf(name, have.key, have.value))
            guard let want else {
                return damaged(seq, "the \(name) projection holds a row the log does not imply")
            }
            if !have.key.elementsEqual(want.0) || !have.value.elementsEqual(want.1) {
                let ours = have.key.lexicographicallyPrecedes(want.0)
                return damaged(ours ? seq : seqOf(name, want.0, want.1), "the \(name) projection differs from a rebuild from the log")
            }
            guard try isFoundByLookup(db, have) else {
                return damaged(seq, "a lookup in the \(name) projection does not find a row a scan returns (a damaged index page)")
            }
            index += 1
            row = try cursor.next()
        }
        let entries = try txn.statistics(db).entries
        guard entries == index else {
            return damaged(1, "LMDB's record of the \(name) table counts \(entries) rows, but it holds \(index)")
        }
        return nil
    }

    /// The seq a derived row belongs to, for the report (0 when the row does not say).
    private func seqOf<K: Collection<UInt8>, V: Collection<UInt8>>(_ table: String, _ key: K, _ value: V) -> UInt64 {
        func seq(_ bytes: some Collection<UInt8>) -> UInt64 {
            bytes.count >= 8 ? bytes.suffix(8).reduce(0) { $0 << 8 | UInt64($1) } : 0
        }
        switch table {
        case "questions", "handles", "permissions", "byRecordedAt", "subjectEvents", "handleCheckpoints": return seq(key)
        case "handleChanges":
            // subject NUL + seq + kind value NUL
            guard let nul = key.firstIndex(of: 0) else { return 0 }
            return seq(key[key.index(after: nul)...].prefix(8))
        case "expiries": return 0
        default: return value.count == 8 ? seq(value) : 0
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
                rows.append((String(decoding: e.key, as: UTF8.self), Array(e.value.prefix(16))))
                entry = try cursor.next()
            }
        } catch {
            guard report.isIntact else { return report }
            return VerificationReport(
                events: report.events, head: report.head, damagedSeq: 1,
                problem: "LMDB cannot read the meta table: \(error)", stage: .dataFile)
        }
        let written: [(key: String, value: [UInt8])] = [("format", [Ledger.formatVersion]), ("projections", [Ledger.projectionsVersion])]
        guard !rows.elementsEqual(written, by: { $0.key == $1.key && $0.value == $1.value }) else { return report }
        let format = rows.first { $0.key == "format" && $0.value.count == 1 }?.value[0]
        let projections = rows.first { $0.key == "projections" && $0.value.count == 1 }?.value[0]
        let inLog = report.stage == .log
        let inTables = if case .table = report.stage { true } else { false }
        if let format, format > Ledger.formatVersion, inLog {
            throw LedgerError(.notALedger, "\(path): storage format \(format) is newer than this build reads (\(Ledger.formatVersion)); upgrade PermissionLedger")
        }
        // An older ledger's tables may happen to be what this build would make (none of its rows changed
        // between the versions): it is taken for an older ledger, as a projections version of 1 to 3 says.
        if format == Ledger.formatVersion, let projections, projections != Ledger.projectionsVersion,
            inTables || (report.isIntact && (1..<Ledger.projectionsVersion).contains(projections)) {
            throw projections < Ledger.projectionsVersion
                ? Ledger.olderIndexes(path: path)
                : LedgerError(.notALedger, "\(path): the ledger's indexes were made by a newer PermissionLedger (version \(projections)); this build cannot check them")
        }
        guard report.isIntact else { return report }
        let shown = rows.map { "\($0.key)=\($0.value.map(String.init).joined(separator: ","))" }.joined(separator: " ")
        return VerificationReport(
            events: report.events, head: report.head, damagedSeq: 1,
            problem: "the meta table holds \(shown.isEmpty ? "nothing" : shown) where this ledger's log and tables imply format=\(Ledger.formatVersion) projections=\(Ledger.projectionsVersion)",
            stage: .dataFile)
    }
}
