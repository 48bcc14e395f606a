import Foundation
internal import LMDB
import PermissionModel

/// A ledger of permission events stored in an LMDB environment directory.
///
/// Every question, send-cancel, answer, expiry, observation of known handles and permission change is
/// appended as an immutable event; question states, known handles and permission states are projections
/// kept beside the log, updated in the same transaction, and versioned by `seq` so that any query can be
/// asked as of any point of the log.
///
/// ```swift
/// let ledger = try Ledger(path: "family.ledger")
/// let events = try lines.compactMap { try EventJSON.decode(line: $0) }
/// let summary = try await ledger.append(events)
/// let handles = try ledger.read { try $0.knownHandles(subject: "kid-1") }
/// ```
///
/// A `Ledger` is safe to share between tasks and threads. Writes run one at a time on a writer queue;
/// reads run on the caller's thread in their own read-only transaction and never block writers.
public final class Ledger: Sendable {
    /// How a ledger is opened.
    public struct Options: Sendable {
        /// The initial size of the memory map. It grows by doubling when it fills.
        public var mapSize: Int
        /// Open for reading only: never creates or modifies anything.
        public var readOnly: Bool
        /// Flush to disk at every commit (the default). Turn off only for throwaway ledgers.
        public var durable: Bool
        /// Assigns `recordedAt` to events that have none, and is the clock of `.now` queries.
        public var clock: @Sendable () -> Timestamp
        /// The most events that concurrent ``Ledger/append(_:maxRejections:)`` calls share one write
        /// transaction with (group commit). A single call with more events is still committed whole.
        /// `1` commits every call in a transaction of its own.
        public var maxEventsPerCommit: Int
        /// When opening for writing, first walks every page of the data file's trees, read with `pread`
        /// (see `/LMDB/PageWalk`), and refuses a data file whose pages are damaged: what
        /// `permission-ledger import` and `rebuild` do before they write. It costs a read of every page in use.
        public var checksPages = false
        /// Opens LMDB's map writable (`MDB_WRITEMAP`, see ``/LMDB/Environment/Options/writableMap``): what
        /// ``Ledger/rebuildProjections(path:)`` opens with, and nothing else.
        var writableMap = false

        /// Creates options; the defaults suit a durable ledger that grows on demand.
        public init(
            mapSize: Int = 64 << 20, readOnly: Bool = false, durable: Bool = true,
            clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
            maxEventsPerCommit: Int = 4096
        ) {
            self.mapSize = mapSize
            self.readOnly = readOnly
            self.durable = durable
            self.clock = clock
            self.maxEventsPerCommit = maxEventsPerCommit
        }
    }

    /// The version of the storage format this build writes (see `docs/STORAGE.md`).
    public static let formatVersion: UInt8 = 1

    /// The version of the derived tables (projections and indexes) this build keeps. A ledger whose
    /// derived tables are older is rebuilt from its log when opened for writing (see `docs/STORAGE.md`).
    static let projectionsVersion: UInt8 = 6

    /// The ledger's directory.
    public let path: String
    let options: Options
    let environment: Environment
    let tables: Tables
    /// Wakes subscriptions when this process appends.
    let watch = LogWatch()
    /// The head of the last snapshot a read found it in: every read of the same snapshot has the same head.
    private let cachedHead = HeadCache()
    /// What the last committed write learned of the tables, for the write that directly follows it
    /// (the writer thread's groups and ``appendSynchronously(_:maxRejections:progress:)`` alike).
    let writerCache = CarriedWriterCache()
    /// How many reader slots of dead processes opening the ledger cleared.
    public let staleReadersCleared: Int
    /// The writer thread, absent when the ledger is read-only.
    let committer: GroupCommitter?
    /// Whether opening rebuilt the derived tables, as they were older than this build's.
    let rebuiltWhenOpened: Bool
    /// Makes commits durable, through a descriptor of its own (so that it sees every failed write-back);
    /// absent when the ledger is read-only or not durable.
    let fileSync: DataFileSync?

