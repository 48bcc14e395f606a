internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// An LMDB environment: one memory-mapped data file (plus its lock file) in a
/// directory, holding any number of named databases.
///
/// An environment may be used from many threads at once. Transactions are scoped to the
/// closures of ``read(_:)`` and ``write(_:)`` and run on the calling thread; write
/// transactions are serialized. When a write does not fit, the map is doubled and the
/// write closure is run again, so the memory map grows on demand.
///
/// All calls block the calling thread (a transaction never spans an `await`). A given
/// environment directory can be open at most once per process at a time (an LMDB rule): a
/// second open throws ``LMDBError/alreadyOpen`` until the first ``Environment`` is released.
///
/// The corresponding LMDB type is `MDB_env`.
public final class Environment: @unchecked Sendable {
    /// Settings used when opening an environment.
    public struct Options: Sendable {
        /// The initial size of the memory map in bytes (grown automatically by writes).
        ///
        /// The corresponding LMDB function is `mdb_env_set_mapsize`.
        public var mapSize: Int
        /// The maximum number of named databases.
        ///
        /// The corresponding LMDB function is `mdb_env_set_maxdbs`.
        public var maxDatabases: Int
        /// The maximum number of simultaneous read transactions (across all processes).
        ///
        /// The corresponding LMDB function is `mdb_env_set_maxreaders`.
        public var maxReaders: Int
        /// The permissions of the files LMDB creates (`data.mdb`, `lock.mdb`).
        public var fileMode: UInt32
        /// Opens the environment read-only; writes then throw ``LMDBError/accessDenied``.
        ///
        /// The corresponding LMDB flag is `MDB_RDONLY`.
        public var readOnly: Bool
        /// Flushes to disk on every commit. `false` sets `MDB_NOSYNC`: a system crash may
        /// then lose recent commits. Meant for tests and benchmarks only.
        public var durable: Bool
        /// With `durable`, flushes only the data pages at commit and leaves the flush of the meta page
        /// (which makes the commit durable) to the next commit or to ``Environment/sync(force:)``.
        /// Integrity is kept; a commit is durable once `sync` returns. Lets a caller flush on another
        /// thread while the next write transaction runs.
        ///
        /// The corresponding LMDB flag is `MDB_NOMETASYNC`.
        public var deferMetaSync: Bool
        /// Writes pages straight into a writable memory map instead of copying them into buffers of their own
        /// and writing those to the file at commit. A transaction that writes many pages (a rebuild of large
        /// tables) runs faster: no page is copied, and no list of dirty pages is searched at every page read.
        ///
        /// LMDB sizes the data file to the whole map, so that every page of the map is in the file. The
        /// environment reserves the file's blocks on disk (`posix_fallocate`) whenever the map is sized, so
        /// that a full disk fails there, with ``LMDBError/noSpace``, and never as a fault (`SIGBUS`) on a
        /// write into the map. The reserved room stays in the file, for the writes that follow.
        ///
        /// Meant for a process that writes alone for a while (a rebuild). Other processes, with or without
        /// a writable map, may use the environment at the same time on Linux and Apple's systems, whose file
        /// caches are unified; LMDB warns against mixing the two on systems whose caches are not. A bug that
        /// writes through a stray pointer could damage the map; a read-only map would fault instead.
        /// Ignored with `readOnly`.
        ///
        /// The corresponding LMDB flag is `MDB_WRITEMAP`.
        public var writableMap: Bool

        /// Creates options; the defaults suit a small, durable, writable environment.
        public init(
            mapSize: Int = 64 << 20, maxDatabases: Int = 16, maxReaders: Int = 126,
            fileMode: UInt32 = 0o600, readOnly: Bool = false, durable: Bool = true, deferMetaSync: Bool = false,
            writableMap: Bool = false
        ) {
            self.mapSize = mapSize
            self.maxDatabases = maxDatabases
            self.maxReaders = maxReaders
            self.fileMode = fileMode
            self.readOnly = readOnly
            self.durable = durable
            self.deferMetaSync = deferMetaSync
            self.writableMap = writableMap
        }

        /// Whether the map is opened writable: `writableMap`, unless `readOnly`.
        var mapsWritable: Bool { writableMap && !readOnly }
    }

    /// The largest map size automatic growth will reach (1 TiB).
    static let maximumMapSize = 1 << 40

