internal import CLMDB

/// A handle for one database (key/value B-tree) of an ``Environment``.
///
/// Obtain it from ``Environment/openDatabase(_:create:)``; it stays valid for
/// the lifetime of that environment and only for that environment.
///
/// The corresponding LMDB type is `MDB_dbi`.
public struct Database: Sendable, Hashable {
    let handle: UInt32
}

/// Statistics about one database.
///
/// The corresponding LMDB type is `MDB_stat`.
public struct DatabaseStatistics: Sendable {
    /// The number of data items.
    public var entries: Int
    /// The depth (height) of the B-tree.
    public var depth: Int
    /// The number of internal (non-leaf) pages.
    public var branchPages: Int
    /// The number of leaf pages.
    public var leafPages: Int
    /// The number of overflow pages.
    public var overflowPages: Int
    /// The size of a database page in bytes.
    public var pageSize: Int

    init(_ stat: MDB_stat) {
        entries = stat.ms_entries
        depth = Int(stat.ms_depth)
        branchPages = stat.ms_branch_pages
        leafPages = stat.ms_leaf_pages
        overflowPages = stat.ms_overflow_pages
        pageSize = Int(stat.ms_psize)
    }
}

/// Options for the `put` methods of ``WriteTransaction``.
public struct PutFlags: OptionSet, Sendable {
    /// The raw LMDB flag bits.
    public let rawValue: UInt32

    /// Creates flags from raw LMDB flag bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Store the pair only if the key is not already present; otherwise throw ``LMDBError/keyExists``.
    ///
    /// The corresponding LMDB flag is `MDB_NOOVERWRITE`.
    public static let noOverwrite = PutFlags(rawValue: UInt32(MDB_NOOVERWRITE))

    /// Append the pair at the end of the database (fast bulk loading). A key that does not
    /// sort after the current last key throws ``LMDBError/keyExists``.
    ///
    /// The corresponding LMDB flag is `MDB_APPEND`.
    public static let append = PutFlags(rawValue: UInt32(MDB_APPEND))
}

/// The live state of one LMDB transaction: the `MDB_txn` pointer (nil once the
/// transaction has ended) and the cursors opened in it, which are all closed
/// right before the transaction commits or aborts.
final class TransactionState {
    private var handle: OpaquePointer?
    private var cursors: [OpaquePointer] = []
    /// Whether any operation failed with `MDB_MAP_FULL` (the transaction is then unusable).
    private(set) var hitMapFull = false

    /// The enclosing transaction's state, for a nested transaction.
    private let parent: TransactionState?

    /// Whether the transaction was begun read-only.
    let readOnly: Bool

    init(_ handle: OpaquePointer, readOnly: Bool = false, parent: TransactionState? = nil) {
        self.handle = handle
        self.readOnly = readOnly
        self.parent = parent
    }

    /// The live transaction, or ``LMDBError/badTransaction`` once it has ended.
    func transaction() throws(LMDBError) -> OpaquePointer {
        guard let handle else { throw .badTransaction }
        return handle
    }

    func check(_ code: Int32) throws(LMDBError) {
        if code == MDB_MAP_FULL { markMapFull() }
        try LMDBError.check(code)
    }

    /// A full map in a nested transaction makes the whole write retry with a larger map.
    private func markMapFull() {
        hitMapFull = true
        parent?.markMapFull()
    }

    func openCursor(_ db: Database) throws(LMDBError) -> OpaquePointer {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(try transaction(), db.handle, &cursor))
        guard let cursor else { throw .invalidArgument }
        OperationTrace.noteCursor(cursor, dbi: db.handle)
        cursors.append(cursor)
        return cursor
    }

    /// Closes `cursor` if its transaction is still live (afterwards it is already closed).
    func closeCursor(_ cursor: OpaquePointer) {
        guard handle != nil, let index = cursors.lastIndex(of: cursor) else { return }
        cursors.remove(at: index)
        mdb_cursor_close(cursor)
    }

    /// Ends the transaction: closes its cursors and forgets the handle, which the
    /// caller then passes to `mdb_txn_commit` or `mdb_txn_abort` (both free it).
    private func end() -> OpaquePointer? {
        for cursor in cursors { mdb_cursor_close(cursor) }
        cursors = []
        defer { handle = nil }
        return handle
    }

    /// Commits and returns LMDB's result code; the transaction is over either way.
    func commit() -> Int32 {
        guard let txn = end() else { return MDB_BAD_TXN }
        return mdb_txn_commit(txn)
    }

    func abort() {
        if let txn = end() { mdb_txn_abort(txn) }
    }
}

extension MDB_val {
    init(_ buffer: UnsafeRawBufferPointer) {
        self.init(mv_size: buffer.count, mv_data: UnsafeMutableRawPointer(mutating: buffer.baseAddress))
    }