    /// Opens the ledger at `path`, creating it (mode 0700, files 0600) unless `options.readOnly`.
    ///
    /// Other processes may have the same ledger open at the same time, for reading or writing (LMDB
    /// serializes their writes); reader slots left behind by processes that died are cleared here.
    /// Within one process, open a ledger once and share the `Ledger`: a second open of the same directory
    /// throws `.locked` until the first `Ledger` is released.
    ///
    /// - Throws: ``LedgerError`` of kind `.missing` when a read-only open finds no ledger, `.notALedger`
    ///   when the directory holds something else, `.locked` when it is already open in this process,
    ///   `.storage` when it sits on a network file system (or LMDB cannot use it otherwise), `.damaged`
    ///   when its data file is damaged.
    public init(path: String, options: Options = Options()) throws(LedgerError) {
        self.path = path
        self.options = options
        try LedgerDirectory.prepare(path: path, readOnly: options.readOnly)
        try Self.checkBeforeOpening(path: path, options: options)
        // Commits are flushed to disk by the ledger, not by LMDB alone (see GroupCommitter).
        let flushesCommits = options.durable && !options.readOnly
        do {
            environment = try Environment(path: path, options: .init(
                mapSize: options.mapSize, maxDatabases: StorageTable.allCases.count + StorageTable.retiredNames.count + 2, fileMode: 0o600,
                readOnly: options.readOnly, durable: options.durable,
                // Durable commits flush their meta page on the flusher thread (see GroupCommitter).
                deferMetaSync: flushesCommits, writableMap: options.writableMap))
            try Self.checkWhenOpened(environment, path: path, options: options)
            // Opened before anything is written, so that every failed write-back from now on is reported to it.
            // (`fdatasync` also writes back pages written through a writable map on Linux; the one ledger
            // opened with such a map, by `rebuildProjections(path:)`, appends nothing and syncs its environment.)
            fileSync = flushesCommits ? try environment.openDataFileSync() : nil
            // Reader slots left by processes that died inside a read transaction would pin old pages forever.
            staleReadersCleared = options.readOnly ? (try? environment.clearStaleReaders()) ?? 0 : try environment.clearStaleReaders()
        } catch {
            throw LedgerError.storage(error, path: path)
        }
        var staleProjections = false
        do {
            if options.readOnly {
                let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: false)
                try Self.checkFormat(environment, meta: meta, path: path)
                if try Self.projectionsVersion(environment, meta: meta) < Self.projectionsVersion {
                    throw Self.olderIndexes(path: path)
                }
            } else {
                let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: true)
                let isNew = try environment.write { txn in
                    guard try txn.get(meta, key: Array("format".utf8)) == nil else { return false }
                    try txn.put(meta, key: Array("format".utf8), value: [Self.formatVersion])
                    try txn.put(meta, key: Array("projections".utf8), value: [Self.projectionsVersion])
                    return true
                }
                try Self.checkFormat(environment, meta: meta, path: path)
                staleProjections = try !isNew && Self.projectionsVersion(environment, meta: meta) < Self.projectionsVersion
            }
            tables = try Tables(environment: environment, create: !options.readOnly)
        } catch let error as LedgerError {
            throw error
        } catch let error as LMDBError where error == .notFound {
            throw LedgerError(.notALedger, "\(path): not a ledger (its LMDB environment has no ledger tables)")
        } catch {
            throw LedgerError.storage(error, path: path)
        }
        if staleProjections {
            try Self.rebuildProjections(environment: environment, tables: tables, path: path)
        }
        rebuiltWhenOpened = staleProjections
        committer = options.readOnly ? nil : GroupCommitter(
            context: .init(
                environment: environment, tables: tables, path: path, clock: options.clock, watch: watch,
                fileSync: fileSync, writerCache: writerCache),
            maxGroupEvents: options.maxEventsPerCommit)
    }

    deinit {
        committer?.stop()
    }

    private static func projectionsVersion(_ environment: Environment, meta: Database) throws -> UInt8 {
        try environment.read { txn in try txn.get(meta, key: Array("projections".utf8)).flatMap { $0.first } } ?? 1
    }

    private static func checkFormat(_ environment: Environment, meta: Database, path: String) throws {
        let version = try environment.read { txn in try txn.get(meta, key: Array("format".utf8)).map { Array($0) } }
        guard let version, version.count == 1 else {
            throw LedgerError(.notALedger, "\(path): not a ledger (no storage format version recorded)")
        }
        guard version[0] <= formatVersion else {
            throw LedgerError(.notALedger, "\(path): storage format \(version[0]) is newer than this build reads (\(formatVersion)); upgrade PermissionLedger")
        }
    }

    // MARK: Appending

    /// What an append did.
    public struct AppendSummary: Hashable, Sendable {
        /// What became of each event, in order.
        public var outcomes: [AppendOutcome]
        /// The log's head afterwards.
        public var head: LogHead

        /// How many events were appended.
        public var appended: Int { outcomes.count { if case .appended = $0 { true } else { false } } }
        /// How many were duplicates (no-ops).
        public var duplicates: Int { outcomes.count - appended }
    }

    /// Appends a batch of events, all or nothing, and returns once they are durable on disk.
    ///
    /// Every acceptance rule of docs/spec/EVENTS.md is checked against the state left by the events before it.
    /// Duplicates (the same id and content, or the same answer again) are accepted as no-ops.
    ///
    /// Calls from many tasks at once are committed together (group commit): the ledger's writer thread
    /// takes every call that arrived while it was busy and commits them in one transaction, with one
    /// flush to disk. A call whose events are rejected fails alone; the others in the same transaction
    /// are committed.
    ///
    /// - Parameters:
    ///   - events: the events, in the order they are to be appended; an empty batch appends nothing and
    ///     returns the current head.
    ///   - maxRejections: the most rejected events reported in ``AppendRejected``; checking stops there.
    /// - Throws: ``AppendRejected`` listing the rejected events (up to `maxRejections`); nothing of this
    ///   call is written. ``LedgerError`` when the ledger cannot be written.
    @discardableResult
    public func append(_ events: [PermissionEvent], maxRejections: Int = 100) async throws -> AppendSummary {
        guard let committer else { throw LedgerError(.storage, "\(path): the ledger is open read-only") }
        guard !events.isEmpty else { return AppendSummary(outcomes: [], head: try head()) }
        return try await withCheckedThrowingContinuation { continuation in
            committer.submit(.init(events: events, maxRejections: maxRejections) { continuation.resume(with: $0) })
        }
    }

    /// What the writer thread has committed since the ledger was opened, for metrics and benchmarks.
    public struct WriterStatistics: Hashable, Sendable {
        /// Write transactions committed (or failed) by the writer thread.
        public var transactions = 0
        /// ``Ledger/append(_:maxRejections:)`` calls served, accepted or not.
        public var requests = 0
        /// Events offered in those calls.
        public var events = 0
        /// The most calls served by one transaction.
        public var largestGroup = 0
    }

    /// What the writer thread has done so far: `requests / transactions` is the average group size.
    public var writerStatistics: WriterStatistics { committer?.statistics ?? WriterStatistics() }

    /// Appends one event like ``append(_:maxRejections:)`` and returns what became of it.
    ///
    /// - Throws: ``AppendRejected`` when the event is rejected, ``LedgerError`` when the ledger cannot be written.
    @discardableResult
    public func append(_ event: PermissionEvent) async throws -> AppendOutcome {
        try await append([event]).outcomes[0]
    }

    /// Appends a batch like ``append(_:maxRejections:)``, blocking the calling thread until it is durable.
    ///
    /// The batch is written in a write transaction of its own, on the calling thread, not through the
    /// writer thread's group commit.
    ///
    /// - Parameters:
    ///   - events: the events, in the order they are to be appended.
    ///   - maxRejections: the most rejected events reported in ``AppendRejected``; checking stops there.
    ///   - progress: called with the number of events checked so far, every 10,000 events, for long batches.
    /// - Throws: ``AppendRejected`` when any event is rejected (nothing is written), ``LedgerError`` when the
    ///   ledger cannot be written.
    @discardableResult
    public func appendSynchronously(
        _ events: [PermissionEvent], maxRejections: Int = 100, progress: ((Int) -> Void)? = nil
    ) throws -> AppendSummary {
        try writeBatch(events, maxRejections: maxRejections, dryRun: false, progress: progress)
    }

    /// Checks a batch against every rule as ``append(_:maxRejections:)`` would, and writes nothing.
    public func validate(_ events: [PermissionEvent], maxRejections: Int = 100, progress: ((Int) -> Void)? = nil) throws -> AppendSummary {
        try writeBatch(events, maxRejections: maxRejections, dryRun: true, progress: progress)
    }

    private struct DryRun: Error { var summary: AppendSummary }

    private func writeBatch(
        _ events: [PermissionEvent], maxRejections: Int, dryRun: Bool, progress: ((Int) -> Void)? = nil
    ) throws -> AppendSummary {
        guard !options.readOnly else { throw LedgerError(.storage, "\(path): the ledger is open read-only") }
        if let failure = watch.failure { throw failure }
        let request = GroupCommitter.Request(events: events, maxRejections: maxRejections) { _ in }
        do {
            let summary = try writerCache.write(environment) { txn, cache in
                let summary = try GroupCommitter.apply(
                    request, store: LMDBStore(txn: txn, tables: tables, cache: cache), head: try Self.head(txn.reader, tables),
                    clock: options.clock, progress: progress)
                if dryRun { throw DryRun(summary: summary) }
                return summary
            }
            try finishSynchronousCommit(through: summary.head.seq)
            return summary
        } catch let dry as DryRun {
            return dry.summary
        } catch let rejected as AppendRejected {
            throw rejected
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    /// After a write transaction of the calling thread (not the writer thread) committed the log through
    /// `seq`: makes the commit durable and tells subscriptions, as the writer thread does for its groups.
    func finishSynchronousCommit(through seq: UInt64) throws(LedgerError) {
        // The environment defers the flush of the commit's meta page: make it durable before returning.
        if let fileSync {
            watch.committed(through: seq)
            try GroupCommitter.flushToDisk(fileSync, watch: watch, path: path)
        }
        watch.advanced(to: seq)
    }

    /// The head of a read transaction's snapshot, kept for the next read of the same snapshot: queries
    /// read the head for every view, and finding it costs a seek and a decode.
    final class HeadCache: @unchecked Sendable {
        private let lock = NSLock()
        private var snapshot = -1
        private var head = LogHead.empty

        func head(_ txn: ReadTransaction, _ tables: Tables) throws -> LogHead {
            let id = try txn.snapshotID()
            if let known = lock.withLock({ snapshot == id ? head : nil }) { return known }
            let found = try Ledger.head(txn, tables)
            // Ids only grow: a reader of an older snapshot finishing late does not displace a newer head.
            lock.withLock { if id > snapshot { (snapshot, head) = (id, found) } }
            return found
        }
    }

    static func head(_ txn: ReadTransaction, _ tables: Tables) throws -> LogHead {
        guard let last = try txn.cursor(tables.events).last() else { return .empty }
        let stored = try decodeStoredHeader(last.value, id: false)
        return LogHead(seq: Keys.decodeSeq(last.key), hash: stored.hash, recordedAt: stored.header.recordedAt)
    }

    // MARK: Reading

    /// Runs `body` with a consistent view of the ledger as of `asOf`, in one read-only transaction on the
    /// calling thread. The view is valid only inside `body`.
    ///
    /// - Throws: ``LedgerError`` (`.notFound` for a `seq:N` beyond the head), or what `body` throws.
    public func read<T>(asOf: AsOf = .now, _ body: (LedgerView) throws -> T) throws -> T {
        do {
            return try environment.read { txn in
                let view = try LedgerView(txn: txn, tables: tables, asOf: asOf, now: options.clock(), head: try cachedHead.head(txn, tables))
                return try body(view)
            }
        } catch let error as LedgerError {
            throw error
        } catch let error as LMDBError {
            throw LedgerError.storage(error, path: path)
        } catch let error as EventRecord.DecodingError {
            throw LedgerError(.damaged, error.description)
        }
    }

    /// The log's head.
    public func head() throws -> LogHead {
        try read { $0.head }
    }

    /// Calls `body` with each event after `seq` `after`, in `seq` order, with `seq`, `recordedAt` and `hash`.
    public func forEachEvent(after: UInt64 = 0, _ body: (PermissionEvent) throws -> Void) throws {
        try read { view in try view.forEachEvent(after: after, through: view.head.seq, body) }
    }

    /// Writes the events after `seq` `after` as JSON Lines, one per call of `write`, each ending in `\n`.
    public func export(after: UInt64 = 0, _ write: (String) throws -> Void) throws {
        try forEachEvent(after: after) { try write(EventJSON.encode($0) + "\n") }
    }

    /// The digest of all derived state as of a point: see ``LedgerView/digest()``.
    ///
    /// With no point, the digest is taken as of the head (`seq:` of the last event, whose `recordedAt` is
    /// the clock), not the wall clock, so that it depends on the events alone.
    public func digest(asOf: AsOf? = nil) throws -> String {
        let point = try asOf ?? .seq(head().seq)
        return try read(asOf: point) { try $0.digest() }
    }
}