    private let handle: OpaquePointer
    /// Whether ``close()`` closed LMDB's environment; read and set holding the map lock.
    private var closed = false
    /// The directory's identity in the registry of environments open in this process.
    private let identity: OpenEnvironments.Identity?
    private let readOnly: Bool
    /// Whether the map is writable (`MDB_WRITEMAP`): then every sizing of the map reserves the file's blocks.
    private let writableMap: Bool
    /// Held shared by every transaction of this process, exclusively to resize the map.
    private let mapLock: UnsafeMutablePointer<pthread_rwlock_t>
    /// Held for a whole `write` call (and `openDatabase`).
    private let writerLock: UnsafeMutablePointer<pthread_mutex_t>
    /// What ``openDatabase(_:create:)`` opened, by name, guarded by `databasesLock` (not the writer's lock, so
    /// that ``databases`` may be read inside a write).
    private var openedDatabases: [String: Database] = [:]
    private let databasesLock: UnsafeMutablePointer<pthread_mutex_t>
    /// Per-thread count of map lock holds, to allow nested reads and detect forbidden nesting.
    private let depthKey: pthread_key_t

    /// The directory the environment was opened in.
    public let path: String
    /// The directory LMDB opened: `path` with its symbolic links resolved when it was checked.
    let directory: String