    var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: mv_data, count: mv_size) }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps the typed error.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(LMDBError) -> R) throws(LMDBError) -> R {
        try withUnsafeBytes { bytes in Result { () throws(LMDBError) in try body(bytes) } }.get()
    }
}

/// A read-only view of a transaction, valid only inside the closure that received it.
///
/// Don't let it escape: once the closure returns, every operation throws
/// ``LMDBError/badTransaction``. Buffers it returns point into the memory map and are
/// valid only until the transaction ends (or, in a write transaction, until the next update).
public struct ReadTransaction {
    let state: TransactionState

    /// Returns the value stored for `key`, or `nil` if there is none.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    public func get(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        var key = MDB_val(key)
        var value = MDB_val()
        OperationTrace.note(.get(dbi: db.handle, key: Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))))
        let code = mdb_get(try state.transaction(), db.handle, &key, &value)
        if code == MDB_NOTFOUND { return nil }
        try state.check(code)
        return value.buffer
    }

    /// Returns the value stored for `key`, or `nil` if there is none.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    public func get(_ db: Database, key: [UInt8]) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try key.withBytes { bytes throws(LMDBError) in try get(db, key: bytes) }
    }

    /// Opens a cursor on `db`; it is closed when the transaction ends, if not before.
    ///
    /// The corresponding LMDB function is `mdb_cursor_open`.
    public func cursor(_ db: Database) throws(LMDBError) -> Cursor {
        Cursor(state: state, handle: try state.openCursor(db))
    }

    /// Returns statistics about `db` as seen by this transaction.
    ///
    /// The corresponding LMDB function is `mdb_stat`.
    public func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics {
        var stat = MDB_stat()
        try state.check(mdb_stat(try state.transaction(), db.handle, &stat))
        return DatabaseStatistics(stat)
    }

    /// The id of the snapshot this transaction reads: the id of the last write transaction committed
    /// before it began. Two read transactions of one environment with the same id see the same data, so
    /// what is derived from a snapshot alone can be cached under its id.
    ///
    /// The corresponding LMDB function is `mdb_txn_id`.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` for the ``WriteTransaction/reader`` of a write transaction:
    ///   its id is the write's own, which names no committed snapshot (and is used again if the write aborts).
    public func snapshotID() throws(LMDBError) -> Int {
        guard state.readOnly else { throw .invalidArgument }
        return Int(mdb_txn_id(try state.transaction()))
    }
}

extension ReadTransaction {
    /// Runs `body` in a read transaction of its own, begun and ended here, on the newest snapshot committed, while
    /// this one stays open: for a reader that finds something its snapshot names gone from a file LMDB does not
    /// keep (overwritten after a later commit), and asks that commit why.
    ///
    /// - Throws: ``LMDBError/invalidArgument`` for the ``WriteTransaction/reader`` of a write transaction, which
    ///   sees the newest snapshot already; ``LMDBError/readersFull`` when every reader slot is taken.
    public func readingNewestSnapshot<T>(_ body: (ReadTransaction) throws -> T) throws -> T {
        guard state.readOnly else { throw LMDBError.invalidArgument }
        var txn: OpaquePointer?
        // The environment allows a thread several read transactions (`MDB_NOTLS`), and this one's map lock, held
        // while it is open, keeps the map from being resized under the new one.
        try LMDBError.check(mdb_txn_begin(mdb_txn_env(try state.transaction()), nil, UInt32(MDB_RDONLY), &txn))
        guard let txn else { throw LMDBError.invalidArgument }
        let newest = TransactionState(txn, readOnly: true)
        defer { newest.abort() }
        return try body(ReadTransaction(state: newest))
    }
}

/// A read-write transaction, valid only inside the closure that received it.
///
/// Don't let it escape: once the closure returns, every operation throws
/// ``LMDBError/badTransaction``.
public struct WriteTransaction {
    let state: TransactionState

    /// The same transaction, seen through the read-only API.
    public var reader: ReadTransaction { ReadTransaction(state: state) }

    /// The id this transaction's snapshot gets if it commits: one more than the last committed write
    /// transaction's, in any process. A write that begins with the id after the one a commit got
    /// therefore follows that commit directly, with no other write in between. A nested transaction has
    /// its parent's id; an aborted write's id is used again by the next write.
    ///
    /// The corresponding LMDB function is `mdb_txn_id`.
    public func id() throws(LMDBError) -> Int {
        Int(mdb_txn_id(try state.transaction()))
    }

