internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

extension Ledger {
    /// Derives every projection anew from the log, replacing the kept ones, in one write transaction.
    /// Use it after `verify` reported a damaged projection while the log itself is intact.
    ///
    /// On a machine with more than one core, the log is read, checked against its hash chain and decoded on
    /// a second thread, a few hundred events ahead of the rules. The first damage in log order is reported
    /// (``LedgerError/Kind/damaged``, with its `seq`), whichever thread finds it, and nothing is changed.
    ///
    /// ``rebuildProjections(path:progress:)`` writes the same tables faster (by 10 to 30% in docs/PERFORMANCE.md's
    /// measurements), in a ledger not open in this process.
    ///
    /// Its cost grows with the log: it runs on a thread of its own, not on the cooperative pool, reports to
    /// `progress` every 1,024 events, and stops with `CancellationError`, changing nothing, when its task is
    /// cancelled.
    public func rebuildProjections(progress: (@Sendable (LedgerProgress) -> Void)? = nil) async throws {
        try await offPool("ledger-rebuild") { [self] cancellation in
            try rebuildProjections(tuning: RebuildTuning(progress: progress, cancellation: cancellation))
        }
    }

    /// ``rebuildProjections(progress:)`` on the calling thread, for the tool and tests.
    package func rebuildProjections() throws(LedgerError) {
        try typedRebuild { () throws in try rebuildProjections(tuning: RebuildTuning()) }
    }

    /// ``rebuildProjections(progress:)`` with the log read ahead on a second thread (`readingAhead`, the default on a
    /// machine with more than one core) or on the rebuilding thread: the benchmark suite measures both.
    @_spi(StorageEngine) public func rebuildProjections(readingAhead: Bool) throws(LedgerError) {
        try typedRebuild { () throws in
            try rebuildProjections(tuning: RebuildTuning(readAheadBatchSize: readingAhead ? RebuildTuning.readAheadBatch : nil))
        }
    }

