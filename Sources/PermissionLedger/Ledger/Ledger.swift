public import CoreMetrics
import Foundation
internal import LMDB
public import Logging
import PermissionModel

/// A ledger of permission events stored in an LMDB environment directory.
///
/// Every question, send-cancel, answer, expiry, observation of known handles and permission change is
/// appended as an immutable event; question states, known handles and permission states are projections
/// kept beside the log, updated in the same transaction, and versioned by `seq` so that any query can be
/// asked as of any point of the log.
///
/// ```swift
/// let ledger = try await Ledger.open(path: "family.ledger")
/// let events = try lines.compactMap { try EventJSON.decode(line: $0) }
/// let summary = try await ledger.append(events)
/// let handles = try ledger.read { try $0.knownHandles(subject: "kid-1") }
/// await ledger.close()
/// ```
///
/// A `Ledger` is safe to share between tasks and threads. Writes run one at a time on a writer thread;
/// reads run on the caller's thread in their own read-only transaction and never block writers.
///
/// ## Which calls block
///
/// What costs time in proportion to the log is `async` and runs on a thread of its own, never on the
/// cooperative pool, and stops with `CancellationError` when its task is cancelled: ``open(path:options:progress:)``
/// (which may rebuild the derived tables of an older version), ``verify(progress:)``, ``digest(asOf:)``,
/// ``statistics(asOf:)``, ``forEachEvent(after:_:)``, ``export(after:_:)``, ``rebuildProjections(progress:)``
/// and ``backup(to:)``. Appends are `async` and wait for the writer thread without blocking.
///
/// What stays synchronous is cheap and says so: ``head()``, a few page reads (O(log n)); ``read(asOf:_:)``,
/// whose cost is its body's (every query of ``LedgerView`` is O(log n) in the log, plus what it returns);
/// ``init(path:options:)``, a few page reads unless the derived tables need a rebuild (prefer
/// ``open(path:options:progress:)`` in async code); ``validate(_:maxRejections:progress:)`` and
/// ``appendSynchronously(_:maxRejections:progress:)``, in proportion to the batch, for command-line tools.
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
        ///
        /// A clock that steps back (an NTP correction, say) is not followed backwards: an event is recorded at
        /// the later of the clock and the head's `recordedAt`, so that `recordedAt` never decreases along the
        /// log and `asOf: .time(...)` always names a prefix of it.
        public var clock: @Sendable () -> Timestamp
        /// The most events that concurrent ``Ledger/append(_:maxRejections:)`` calls share one write
        /// transaction with (group commit). A single call with more events is still committed whole.
        /// `1` commits every call in a transaction of its own.
        public var maxEventsPerCommit: Int
        /// When opening for writing, first walks every page of the data file's trees, read with `pread`
        /// (see `/LMDB/PageWalk`), and refuses a data file whose pages are damaged: what
        /// `permission-ledger import` and `rebuild` do before they write. It costs a read of every page in use.
        public var checksPages = false
        /// When opening for writing, makes a new ledger where there is none: an absent or empty directory (the
        /// default). `false` refuses such a path as a read-only open does (``LedgerError/Kind/missing``, or
        /// ``LedgerError/Kind/notALedger`` for an empty directory): what `permission-ledger erase` and `retain`
        /// do, so that a mistyped path is an error, not a new empty ledger in which there is nothing to erase.
        public var makesLedger = true
        /// Where the ledger logs what it does: opening (and a rebuild of older derived tables, with progress),
        /// closing, failed commits. No log line holds a personal value (a subject, a handle, a name): only
        /// paths, counts, `seq`s and errors. The default discards everything.
        public var logger: Logger
        /// Makes the ledger's metrics (see ``LedgerMetricNames``); `nil`, the default, uses the factory the
        /// process bootstrapped with `MetricsSystem.bootstrap`.
        public var metricsFactory: (any MetricsFactory)?
        /// The file of the ledger's key, which wraps the keys its personal fields are sealed with (docs/spec/PRIVACY.md);
        /// `nil`, the default, takes the file `PERMISSION_LEDGER_KEY_FILE` names, or else `ledger.key` in the
        /// ledger's directory, made there with a new key when the ledger is made.
        public var keyFile: String?
        /// Where new keys, salts and nonces come from: the system's secure generator, or for tests only a seed.
        package var secrets = SecretSource.system
        /// The most entries of each cache of a streamed append's transaction (see `LMDBStore.cacheLimit`): tests
        /// make it small, to empty the caches on the way without millions of events.
        package var streamCacheLimit = 16_384
        /// The storage format a new ledger is made in: this build's (``Ledger/formatVersion``), or for tests and
        /// benchmarks of the ledgers made before it, format 2. An existing ledger keeps its own.
        @_spi(StorageEngine) public var newLedgerFormat = Ledger.formatVersion
        /// Opens LMDB's map writable (`MDB_WRITEMAP`, see ``/LMDB/Environment/Options/writableMap``): what
        /// ``Ledger/rebuildProjections(path:progress:)`` opens with, and nothing else.
        var writableMap = false

        /// Creates options; the defaults suit a durable ledger that grows on demand.
        public init(
            mapSize: Int = 64 << 20, readOnly: Bool = false, durable: Bool = true,
            clock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) },
            maxEventsPerCommit: Int = 4096,
            logger: Logger = Logger(label: "PermissionLedger", factory: { _ in SwiftLogNoOpLogHandler() }),
            metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.mapSize = mapSize
            self.readOnly = readOnly
            self.durable = durable
            self.clock = clock
            self.maxEventsPerCommit = maxEventsPerCommit
            self.logger = logger
            self.metricsFactory = metricsFactory
        }
    }

    /// The version of the storage format this build writes (see `docs/STORAGE.md`).
    public static let formatVersion: UInt8 = 3

    /// The oldest storage format this build writes: format 1 keeps personal fields unencrypted, and opens
    /// read-only.
    static let oldestWritableFormat: UInt8 = 2

    /// The version of the derived tables (projections and indexes) this build keeps. A ledger whose
    /// derived tables are older is rebuilt from its log when opened for writing (see `docs/STORAGE.md`).
    static let projectionsVersion: UInt8 = 9

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
    /// The ledger's metrics, made with the factory of its options.
    let metrics: LedgerMetrics

    /// Opens the ledger at `path`, creating it (mode 0700, files 0600) unless `options.readOnly`.
    ///
    /// Other processes may have the same ledger open at the same time, for reading or writing (LMDB
    /// serializes their writes); reader slots left behind by processes that died are cleared here.
    /// Within one process, open a ledger once and share the `Ledger`: a second open of the same directory
    /// throws `.locked` until the first `Ledger` is closed (``close()``) or released.
    ///
    /// - Throws: ``LedgerError`` of kind `.missing` when a read-only open finds no ledger, `.notALedger`
    ///   when the directory holds something else, `.locked` when it is already open in this process,
    ///   `.storage` when it sits on a network file system (or LMDB cannot use it otherwise), `.damaged`
    ///   when its data file is damaged.
    ///
    /// Opening reads a few pages, unless the ledger's derived tables were made by an older version: then they
    /// are rebuilt from the log first, in time linear in the log. In async code use
    /// ``open(path:options:progress:)``, which does the same off the cooperative pool, with progress and
    /// cancellation.
    public convenience init(path: String, options: Options = Options()) throws(LedgerError) {
        do {
            try self.init(path: path, options: options, rebuild: RebuildTuning())
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    /// Opens the ledger at `path` as ``init(path:options:)`` does, on a thread of its own: when the ledger's
    /// derived tables were made by an older version and are rebuilt from the log first, that takes time
    /// linear in the log, reported to `progress`, and stops with `CancellationError` (leaving the ledger as
    /// it was) when the task is cancelled.
    ///
    /// - Parameters:
    ///   - path: the ledger's directory.
    ///   - options: how to open it.
    ///   - progress: called, on the opening thread, as a rebuild goes (every 1,024 events); never when there is none.
    /// - Throws: ``LedgerError`` as ``init(path:options:)`` does; `CancellationError`.
    public static func open(
        path: String, options: Options = Options(), progress: (@Sendable (LedgerProgress) -> Void)? = nil
    ) async throws -> Ledger {
        try await offPool("ledger-open") { cancellation in
            try Ledger(path: path, options: options, rebuild: RebuildTuning(progress: progress, cancellation: cancellation))
        }
    }

    /// Opens the ledger, rebuilding derived tables of an older version as `tuning` says.
    init(path: String, options: Options, rebuild tuning: RebuildTuning) throws {
        self.path = path
        self.options = options
        // Commits are flushed to disk by the ledger, not by LMDB alone (see GroupCommitter).
        let flushesCommits = options.durable && !options.readOnly
        // The directory is looked at and the environment opened while no other open in this process runs: two
        // opens of one new ledger at once are then one ledger and one `.locked`, neither seeing the other's half.
        // The making of a new ledger, when this open makes one (or finishes one whose maker stopped midway).
        var creation: LedgerCreation?
        var opened: Environment?
        while opened == nil {
            var makerAtWork = false
            opened = try Environment.whileOpening { () throws(LedgerError) -> Environment? in
                switch try LedgerDirectory.prepare(path: path, readOnly: options.readOnly, makes: !options.readOnly && options.makesLedger) {
                case .open: break
                case .make(let making): creation = making
                case .makerAtWork:
                    makerAtWork = true
                    return nil
                }
                try Ledger.checkBeforeOpening(path: path, options: options)
                do {
                    return try Environment(path: path, options: .init(
                        mapSize: options.mapSize, maxDatabases: StorageTable.allCases.count + StorageTable.retiredNames.count + 2, fileMode: 0o600,
                        readOnly: options.readOnly, durable: options.durable,
                        // Durable commits flush their meta page on the flusher thread (see GroupCommitter).
                        deferMetaSync: flushesCommits, writableMap: options.writableMap))
                } catch {
                    throw LedgerError.storage(error, path: path)
                }
            }
            // Another process is making the ledger: its lock is waited for outside the opening of environments, so
            // that this process's other ledgers open meanwhile; then the directory is looked at again.
            if makerAtWork { try LedgerCreation.waitForMaker(path: path) }
        }
        environment = opened!
        do {
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
        var format = Self.formatVersion
        var isNew = false
        /// The key made (or found) for a ledger that had not recorded its format yet.
        var newKey: LedgerKey?
        do {
            if options.readOnly {
                let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: false)
                format = try Self.checkFormat(environment, meta: meta, path: path)
                if try Self.projectionsVersion(environment, meta: meta) < Self.projectionsVersion {
                    throw Self.olderIndexes(path: path)
                }
            } else {
                let meta = try environment.openDatabase(StorageTable.meta.rawValue, create: true)
                // A new ledger's key is made before the ledger records its format: a process that dies in
                // between leaves a key and no ledger, which the next open takes up, never a ledger without its key
                // (which would never open for writing again).
                if try environment.read({ txn in try txn.get(meta, key: Array("format".utf8)) == nil }) {
                    newKey = try LedgerKey.readOrCreate(at: LedgerKey.Location.of(ledgerPath: path, given: options.keyFile), secrets: options.secrets)
                }
                isNew = try environment.write { txn in
                    guard try txn.get(meta, key: Array("format".utf8)) == nil else { return false }
                    precondition((Self.oldestWritableFormat...Self.formatVersion).contains(options.newLedgerFormat))
                    try txn.put(meta, key: Array("format".utf8), value: [options.newLedgerFormat])
                    try txn.put(meta, key: Array("projections".utf8), value: [Self.projectionsVersion])
                    return true
                }
                format = try Self.checkFormat(environment, meta: meta, path: path)
                guard format >= Self.oldestWritableFormat else { throw Self.plaintextFormat(path: path) }
                staleProjections = try !isNew && Self.projectionsVersion(environment, meta: meta) < Self.projectionsVersion
            }
            let keyRing = format < Self.oldestWritableFormat ? nil
                : try Self.keyRing(path: path, options: options, newKey: newKey, use: KeyUse(format: format), environment: environment)
            var opened = try Tables(environment: environment, create: !options.readOnly, keyRing: keyRing)
            opened.keyLocation = LedgerKey.Location.of(ledgerPath: path, given: options.keyFile)
            if keyRing == nil, format >= Self.oldestWritableFormat, !Self.keyStoreExists(directory: path),
               (try? LedgerKey.read(at: opened.keyLocation)) != nil {
                opened.missingKeyStore = path + "/" + KeyStore.fileName
            }
            tables = opened
        } catch let error as LedgerError {
            throw error
        } catch let error as LMDBError where error == .notFound {
            throw LedgerError(.notALedger, "\(path): not a ledger (its LMDB environment has no ledger tables)")
        } catch {
            throw LedgerError.storage(error, path: path)
        }
        if staleProjections {
            options.logger.notice("rebuilding the derived tables of an older version from the log", metadata: ["path": "\(path)"])
            try Self.rebuildProjections(environment: environment, tables: tables, path: path, tuning: tuning)
        }
        rebuiltWhenOpened = staleProjections
        if !options.readOnly {
            // An erasure committed just before a crash: its keys are overwritten now.
            do {
                try tables.keyRing?.completeDestruction(environment, tables)
                // A ledger made before it kept handle values: they are filled from its log, once.
                let filling = tables
                if filling.madeHandleValues, !isNew, let keyRing = filling.keyRing {
                    options.logger.notice("filling the handle values of a ledger that has none from its log", metadata: ["path": "\(path)"])
                    try environment.write { txn in
                        // The values keys made are durable before the transaction that names them commits.
                        try KeyRing.writing(txn, filling) { try HandleDirectory.fill(txn, filling, keyRing) }
                    }
                }
            } catch let error as LedgerError {
                throw error
            } catch {
                throw LedgerError.storage(error, path: path)
            }
        }
        // Made: its format recorded, its key store made. Until here a kill left the mark, and the next writer goes on.
        try creation?.finish(environment)
        let metrics = LedgerMetrics(factory: options.metricsFactory)
        self.metrics = metrics
        committer = options.readOnly ? nil : GroupCommitter(
            context: .init(
                environment: environment, tables: tables, path: path, clock: options.clock, watch: watch,
                fileSync: fileSync, writerCache: writerCache, metrics: metrics, logger: options.logger),
            maxGroupEvents: options.maxEventsPerCommit)
        options.logger.info("opened the ledger", metadata: [
            "path": "\(path)", "readOnly": "\(options.readOnly)", "durable": "\(options.durable)",
            "staleReadersCleared": "\(staleReadersCleared)", "rebuilt": "\(staleProjections)",
        ])
    }

    deinit {
        committer?.stop()
    }

    private static func projectionsVersion(_ environment: Environment, meta: Database) throws -> UInt8 {
        try environment.read { txn in try txn.get(meta, key: Array("projections".utf8)).flatMap { $0.first } } ?? 1
    }

    /// The ledger's storage format, refused when newer than this build's.
    private static func checkFormat(_ environment: Environment, meta: Database, path: String) throws -> UInt8 {
        let version = try environment.read { txn in try txn.get(meta, key: Array("format".utf8)).map { Array($0) } }
        guard let version, version.count == 1 else {
            throw LedgerError(.notALedger, "\(path): not a ledger (no storage format version recorded)")
        }
        guard version[0] <= formatVersion else {
            throw LedgerError(.notALedger, "\(path): storage format \(version[0]) is newer than this build reads (\(formatVersion)); upgrade PermissionLedger")
        }
        return version[0]
    }

    /// A ledger of format 1 keeps personal fields as they are: it opens read-only, and is upgraded by copying
    /// its events into a new ledger.
    static func plaintextFormat(path: String) -> LedgerError {
        LedgerError(.notALedger, "\(path): a ledger of storage format 1, which keeps personal fields unencrypted; it opens read-only; upgrade it into a new ledger with permission-ledger migrate \(path) NEW")
    }

    /// The key ring of a ledger of format 2 or later: its key (made with the ledger when it is new) and its key store.
    /// A read-only open without the key file has none: `verify` needs no key, and whatever shows a personal
    /// field says where the key was looked for.
    static func keyRing(path: String, options: Options, newKey: LedgerKey?, use: KeyUse, environment: Environment) throws -> KeyRing? {
        let location = LedgerKey.Location.of(ledgerPath: path, given: options.keyFile)
        let ledgerKey: LedgerKey
        if let newKey {
            ledgerKey = newKey
        } else if let existing = try LedgerKey.read(at: location, removingLeftover: !options.readOnly) {
            ledgerKey = existing
        } else if options.readOnly || options.writableMap {
            // Read-only, or opened for a rebuild, which reads no personal field.
            return nil
        } else {
            throw LedgerError.missingKey(location)
        }
        let writerCheck = options.readOnly || newKey != nil ? nil : try keyStoreInUse(environment)
        if let writerCheck, writerCheck.holdsKeys, !keyStoreExists(directory: path) {
            throw LedgerError(.damaged, KeyStore.missing(directory: path))
        }
        guard let store = try KeyStore.open(directory: path, ledgerKey: ledgerKey, writable: !options.readOnly, secrets: options.secrets) else {
            return nil
        }
        if let writerCheck, store.slotCount < writerCheck.slots {
            throw LedgerError(.damaged, KeyStore.cutShort(directory: path, slots: store.slotCount, used: writerCheck.slots))
        }
        let slotsInUse = try (writerCheck ?? keyStoreInUse(environment)).slots
        try store.checkLedgerKey(writable: !options.readOnly, secrets: options.secrets, slotsInUse: slotsInUse)
        return KeyRing(ledgerKey: ledgerKey, store: store, secrets: options.secrets, use: use)
    }

    /// What a writer checks its key store against: whether the ledger holds key entries, and how many slots
    /// the store had at the last commit that added one (0 for a ledger written before it was recorded).
    static func keyStoreInUse(_ environment: Environment) throws -> (holdsKeys: Bool, slots: UInt64) {
        guard let keys = try? environment.openDatabase(StorageTable.keys.rawValue, create: false),
              let meta = try? environment.openDatabase(StorageTable.meta.rawValue, create: false) else { return (false, 0) }
        return try environment.read { txn in
            let slots = try txn.get(meta, key: KeyRing.slotCountEntry).flatMap { $0.count == 8 ? Keys.decodeSeq($0) : nil } ?? 0
            return (try txn.statistics(keys).entries > 0 || slots > 0, slots)
        }
    }

    /// Whether anything stands at the key store's name in the ledger directory (a link is not followed).
    private static func keyStoreExists(directory: String) -> Bool {
        var info = stat()
        return lstat(directory + "/" + KeyStore.fileName, &info) == 0
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
        guard let committer else { throw LedgerError.readOnly(path: path) }
        guard !events.isEmpty else { return AppendSummary(outcomes: [], head: try head()) }
        let started = ContinuousClock.now
        defer { metrics.appendDuration.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - started)) }
        return try await withCheckedThrowingContinuation { continuation in
            committer.submit(.init(events: events, maxRejections: maxRejections) { continuation.resume(with: $0) })
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds &* 1_000_000_000 &+ duration.components.attoseconds / 1_000_000_000
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

    /// Appends `events` of another ledger's log, in one transaction, under the text rules of stored events: what
    /// ``migrate(from:to:options:)`` carries over is read as it was accepted.
    func appendStoredElsewhere(_ events: [PermissionEvent]) throws -> AppendSummary {
        try writeBatch(events, maxRejections: 100, dryRun: false, storedElsewhere: true)
    }

    private func writeBatch(
        _ events: [PermissionEvent], maxRejections: Int, dryRun: Bool, storedElsewhere: Bool = false, progress: ((Int) -> Void)? = nil
    ) throws -> AppendSummary {
        guard !options.readOnly else { throw LedgerError.readOnly(path: path) }
        if let failure = watch.failure { throw failure }
        let request = GroupCommitter.Request(events: events, maxRejections: maxRejections, storedElsewhere: storedElsewhere) { _ in }
        do {
            let summary = try writerCache.write(environment) { txn, cache in
                // The closure runs again from scratch when the map has to grow: the data keys of a run that did not
                // commit are destroyed, and this run's when it throws.
                return try KeyRing.writing(txn, tables) {
                    let summary = try GroupCommitter.apply(
                        request, store: LMDBStore(txn: txn, tables: tables, cache: cache), head: try Self.head(txn.reader, tables),
                        clock: options.clock, progress: progress)
                    if dryRun { throw DryRun(summary: summary) }
                    // The data keys this transaction made are durable before it commits the records they seal.
                    try GroupCommitter.syncNewKeys(tables, watch: watch, path: path)
                    return summary
                }
            }
            try tables.keyRing?.completeDestruction(environment, tables)
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
    /// It blocks the calling thread for as long as `body` runs: every query of ``LedgerView`` costs
    /// O(log n) in the log plus what it returns, so a few lookups here are fine on the cooperative pool.
    /// For work that grows with the log, use the `async` calls (see "Which calls block" above).
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
            // Damage found away from an event (a row of a derived table): named by the ledger's path.
            throw LedgerError(.damaged, "\(path): \(error.description)")
        }
    }

    /// ``read(asOf:_:)``, called again on a newer snapshot, up to `retries` times, when an erasure recorded while
    /// `body` ran destroyed a key it needed (``LedgerError/Remedy/readAgain``): the next read sees the erasure, and
    /// answers with the erased values marked as such. For a `body` that does nothing but return what it read: one
    /// that writes out as it reads (an export) would write its first part twice.
    ///
    /// An erasure overwrites its keys as soon as it commits, so that none stays readable once it returns; a read
    /// that began before it still sees the events it erases as they were, and cannot open them.
    ///
    /// - Throws: what ``read(asOf:_:)`` throws; ``LedgerError`` with the remedy
    ///   ``LedgerError/Remedy/readAgain`` when erasures kept coming through `retries + 1` reads.
    public func read<T>(asOf: AsOf = .now, retries: Int, _ body: (LedgerView) throws -> T) throws -> T {
        var retriesLeft = retries
        while true {
            do {
                return try read(asOf: asOf, body)
            } catch let error as LedgerError where error.remedy == .readAgain && retriesLeft > 0 {
                retriesLeft -= 1
            }
        }
    }

    /// How many times the engine's own queries (``SubjectLedger``'s, ``digest(asOf:)``, ``AuditReport``) read again
    /// after an erasure recorded while they read (``read(asOf:retries:_:)``): each erasure that meets a read costs
    /// it one, and a retention run records its erasures one subject after another.
    public static let readRetries = 3

    /// The log's head: O(log n), a few page reads, on the calling thread.
    public func head() throws -> LogHead {
        try read { $0.head }
    }

    /// Calls `body` with each event after `seq` `after`, in `seq` order, up to the head when the call began.
    /// Each event's chain hash is checked as it is read: one whose bytes the chain does not vouch for throws
    /// ``LedgerError`` (`.damaged`, naming its `seq`) before it reaches `body`.
    ///
    /// Runs on a thread of its own (where `body` is called), not on the cooperative pool, and stops with
    /// `CancellationError` soon after the task is cancelled. To follow the log live, use ``events(after:subject:pollInterval:)``.
    public func forEachEvent(after: UInt64 = 0, _ body: @escaping @Sendable (RecordedEvent) throws -> Void) async throws {
        try await offPool("ledger-scan") { [self] cancellation in
            try forEachEvent(after: after, cancellation: cancellation, body)
        }
    }

    /// ``forEachEvent(after:_:)`` on the calling thread, for the tool and tests.
    package func forEachEvent(after: UInt64 = 0, _ body: (RecordedEvent) throws -> Void) throws {
        try forEachEvent(after: after, cancellation: nil, body)
    }

    private func forEachEvent(after: UInt64, cancellation: Cancellation?, _ body: (RecordedEvent) throws -> Void) throws {
        try read { view in
            try view.forEachStoredEvent(after: after, through: view.head.seq, checkingChain: true) { event in
                try cancellation?.check(every: cancellationInterval, event.seq!)
                try body(RecordedEvent(stored: event))
            }
        }
    }

    /// Writes the events after `seq` `after` as JSON Lines, one per call of `write`, each ending in `\n`,
    /// as ``forEachEvent(after:_:)`` does: off the cooperative pool, cancellable.
    public func export(after: UInt64 = 0, _ write: @escaping @Sendable (String) throws -> Void) async throws {
        try await forEachEvent(after: after) { try write(EventJSON.encode($0) + "\n") }
    }

    /// ``export(after:_:)`` on the calling thread, for the tool and tests.
    package func export(after: UInt64 = 0, _ write: (String) throws -> Void) throws {
        try forEachEvent(after: after) { try write(EventJSON.encode($0) + "\n") }
    }

    /// The digest of all derived state as of a point: see ``LedgerView/digest()``.
    ///
    /// With no point, the digest is taken as of the head (`seq:` of the last event, whose `recordedAt` is
    /// the clock), not the wall clock, so that it depends on the events alone. It reads every question and
    /// subject: it runs on a thread of its own, not on the cooperative pool.
    public func digest(asOf: AsOf? = nil) async throws -> String {
        try await offPool("ledger-digest") { [self] cancellation in try digest(asOf: asOf, cancellation: cancellation) }
    }

    /// ``digest(asOf:)`` on the calling thread, for the tool and tests.
    package func digest(asOf: AsOf? = nil) throws -> String {
        try digest(asOf: asOf, cancellation: nil)
    }

    /// ``digest(asOf:)``, stopping with `CancellationError` once `cancellation` says its task was cancelled.
    func digest(asOf: AsOf?, cancellation: Cancellation?) throws -> String {
        let point = try asOf ?? .seq(head().seq)
        return try read(asOf: point, retries: Self.readRetries) { try $0.digest(cancellation: cancellation) }
    }
}