    /// Runs `body` while no environment is being opened in this process, and none can be: what a caller
    /// that looks at a directory before it opens an environment there holds across both, so that two opens
    /// of one new directory at once see it one after the other, not each half made by the other.
    public static func whileOpening<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try OpenEnvironments.opening(body)
    }

    /// Opens the environment in the existing directory `path`, creating its files if needed.
    ///
    /// The directory itself is not created: a missing directory throws ``LMDBError/noSuchFile``,
    /// a file that is not an LMDB environment ``LMDBError/invalid``, missing permissions
    /// ``LMDBError/accessDenied``, a directory already open in this process
    /// ``LMDBError/alreadyOpen``, one on a network or pseudo file system
    /// ``LMDBError/unsupportedFileSystem``, and a directory or file that fails the checks made before LMDB opens
    /// anything (a symbolic link, a hard link, a special file, another user's, a directory others can write to:
    /// see ``FileProblem``, which ``fileProblem(inDirectory:readOnly:)`` returns) ``LMDBError/untrustedFile``.
    /// The environment always uses `MDB_NOTLS`.
    ///
    /// The corresponding LMDB functions are `mdb_env_create` and `mdb_env_open`.
    public init(path: String, options: Options = Options()) throws(LMDBError) {
        var key = pthread_key_t()
        let keyStatus = pthread_key_create(&key, nil)
        guard keyStatus == 0 else { throw LMDBError(rawValue: keyStatus) }
        if FileSystemCheck.problem(at: path) != nil {
            posix(pthread_key_delete(key))
            throw .unsupportedFileSystem
        }
        let checked: DirectoryCheck.Checked?
        do {
            checked = try DirectoryCheck.check(path, readOnly: options.readOnly)
        } catch {
            posix(pthread_key_delete(key))
            if case .accessDenied = error.reason { throw .accessDenied }
            throw .untrustedFile
        }
        let opened: (handle: OpaquePointer, identity: OpenEnvironments.Identity?)
        do throws(LMDBError) {
            opened = try OpenEnvironments.opening { () throws(LMDBError) in
                var identity = OpenEnvironments.identity(of: checked?.directory ?? path)
                if let identity { try OpenEnvironments.claim(identity) }
                let handle: OpaquePointer
                do throws(LMDBError) {
                    handle = try Self.open(path: path, checked: checked, options: options)
                } catch {
                    if let identity { OpenEnvironments.release(identity) }
                    throw error
                }
                if identity == nil, let created = OpenEnvironments.identity(ofOpen: handle) {
                    // A new environment: its data file exists only now.
                    OpenEnvironments.register(created)
                    identity = created
                }
                return (handle, identity)
            }
        } catch {
            posix(pthread_key_delete(key))
            throw error
        }
        handle = opened.handle
        self.identity = opened.identity
        maxKeySize = Int(mdb_env_get_maxkeysize(handle))
        depthKey = key
        self.path = path
        directory = checked?.directory ?? path
        readOnly = options.readOnly
        writableMap = options.mapsWritable

        mapLock = .allocate(capacity: 1)
        var attributes = pthread_rwlockattr_t()
        posix(pthread_rwlockattr_init(&attributes))
        #if os(Linux)
        // Growth must not starve behind a steady stream of overlapping readers.
        posix(pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)))
        #endif
        posix(pthread_rwlock_init(mapLock, &attributes))
        posix(pthread_rwlockattr_destroy(&attributes))
        writerLock = .allocate(capacity: 1)
        posix(pthread_mutex_init(writerLock, nil))
        databasesLock = .allocate(capacity: 1)
        posix(pthread_mutex_init(databasesLock, nil))
        recordMap()
    }

    /// Records where the data file is mapped now, for a fault handler (see ``MappedDataFiles``).
    private func recordMap() {
        var descriptor: Int32 = -1
        // LMDB does not tell where it mapped the file (`me_mapaddr` is the address a meta page asks for).
        guard mdb_env_get_fd(handle, &descriptor) == MDB_SUCCESS, let map = MappedDataFiles.mapping(of: descriptor) else {
            return MappedDataFiles.forget(owner: self)
        }
        MappedDataFiles.record(owner: self, dataFile: path + "/data.mdb", start: map.start, size: map.size)
    }

    /// Opens LMDB's environment in the directory `checked` names (`path`, when it does not exist), and confirms that
    /// LMDB opened the data file that was checked.
    private static func open(path: String, checked: DirectoryCheck.Checked?, options: Options) throws(LMDBError) -> OpaquePointer {
        let directory = checked?.directory ?? path
        guard options.mapSize >= 0, let maxDatabases = UInt32(exactly: options.maxDatabases),
            let maxReaders = UInt32(exactly: options.maxReaders), let mode = mode_t(exactly: options.fileMode)
        else { throw .invalidArgument }
        var env: OpaquePointer?
        try LMDBError.check(mdb_env_create(&env))
        guard let env else { throw .outOfMemory }
        do throws(LMDBError) {
            var mapSize = options.mapSize
            if options.mapsWritable {
                // LMDB sizes the file to the map, shrinking it when the map is smaller; see `resizeMap(to:)`.
                if let meta = try? MetaPages(dataFile: directory + "/data.mdb"), let newest = meta.newest {
                    let pages = Int(exactly: newest.lastPage).map { $0 &+ 1 } ?? Self.maximumMapSize
                    let (used, overflow) = pages.multipliedReportingOverflow(by: Int(newest.pageSize))
                    let usedSize = overflow || used < 0 ? Self.maximumMapSize : used
                    mapSize = max(mapSize, Self.writableMapFloor(fileSize: meta.fileSize, usedSize: usedSize))
                }
            }
            try LMDBError.check(mdb_env_set_mapsize(env, mapSize))
            try LMDBError.check(mdb_env_set_maxdbs(env, maxDatabases))
            try LMDBError.check(mdb_env_set_maxreaders(env, maxReaders))
            try LMDBError.check(mdb_env_set_assert(env, AssertionFailures.callback))
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            if !options.durable { flags |= UInt32(MDB_NOSYNC) }
            if options.deferMetaSync { flags |= UInt32(MDB_NOMETASYNC) }
            if options.mapsWritable { flags |= UInt32(MDB_WRITEMAP) }
            try LMDBError.check(mdb_env_open(env, directory, flags, mode))
            if let checked {
                do {
                    try DirectoryCheck.confirm(checked, opened: env, shownAs: path)
                } catch {
                    throw .untrustedFile
                }
            }
            if options.mapsWritable { try reserveFileBlocks(env) }
        } catch {
            mdb_env_close(env)
            throw error
        }
        return env
    }

    /// Closes the environment now, rather than when the last reference to it goes: waits until no transaction
    /// of this process is alive, closes LMDB's environment (its files and map) and frees its directory for
    /// another open in this process. Every later operation throws ``LMDBError/closed``. Closing a closed
    /// environment does nothing; closing one inside a transaction of this thread throws
    /// ``LMDBError/badTransaction``.
    ///
    /// The corresponding LMDB function is `mdb_env_close`.
    public func close() throws(LMDBError) {
        guard lockDepth == 0 else { throw .badTransaction }
        withMapLock(exclusive: true) { closeHoldingMapLock() }
    }

    private func closeHoldingMapLock() {
        guard !closed else { return }
        closed = true
        MappedDataFiles.forget(owner: self)
        mdb_env_close(handle)
        if let identity { OpenEnvironments.release(identity) }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { withMapLock { closed } }

    /// LMDB's handle, or ``LMDBError/closed``; called holding the map lock.
    private func liveHandle() throws(LMDBError) -> OpaquePointer {
        guard !closed else { throw .closed }
        return handle
    }

    /// Closes the environment if ``close()`` did not. No transaction can be alive at this point.
    ///
    /// The corresponding LMDB function is `mdb_env_close`.
    deinit {
        closeHoldingMapLock()
        posix(pthread_rwlock_destroy(mapLock))
        mapLock.deallocate()
        posix(pthread_mutex_destroy(writerLock))
        writerLock.deallocate()
        posix(pthread_mutex_destroy(databasesLock))
        databasesLock.deallocate()
        posix(pthread_key_delete(depthKey))
    }

    // MARK: Locking

    private var lockDepth: Int {
        get { Int(bitPattern: pthread_getspecific(depthKey)) }
        set { posix(pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: newValue))) }
    }

    /// Runs `body` holding the map lock: shared (re-entrant on this thread) or exclusive
    /// (only when this thread holds nothing yet).
    private func withMapLock<T, E: Error>(exclusive: Bool = false, _ body: () throws(E) -> T) throws(E) -> T {
        let depth = lockDepth
        precondition(!exclusive || depth == 0, "LMDB: map resize attempted inside a transaction")
        if depth == 0 { posix(exclusive ? pthread_rwlock_wrlock(mapLock) : pthread_rwlock_rdlock(mapLock)) }
        lockDepth = depth + 1
        defer {
            lockDepth = depth
            if depth == 0 { posix(pthread_rwlock_unlock(mapLock)) }
        }
        return try body()
    }

    /// Runs `body` as the only writer of this process. Throws ``LMDBError/badTransaction``
    /// if this thread is already inside a transaction (which would deadlock).
    private func serializedWrite<T>(_ body: () throws -> T) throws -> T {
        guard lockDepth == 0 else { throw LMDBError.badTransaction }
        posix(pthread_mutex_lock(writerLock))
        defer { posix(pthread_mutex_unlock(writerLock)) }
        return try body()
    }

    // MARK: Transactions

    private enum Attempt<T> { case done(T), mapFull, mapResized }

    /// Runs `body` in a transaction, adopting a map grown by another process
    /// (`MDB_MAP_RESIZED`) and growing the map when a write does not fit (`MDB_MAP_FULL`).
    private func transact<T>(readOnly: Bool, commit: Bool, _ body: (TransactionState) throws -> T) throws -> T {
        let outermost = lockDepth == 0
        while true {
            switch try withMapLock({ try attempt(readOnly: readOnly, commit: commit, body) }) {
            case .done(let value):
                return value
            case .mapResized:
                guard outermost else { throw LMDBError.mapResized }
                try withMapLock(exclusive: true) { () throws(LMDBError) in
                    try resizeMap(to: 0)
                }
            case .mapFull:
                try grow()
            }
        }
    }

    private func attempt<T>(
        readOnly: Bool, commit: Bool, _ body: (TransactionState) throws -> T
    ) throws -> Attempt<T> {
        var txn: OpaquePointer?
        let code = mdb_txn_begin(try liveHandle(), nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
        if code == MDB_MAP_RESIZED { return .mapResized }
        try LMDBError.check(code)
        guard let txn else { throw LMDBError.invalidArgument }
        let state = TransactionState(txn, readOnly: readOnly)
        let value: T
        do {
            value = try body(state)
        } catch {
            state.abort()
            if !readOnly && (state.hitMapFull || error as? LMDBError == .mapFull) { return .mapFull }
            throw error
        }
        guard commit else {
            state.abort()
            return .done(value)
        }
        // After mdb_txn_commit the transaction is gone, whatever the result.
        let result = state.commit()
        if !readOnly && (result == MDB_MAP_FULL || (result != MDB_SUCCESS && state.hitMapFull)) { return .mapFull }
        try LMDBError.check(result)
        return .done(value)
    }

    /// Runs `body` in a transaction of LMDB's alone, with none of ``read(_:)``'s or ``write(_:)``'s handling
    /// around it: aborted when `readOnly`, committed otherwise (a write holds the writer's lock).
    func transactRaw<T>(readOnly: Bool, _ body: (OpaquePointer) throws(LMDBError) -> T) throws -> T {
        func run() throws(LMDBError) -> T {
            try withMapLock { () throws(LMDBError) -> T in
                var txn: OpaquePointer?
                try LMDBError.check(mdb_txn_begin(try liveHandle(), nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn))
                guard let txn else { throw .invalidArgument }
                let value: T
                do throws(LMDBError) {
                    value = try body(txn)
                } catch {
                    mdb_txn_abort(txn)
                    throw error
                }
                if readOnly { mdb_txn_abort(txn) } else { try LMDBError.check(mdb_txn_commit(txn)) }
                return value
            }
        }
        return readOnly ? try run() : try serializedWrite { try run() }
    }

    /// Doubles the map size, with no transaction of this process alive.
    private func grow() throws(LMDBError) {
        try withMapLock(exclusive: true) { () throws(LMDBError) in
            let current = try info().me_mapsize
            let next = min(min(current, Self.maximumMapSize) * 2, Self.maximumMapSize)
            guard next > current else { throw .mapFull }
            try resizeMap(to: next)
        }
    }

    /// Sets the map's size (`0`: adopts the size another process set), holding the map lock exclusively.
    ///
    /// With a writable map LMDB sets the data file's size to the map's, and would cut off pages that a
    /// writer in another process has written past the end of a smaller map but not yet committed. The map
    /// is therefore never made smaller than the file, nor than twice the pages in use (`writableMapFloor`):
    /// only a commit of another process that writes more than the ledger's whole size again, past the end
    /// of the file, in the instant between the two, could still lose pages. A rebuild, the writable map's
    /// use, sizes its map when it opens and then only when it fills.
    private func resizeMap(to bytes: Int) throws(LMDBError) {
        // LMDB maps the file anew, perhaps elsewhere.
        defer { recordMap() }
        guard writableMap else {
            // LMDB unmaps the old map before it maps the new one, and is left with no map at all when that
            // fails: make sure first that the address space is there.
            if bytes > 0 { try Self.checkAddressSpace(bytes) }
            return try LMDBError.check(mdb_env_set_mapsize(try liveHandle(), bytes))
        }
        var descriptor: Int32 = -1
        var file = stat()
        try LMDBError.check(mdb_env_get_fd(try liveHandle(), &descriptor))
        guard fstat(descriptor, &file) == 0 else { throw LMDBError(rawValue: errno) }
        // `0` would take the size in the meta page, which can be smaller than the file.
        let wanted = bytes == 0 ? try info().me_mapsize : bytes
        let floor = Self.writableMapFloor(fileSize: Int(file.st_size), usedSize: try usedSizeHoldingMapLock())
        try LMDBError.check(mdb_env_set_mapsize(handle, max(wanted, floor)))
        try Self.reserveFileBlocks(handle)
    }

    /// Throws ``LMDBError/outOfMemory`` when this process cannot map `bytes` of address space (a limit set
    /// with `ulimit -v`, say), by mapping that much with no access and no memory behind it, then unmapping it.
    private static func checkAddressSpace(_ bytes: Int) throws(LMDBError) {
        let probe = mmap(nil, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let probe, probe != MAP_FAILED else { throw .outOfMemory }
        munmap(probe, bytes)
    }

    /// The smallest writable map for a data file of `fileSize` bytes with `usedSize` of them in use: the
    /// larger of the file and twice the pages in use, in whole mebibytes, up to the largest map.
    private static func writableMapFloor(fileSize: Int, usedSize: Int) -> Int {
        let (doubled, overflow) = usedSize.multipliedReportingOverflow(by: 2)
        return mapSize(roundingUp: overflow ? maximumMapSize : max(fileSize, doubled))
    }

    /// `bytes` up to the largest map, rounded up to whole mebibytes (as is the largest map), so that the map
    /// stays a multiple of any page size.
    private static func mapSize(roundingUp bytes: Int) -> Int {
        (min(bytes, maximumMapSize) + (1 << 20) - 1) & ~((1 << 20) - 1)
    }

    /// Allocates the data file's blocks up to the map's size, which LMDB has sized the file to with
    /// `MDB_WRITEMAP`: the file is sparse until then, and a write into a hole of the map on a full disk would
    /// fault (`SIGBUS`) instead of failing. Blocks already allocated stay as they are.
    private static func reserveFileBlocks(_ env: OpaquePointer) throws(LMDBError) {
        var info = MDB_envinfo()
        var descriptor: Int32 = -1
        try LMDBError.check(mdb_env_info(env, &info))
        try LMDBError.check(mdb_env_get_fd(env, &descriptor))
        var status: Int32
        repeat { status = posix_fallocate(descriptor, 0, off_t(info.me_mapsize)) } while status == EINTR
        guard status == 0 else { throw LMDBError(rawValue: status) }
    }

    private func info() throws(LMDBError) -> MDB_envinfo {
        var info = MDB_envinfo()
        try LMDBError.check(mdb_env_info(try liveHandle(), &info))
        return info
    }

    /// Runs `body` in a read-only transaction on the calling thread and returns its result.
    ///
    /// The transaction sees a consistent snapshot of the last commit before it began and ends
    /// when `body` returns. Reads may nest (also inside ``write(_:)``); an outermost read adopts a
    /// map grown by another process (`MDB_MAP_RESIZED`) and retries.
    ///
    /// The corresponding LMDB functions are `mdb_txn_begin` (with `MDB_RDONLY`) and `mdb_txn_abort`.
    public func read<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        try transact(readOnly: true, commit: false) { try body(ReadTransaction(state: $0)) }
    }

    /// Runs `body` in a write transaction: commits when `body` returns and aborts when it throws
    /// (rethrowing its error).
    ///
    /// Writes are serialized. If `body` or the commit fails with ``LMDBError/mapFull`` (also when
    /// `body` caught or wrapped that error), the transaction is aborted, the map size doubled and
    /// `body` run again from scratch, so `body` must be safe to re-run. Growth stops at 1 TiB
    /// (then ``LMDBError/mapFull`` is thrown).
    /// Calling `write` inside another transaction on the same thread throws
    /// ``LMDBError/badTransaction``.
    ///
    /// The corresponding LMDB functions are `mdb_txn_begin`, `mdb_txn_commit` and `mdb_txn_abort`.
    public func write<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        try serializedWrite {
            try transact(readOnly: false, commit: true) { try body(WriteTransaction(state: $0)) }
        }
    }

    /// Opens the database named `name`, creating it if `create` is `true` (otherwise a missing
    /// database throws ``LMDBError/notFound``).
    ///
    /// Runs in its own write transaction (a read transaction for a read-only environment when
    /// `create` is `false`); must not be called inside a transaction.
    ///
    /// The corresponding LMDB function is `mdb_dbi_open`.
    public func openDatabase(_ name: String, create: Bool) throws -> Database {
        let open = { (state: TransactionState) throws(LMDBError) -> Database in
            var dbi = MDB_dbi()
            try state.check(mdb_dbi_open(try state.transaction(), name, create ? UInt32(MDB_CREATE) : 0, &dbi))
            return Database(handle: dbi)
        }
        // Committing (even a read transaction) keeps the handle open for the environment.
        return try serializedWrite {
            let database = try transact(readOnly: readOnly && !create, commit: true, open)
            posix(pthread_mutex_lock(databasesLock))
            openedDatabases[name] = database
            posix(pthread_mutex_unlock(databasesLock))
            return database
        }
    }

    /// The databases opened so far, by name (the unnamed one is `""`).
    public var databases: [String: Database] {
        posix(pthread_mutex_lock(databasesLock))
        defer { posix(pthread_mutex_unlock(databasesLock)) }
        return openedDatabases
    }

    /// Returns statistics about `db`, as of the last commit.
    ///
    /// The corresponding LMDB function is `mdb_stat`.
    public func statistics(_ db: Database) throws -> DatabaseStatistics {
        try read { try $0.statistics(db) }
    }

    // MARK: Environment

    /// The current size of the memory map in bytes.
    ///
    /// The corresponding LMDB function is `mdb_env_info`.
    public var mapSize: Int {
        withMapLock {
            var info = MDB_envinfo()
            guard !closed else { return 0 }
            let code = mdb_env_info(handle, &info)
            precondition(code == MDB_SUCCESS, "mdb_env_info failed: \(LMDBError(rawValue: code))")
            return info.me_mapsize
        }
    }

    /// Sets the size of the memory map, waiting until no transaction of this process is alive.
    /// A size below the space in use is raised to it (with ``Options/writableMap``, to the larger of the
    /// data file and twice the space in use). Throws ``LMDBError/badTransaction`` when
    /// called inside a transaction.
    ///
    /// The corresponding LMDB function is `mdb_env_set_mapsize`.
    public func setMapSize(_ bytes: Int) throws(LMDBError) {
        guard lockDepth == 0 else { throw .badTransaction }
        guard bytes >= 0 else { throw .invalidArgument }
        try withMapLock(exclusive: true) { () throws(LMDBError) in try resizeMap(to: bytes) }
    }

    /// The bytes of the data file in use as of the last commit (of any process): the pages up to
    /// the last one used, free pages among them included.
    ///
    /// The corresponding LMDB functions are `mdb_env_info` (`me_last_pgno`) and `mdb_env_stat` (`ms_psize`).
    public var usedSize: Int {
        get throws(LMDBError) {
            try withMapLock { () throws(LMDBError) in try usedSizeHoldingMapLock() }
        }
    }

    private func usedSizeHoldingMapLock() throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try LMDBError.check(mdb_env_stat(try liveHandle(), &stat))
        return (try info().me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// Grows the memory map, when needed, so that at least `bytes` more than ``usedSize`` fit in it
    /// (up to 1 TiB), and returns the map size. Never shrinks the map.
    ///
    /// ``write(_:)`` grows the map by running its body again; a write whose body cannot be run again
    /// (one that consumes a stream, say) reserves the room it needs here first. The map is address
    /// space, not memory or disk: the data file grows only as pages are written.
    ///
    /// Waits until no transaction of this process is alive; throws ``LMDBError/badTransaction`` when
    /// called inside a transaction.
    ///
    /// The corresponding LMDB function is `mdb_env_set_mapsize`.
    @discardableResult
    public func reserve(freeBytes bytes: Int) throws(LMDBError) -> Int {
        guard lockDepth == 0 else { throw .badTransaction }
        guard bytes >= 0 else { throw .invalidArgument }
        return try withMapLock(exclusive: true) { () throws(LMDBError) -> Int in
            let current = try info().me_mapsize
            let (wanted, overflow) = try usedSizeHoldingMapLock().addingReportingOverflow(bytes)
            let target = Self.mapSize(roundingUp: overflow ? Self.maximumMapSize : wanted)
            guard target > current else { return current }
            try resizeMap(to: target)
            return target
        }
    }

    /// The bytes the file system holding the environment can still give this process (`statvfs`'s blocks
    /// available to unprivileged users), or `nil` when the file system does not say. The data file can never
    /// grow by more than this: a write that must not run out of map (a streamed append) reserves this much.
    ///
    /// The corresponding system call is `statvfs`.
    public var fileSystemAvailableBytes: Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int(clamping: info.f_bavail).multipliedReportingOverflow(by: Int(clamping: info.f_frsize))
        return overflow ? Int.max : bytes
    }

    /// Lets the pages of the memory map that this process has read leave its resident memory: they stay
    /// in the file system's cache and are mapped again, without I/O, when next read.
    ///
    /// The map's pages are the file system's cache (a writable map's written pages among them, which the
    /// kernel keeps, dirty, until they are flushed), so nothing is lost and every pointer into it stays
    /// valid: it may be called at any time, inside a transaction too. A long write transaction that reads a
    /// large database calls it now and then, so that the pages it read do not add up in its resident memory.
    ///
    /// Does nothing but on Linux, where LMDB's map is found in `/proc/self/maps` (LMDB does not tell
    /// where it mapped the data file).
    ///
    /// The corresponding system call is `madvise` with `MADV_DONTNEED`.
    public func releaseMappedPages() {
        #if os(Linux)
        withMapLock {
            var descriptor: Int32 = -1
            guard !closed, mdb_env_get_fd(handle, &descriptor) == MDB_SUCCESS else { return }
            for region in FileMappings.regions(of: descriptor) where !region.writable {
                _ = madvise(region.start, region.size, Int32(MADV_DONTNEED))
            }
        }
        #endif
    }

    /// The bytes of this process's resident memory that map files (the mapped pages of every environment and of
    /// the program and its libraries), or `nil` where it is not known (anywhere but Linux).
    ///
    /// Pages of a memory map count as resident from the first read until they are released
    /// (``releaseMappedPages()``) or the kernel reclaims them, although they are the file system's cache and not
    /// memory of the process's own. Read from the `shared` field of `/proc/self/statm`.
    public static var residentFileBackedBytes: Int? {
        #if os(Linux)
        let descriptor = Glibc.open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { Glibc.close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        // size resident shared text lib data dt, in pages
        let fields = buffer[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 3, let pages = Int(String(decoding: fields[2], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }

    /// The largest key size, in bytes, that can be written.
    ///
    /// The corresponding LMDB function is `mdb_env_get_maxkeysize`.
    public let maxKeySize: Int

    /// Flushes the data buffers to disk; with `force` also when the environment is not durable.
    ///
    /// The corresponding LMDB function is `mdb_env_sync`.
    public func sync(force: Bool = true) throws(LMDBError) {
        try withMapLock { () throws(LMDBError) in try LMDBError.check(mdb_env_sync(try liveHandle(), force ? 1 : 0)) }
    }

    /// Clears reader slots left behind by dead processes and returns how many were cleared.
    ///
    /// The corresponding LMDB function is `mdb_reader_check`.
    @discardableResult
    public func clearStaleReaders() throws(LMDBError) -> Int {
        var dead: Int32 = 0
        try withMapLock { () throws(LMDBError) in try LMDBError.check(mdb_reader_check(try liveHandle(), &dead)) }
        return Int(dead)
    }

    /// Runs `body` with LMDB's handle of the environment, outside any transaction of this thread (else throws
    /// ``LMDBError/badTransaction``), holding the map lock shared. When `body` throws ``LMDBError/mapResized``
    /// (a transaction LMDB began found the map grown by another process), adopts the new size and runs `body`
    /// again: for the calls of ``copy(to:compacting:fileMode:)``, which begin a transaction of their own.
    func withHandleOutsideTransactions<T>(_ body: (OpaquePointer) throws(LMDBError) -> T) throws(LMDBError) -> T {
        // A plain copy takes LMDB's writer mutex, which a transaction of this thread may hold.
        guard lockDepth == 0 else { throw .badTransaction }
        while true {
            do {
                return try withMapLock { () throws(LMDBError) -> T in try body(try liveHandle()) }
            } catch where error == .mapResized {
                try withMapLock(exclusive: true) { () throws(LMDBError) in try resizeMap(to: 0) }
            }
        }
    }
}

extension Environment {
    /// Keeps what a long run of reads through the memory map (a write transaction over millions of events, say)
    /// holds resident in this process near a budget, however large the environment.
    ///
    /// Each call to ``releaseIfOverBudget()`` costs one read of a small file in `/proc`; call it every few hundred
    /// reads. It releases the map's pages (``Environment/releaseMappedPages()``) once the process's file-backed
    /// resident memory (``Environment/residentFileBackedBytes``) has grown by more than the budget since the last
    /// release. Releasing every so many reads instead cannot bound it: on a first read of a page the kernel may
    /// map a whole folio of the file's cache (up to hundreds of KiB, as large as the writes that made it), so how
    /// much one read brings in depends on how the file was written.
    ///
    /// Growth is measured for the whole process, so pages that other mappings bring in count too: they can make
    /// the releases more frequent, never less.
    public struct ResidencyBudget {
        /// The environment whose map is released.
        public let environment: Environment
        /// How many bytes of file-backed memory may become resident between releases.
        public let bytes: Int
        /// The process's file-backed resident bytes right after the last release; `nil` where not known.
        private var baseline: Int?

        /// Releases the map's pages now, and measures from there.
        public init(_ environment: Environment, bytes: Int) {
            self.environment = environment
            self.bytes = bytes
            environment.releaseMappedPages()
            baseline = Environment.residentFileBackedBytes
        }

        /// Releases the map's pages when the process's file-backed resident memory has grown by more than
        /// ``bytes`` since the last release; returns whether it released them. Does nothing, and returns
        /// `false`, where the resident size is not known (anywhere but Linux).
        @discardableResult
        public mutating func releaseIfOverBudget() -> Bool {
            guard let baseline, let resident = Environment.residentFileBackedBytes, resident - baseline > bytes else { return false }
            environment.releaseMappedPages()
            self.baseline = Environment.residentFileBackedBytes ?? baseline
            return true
        }
    }
}

/// Traps on a failed pthread call: these fail only on programming errors.
private func posix(_ code: Int32, file: StaticString = #file, line: UInt = #line) {
    precondition(code == 0, "pthread call failed with \(code)", file: file, line: line)
}