    /// Runs a rebuild that cannot be cancelled (it has no `Cancellation`), so that it throws ``LedgerError`` only.
    private func typedRebuild<T>(_ body: () throws -> T) throws(LedgerError) -> T {
        do {
            return try body()
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    /// Derives every projection anew from the log of the ledger at `path`, opened for this alone with LMDB's
    /// map writable, and returns the log's head: what `permission-ledger rebuild` runs. It writes the very
    /// same tables as ``rebuildProjections(progress:)``, faster (by 10 to 30% in docs/PERFORMANCE.md), as its
    /// pages are written in place in the map instead of copied and looked up in a list of the transaction's
    /// own.
    ///
    /// The data file is first made as large as the map (about twice the ledger's size in use) and its blocks
    /// reserved on disk, so that a full disk fails there, with a `.storage` error, before anything is
    /// written; the room is kept for later appends. Other processes may read the ledger meanwhile, and
    /// write to it (they wait for the rebuild's transaction), on Linux and Apple's systems.
    /// The ledger must not be open in this process (that throws `.locked`); a missing one is created empty,
    /// as ``init(path:options:)`` does.
    ///
    /// Like ``rebuildProjections(progress:)``, it runs on a thread of its own, reports to `progress` and stops
    /// with `CancellationError`, changing nothing, when its task is cancelled.
    @discardableResult
    public static func rebuildProjections(path: String, progress: (@Sendable (LedgerProgress) -> Void)? = nil) async throws -> LogHead {
        try await offPool("ledger-rebuild") { cancellation in
            try rebuildProjections(path: path, tuning: RebuildTuning(progress: progress, cancellation: cancellation))
        }
    }

    /// ``rebuildProjections(path:progress:)`` on the calling thread, for the tool and tests.
    @discardableResult
    package static func rebuildProjections(path: String) throws(LedgerError) -> LogHead {
        do {
            return try rebuildProjections(path: path, tuning: RebuildTuning())
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    /// ``rebuildProjections(path:progress:)`` with the log read ahead on a second thread or not, as
    /// ``rebuildProjections(readingAhead:)``: the benchmark suite measures both.
    @_spi(StorageEngine) @discardableResult
    public static func rebuildProjections(path: String, readingAhead: Bool) throws(LedgerError) -> LogHead {
        do {
            return try rebuildProjections(path: path, tuning: RebuildTuning(readAheadBatchSize: readingAhead ? RebuildTuning.readAheadBatch : nil))
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    private static func rebuildProjections(path: String, tuning: RebuildTuning) throws -> LogHead {
        // The map (and so the file's reserved room) is sized to twice the ledger's pages in use when it opens.
        var options = Options(mapSize: 1 << 20)
        options.writableMap = true
        // A rebuild reads every page anyway: walking them first costs little, and nothing is written on damage.
        options.checksPages = true
        // There is nothing to rebuild where there is no ledger: a mistyped path is an error, not a new ledger.
        options.makesLedger = false
        let ledger = try Ledger(path: path, options: options, rebuild: tuning)
        // A ledger whose derived tables were older has just been rebuilt, the same way.
        if !ledger.rebuiltWhenOpened { try ledger.rebuildProjections(tuning: tuning) }
        do {
            return try ledger.head()
        } catch {
            throw error as? LedgerError ?? LedgerError.storage(error, path: path)
        }
    }

    private func rebuildProjections(tuning: RebuildTuning) throws {
        guard !options.readOnly else { throw LedgerError.readOnly(path: path) }
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
        /// Told how far the rebuild has got, every ``cancellationInterval`` events.
        var progress: (@Sendable (LedgerProgress) -> Void)?
        /// Stops the rebuild (its transaction is aborted: nothing changes) when the task asking for it is cancelled.
        var cancellation: Cancellation?

        init(
            readAheadBatchSize: Int? = ProcessInfo.processInfo.activeProcessorCount > 1 ? readAheadBatch : nil,
            heldRowLimit: Int = 1 << 20, cacheLimit: Int = 200_000
        ) {
            self.readAheadBatchSize = readAheadBatchSize
            self.heldRowLimit = heldRowLimit
            self.cacheLimit = cacheLimit
        }

        init(progress: (@Sendable (LedgerProgress) -> Void)?, cancellation: Cancellation?) {
            self.init()
            self.progress = progress
            self.cancellation = cancellation
        }
    }

    static func rebuildProjections(environment: Environment, tables: Tables, path: String, tuning: RebuildTuning = .init()) throws {
        do {
            // The old derived tables' pages are freed only when the transaction commits, so the new ones take
            // room of their own. A map that fills would be grown, and the whole rebuild run again from the first
            // event (`Environment.write`); make the room first instead: as much again as the ledger uses, which
            // holds the log and the old tables. The map is address space, not memory or disk (but for a writable
            // map, whose file already holds room for twice the pages in use: see `Environment.resizeMap(to:)`).
            try environment.reserve(freeBytes: try environment.usedSize)
            try environment.write { txn in
                // The keys a write that did not commit left go first, as every write's do, and this one's if it throws.
                try KeyRing.writing(txn, tables) {
                    for (_, db) in tables.derived { try txn.drop(db) }
                    // Tables of earlier versions that this one no longer keeps: their pages would otherwise stay in use.
                    for name in StorageTable.retiredNames { try txn.deleteDatabase(named: name) }
                    try txn.put(tables.meta, key: Array("projections".utf8), value: [Ledger.projectionsVersion])
                    let store = LMDBStore(txn: txn, tables: tables, cacheLimit: tuning.cacheLimit)
                    store.rewritesLog = false
                    store.heldRowLimit = tuning.heldRowLimit
                    var projector = Projector(store: store, head: .empty)
                    let total = try Ledger.head(txn.reader, tables).seq
                    func apply(_ event: PermissionEvent, _ record: [UInt8], _ hash: ChainHash) throws {
                        if event.seq! % cancellationInterval == 0 {
                            try tuning.cancellation?.check()
                            tuning.progress?(LedgerProgress(completed: event.seq!, total: total))
                        }
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
                    try tuning.cancellation?.check()
                    tuning.progress?(LedgerProgress(completed: total, total: total))
                }
            }
            try environment.sync(force: true)
        } catch let cancelled as CancellationError {
            throw cancelled
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }
}