    /// Returns the value stored for `key`, or `nil` if there is none. The buffer is valid
    /// until the next update in this transaction or the end of the transaction.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    public func get(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try reader.get(db, key: key)
    }

    /// Returns the value stored for `key`, or `nil` if there is none. The buffer is valid
    /// until the next update in this transaction or the end of the transaction.
    ///
    /// The corresponding LMDB function is `mdb_get`.
    public func get(_ db: Database, key: [UInt8]) throws(LMDBError) -> UnsafeRawBufferPointer? {
        try reader.get(db, key: key)
    }

    /// Opens a cursor on `db`; it is closed when the transaction ends, if not before.
    ///
    /// The corresponding LMDB function is `mdb_cursor_open`.
    public func cursor(_ db: Database) throws(LMDBError) -> Cursor {
        try reader.cursor(db)
    }

    /// Returns statistics about `db`, including this transaction's changes.
    ///
    /// The corresponding LMDB function is `mdb_stat`.
    public func statistics(_ db: Database) throws(LMDBError) -> DatabaseStatistics {
        try reader.statistics(db)
    }

    /// Stores `value` under `key`, replacing any existing value unless `flags` say otherwise.
    ///
    /// The corresponding LMDB function is `mdb_put`.
    public func put(
        _ db: Database, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: PutFlags = []
    ) throws(LMDBError) {
        OperationTrace.note(.put(dbi: db.handle, key: Array(key), value: Array(value), flags: flags.rawValue))
        var key = MDB_val(key)
        var value = MDB_val(value)
        try state.check(mdb_put(try state.transaction(), db.handle, &key, &value, flags.rawValue))
    }

    /// Stores `value` under `key`, replacing any existing value unless `flags` say otherwise.
    ///
    /// The corresponding LMDB function is `mdb_put`.
    public func put(_ db: Database, key: [UInt8], value: [UInt8], flags: PutFlags = []) throws(LMDBError) {
        try key.withBytes { key throws(LMDBError) in
            try value.withBytes { value throws(LMDBError) in try put(db, key: key, value: value, flags: flags) }
        }
    }

    /// Deletes `key` and its value; returns `false` if the key was not present.
    ///
    /// The corresponding LMDB function is `mdb_del`.
    @discardableResult
    public func delete(_ db: Database, key: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        OperationTrace.note(.delete(dbi: db.handle, key: Array(key)))
        var key = MDB_val(key)
        let code = mdb_del(try state.transaction(), db.handle, &key, nil)
        if code == MDB_NOTFOUND { return false }
        try state.check(code)
        return true
    }

    /// Deletes `key` and its value; returns `false` if the key was not present.
    ///
    /// The corresponding LMDB function is `mdb_del`.
    @discardableResult
    public func delete(_ db: Database, key: [UInt8]) throws(LMDBError) -> Bool {
        try key.withBytes { key throws(LMDBError) in try delete(db, key: key) }
    }

    /// Runs `body` in a transaction nested in this one: its changes become part of this
    /// transaction when `body` returns, and are discarded, leaving this transaction as it was,
    /// when `body` throws (the error is rethrown). This transaction must not be used, nor its
    /// cursors, while `body` runs.
    ///
    /// The corresponding LMDB function is `mdb_txn_begin` with a parent transaction.
    public func nested<T>(_ body: (WriteTransaction) throws -> T) throws -> T {
        let parent = try state.transaction()
        var handle: OpaquePointer?
        try state.check(mdb_txn_begin(mdb_txn_env(parent), parent, 0, &handle))
        guard let handle else { throw LMDBError.invalidArgument }
        let child = TransactionState(handle, parent: state)
        let value: T
        do {
            value = try body(WriteTransaction(state: child))
        } catch {
            child.abort()
            throw error
        }
        try state.check(child.commit())
        return value
    }

    /// Deletes every entry of `db`, keeping the database itself.
    ///
    /// The corresponding LMDB function is `mdb_drop` (with `del` = 0).
    public func drop(_ db: Database) throws(LMDBError) {
        try state.check(mdb_drop(try state.transaction(), db.handle, 0))
    }

    /// Deletes the database named `name`, its entries and pages with it, if the environment has one: once the
    /// transaction commits, the name is gone from ``ReadTransaction/databaseNames()`` and the pages are free.
    /// The database is opened in this transaction alone, so the environment never holds a handle to it.
    ///
    /// The corresponding LMDB functions are `mdb_dbi_open` and `mdb_drop` (with `del` = 1).
    ///
    /// - Returns: whether there was such a database.
    @discardableResult
    public func deleteDatabase(named name: String) throws(LMDBError) -> Bool {
        let txn = try state.transaction()
        var dbi = MDB_dbi()
        let opened = mdb_dbi_open(txn, name, 0, &dbi)
        if opened == MDB_NOTFOUND { return false }
        try state.check(opened)
        try state.check(mdb_drop(txn, dbi, 1))
        return true
    }
}

@available(*, unavailable, message: "A transaction belongs to the thread running its closure.")
extension ReadTransaction: Sendable {}

@available(*, unavailable, message: "A transaction belongs to the thread running its closure.")
extension WriteTransaction: Sendable {}
