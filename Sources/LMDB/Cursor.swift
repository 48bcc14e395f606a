internal import CLMDB

/// A position in a database, for ordered traversal and range lookups.
///
/// Keys are ordered bytewise (shorter keys first when one is a prefix of the other).
/// A cursor is valid only within the transaction that opened it: it is closed when that
/// transaction ends (or earlier, when the cursor is deinitialized), after which every
/// operation throws ``LMDBError/badTransaction``. Every operation returns `nil` when
/// there is no such entry (`MDB_NOTFOUND`). The returned buffers point into the memory
/// map and are valid only until the transaction ends (or the next update in it).
///
/// The corresponding LMDB type is `MDB_cursor`.
public final class Cursor {
    /// A key/value pair, pointing into the memory map.
    public typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

    private let state: TransactionState
    private let handle: OpaquePointer

    init(state: TransactionState, handle: OpaquePointer) {
        self.state = state
        self.handle = handle
    }

    deinit { state.closeCursor(handle) }

    private func get(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil) throws(LMDBError) -> Entry? {
        _ = try state.transaction()
        if let index = OperationTrace.cursorIndex(handle) {
            OperationTrace.note(.cursorGet(cursor: index, op: op, key: key.map { Array($0) }))
        }
        var key = key.map(MDB_val.init) ?? MDB_val()
        var value = MDB_val()
        let code = mdb_cursor_get(handle, &key, &value, op)
        if code == MDB_NOTFOUND { return nil }
        try state.check(code)
        return (key.buffer, value.buffer)
    }

    /// Moves to the first entry.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_FIRST`.
    public func first() throws(LMDBError) -> Entry? { try get(MDB_FIRST) }

    /// Moves to the last entry.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_LAST`.
    public func last() throws(LMDBError) -> Entry? { try get(MDB_LAST) }

    /// Moves to the next entry (the first one if the cursor is not positioned yet).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_NEXT`.
    public func next() throws(LMDBError) -> Entry? { try get(MDB_NEXT) }

    /// Moves to the previous entry (the last one if the cursor is not positioned yet).
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_PREV`.
    public func previous() throws(LMDBError) -> Entry? { try get(MDB_PREV) }

    /// Returns the entry at the current position.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_GET_CURRENT`.
    public func current() throws(LMDBError) -> Entry? { try get(MDB_GET_CURRENT) }

    /// Moves to the entry whose key is exactly `key`.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_KEY`.
    public func seek(_ key: [UInt8]) throws(LMDBError) -> Entry? {
        try key.withBytes { key throws(LMDBError) in try get(MDB_SET_KEY, key: key) }
    }

    /// Moves to the first entry whose key is greater than or equal to `key`.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_RANGE`.
    public func seek(atOrAfter key: [UInt8]) throws(LMDBError) -> Entry? {
        try key.withBytes { key throws(LMDBError) in try seek(atOrAfter: key) }
    }

    /// Moves to the first entry whose key is greater than or equal to `key`.
    ///
    /// The corresponding LMDB function is `mdb_cursor_get` with `MDB_SET_RANGE`.
    public func seek(atOrAfter key: UnsafeRawBufferPointer) throws(LMDBError) -> Entry? {
        try get(MDB_SET_RANGE, key: key)
    }

    /// Stores `value` under `key` and moves the cursor to it, as a ``WriteTransaction``'s `put` does; only in
    /// a cursor of a write transaction.
    ///
    /// With ``PutFlags/append``, a cursor that is still at the end of its database after the previous append
    /// finds the place without searching the tree again: the fast way to write keys in ascending order.
    ///
    /// The corresponding LMDB function is `mdb_cursor_put`.
    public func put(key: [UInt8], value: [UInt8], flags: PutFlags = []) throws(LMDBError) {
        _ = try state.transaction()
        try key.withBytes { key throws(LMDBError) in
            try value.withBytes { value throws(LMDBError) in
                if let index = OperationTrace.cursorIndex(handle) {
                    OperationTrace.note(.cursorPut(cursor: index, key: Array(key), value: Array(value), flags: flags.rawValue))
                }
                var key = MDB_val(key)
                var value = MDB_val(value)
                try state.check(mdb_cursor_put(handle, &key, &value, flags.rawValue))
            }
        }
    }
}

@available(*, unavailable, message: "A cursor belongs to the thread running its transaction's closure.")
extension Cursor: Sendable {}
