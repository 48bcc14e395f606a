internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The LMDB operations one thread performs while it records, kept so that they can be performed again with
/// nothing around them: what a benchmark times as a workload's floor, the same keys and values through LMDB's
/// C API, with no decoding, no rules and no Swift in between (``Environment/perform(_:asWrite:databases:)``).
///
/// Recorded: `mdb_get`, `mdb_put`, `mdb_del`, `mdb_cursor_open`, `mdb_cursor_get` and `mdb_cursor_put`, in the
/// order they ran, with copies of their keys and of the values written. While nothing records, each operation
/// pays one load and one comparison for it.
public final class OperationTrace: @unchecked Sendable {
    enum Operation {
        case get(dbi: MDB_dbi, key: [UInt8])
        case openCursor(dbi: MDB_dbi)
        case cursorGet(cursor: Int, op: MDB_cursor_op, key: [UInt8]?)
        case cursorPut(cursor: Int, key: [UInt8], value: [UInt8], flags: UInt32)
        case put(dbi: MDB_dbi, key: [UInt8], value: [UInt8], flags: UInt32)
        case delete(dbi: MDB_dbi, key: [UInt8])
    }

    private(set) var operations: [Operation] = []
    /// The index, in the order they were opened, of each cursor open now.
    private var cursors: [OpaquePointer: Int] = [:]
    /// The database of each cursor opened while recording, by its index.
    private var cursorDatabases: [MDB_dbi] = []
    private let thread = pthread_self()

    /// The trace recording now, if any: set only by ``recording(_:)``.
    nonisolated(unsafe) static var active: OperationTrace?

    private init() {}

    /// The number of operations recorded.
    public var count: Int { operations.count }

    /// Runs `body`, recording the LMDB operations this thread performs meanwhile. Not re-entrant, and for one
    /// recording at a time in the process: a tool for benchmarks.
    public static func recording<T>(_ body: () throws -> T) rethrows -> (result: T, trace: OperationTrace) {
        precondition(active == nil, "OperationTrace.recording is not re-entrant")
        let trace = OperationTrace()
        active = trace
        defer { active = nil }
        return (try body(), trace)
    }

    /// What the trace writes to each database (by its handle in the recording environment): the number of puts
    /// and deletes, and the bytes of their keys and values.
    public func writes() -> [Database: (operations: Int, bytes: Int)] {
        var result: [Database: (operations: Int, bytes: Int)] = [:]
        func add(_ dbi: MDB_dbi, _ bytes: Int) {
            let database = Database(handle: dbi)
            let (operations, total) = result[database] ?? (0, 0)
            result[database] = (operations + 1, total + bytes)
        }
        for operation in operations {
            switch operation {
            case .openCursor, .get, .cursorGet: break
            case .cursorPut(let cursor, let key, let value, _): add(cursorDatabases[cursor], key.count + value.count)
            case .put(let dbi, let key, let value, _): add(dbi, key.count + value.count)
            case .delete(let dbi, let key): add(dbi, key.count)
            }
        }
        return result
    }

    /// The same operations with the writes of each database in key order, after the reads: what the writes
    /// would cost if whoever made them had held them back and written them sorted (a diagnosis). Writes of one
    /// key keep their order; cursor writes become writes of their database, and `MDB_APPEND` is dropped.
    public func inKeyOrder() -> OperationTrace {
        var reads: [Operation] = []
        var writes: [(dbi: MDB_dbi, key: [UInt8], index: Int, operation: Operation)] = []
        for operation in operations {
            switch operation {
            case .openCursor, .get, .cursorGet:
                reads.append(operation)
            case .cursorPut(let cursor, let key, let value, let flags):
                let dbi = cursorDatabases[cursor]
                writes.append((dbi, key, writes.count, .put(dbi: dbi, key: key, value: value, flags: flags & ~UInt32(MDB_APPEND))))
            case .put(let dbi, let key, let value, let flags):
                writes.append((dbi, key, writes.count, .put(dbi: dbi, key: key, value: value, flags: flags & ~UInt32(MDB_APPEND))))
            case .delete(let dbi, let key):
                writes.append((dbi, key, writes.count, operation))
            }
        }
        writes.sort { a, b in
            if a.dbi != b.dbi { return a.dbi < b.dbi }
            if a.key != b.key { return a.key.lexicographicallyPrecedes(b.key) }
            return a.index < b.index
        }
        let sorted = OperationTrace()
        sorted.operations = reads + writes.map(\.operation)
        sorted.cursorDatabases = cursorDatabases
        return sorted
    }

    /// The same operations with every write to one of `databases` made an append: the value put under the
    /// next key of `counter` (eight 0xFF bytes, then `counter` big-endian, so that it sorts after every key
    /// the ledger makes), with `MDB_APPEND`; a delete from one of them is left out. What those tables would cost a
    /// commit if each wrote at its end, as a log does (a diagnosis): a commit then changes their last pages
    /// alone. The reads are kept as they were, and look for keys those tables no longer hold; a write that failed
    /// when it was recorded (its key there already, with `MDB_NOOVERWRITE` or `MDB_APPEND`) is appended all the same.
    public func appending(_ databases: Set<Database>, counter: inout UInt64) -> OperationTrace {
        rewriting(databases, flags: UInt32(MDB_APPEND)) { _ in
            counter += 1
            return [UInt8](repeating: 0xFF, count: 8) + withUnsafeBytes(of: counter.bigEndian) { Array($0) }
        }
    }

    /// The same operations with every write to one of `databases` made a put into `target` (each into its own
    /// database when `nil`) under the key that `key` gives for the key it was recorded with, with `flags`; a
    /// delete from one of them is left out, and the reads are kept as they were (a diagnosis: what a layout of
    /// those tables whose writes go elsewhere would cost a commit). `key` is called once for each write, in order.
    public func rewriting(_ databases: Set<Database>, into target: Database? = nil, flags: UInt32 = 0,
                          key: (_ recorded: [UInt8]) -> [UInt8]) -> OperationTrace {
        let rewritten = Set(databases.map(\.handle))
        var result: [Operation] = []
        result.reserveCapacity(operations.count)
        for operation in operations {
            switch operation {
            case .cursorPut(let cursor, let recorded, let value, _) where rewritten.contains(cursorDatabases[cursor]):
                result.append(.put(dbi: target?.handle ?? cursorDatabases[cursor], key: key(recorded), value: value, flags: flags))
            case .put(let dbi, let recorded, let value, _) where rewritten.contains(dbi):
                result.append(.put(dbi: target?.handle ?? dbi, key: key(recorded), value: value, flags: flags))
            case .delete(let dbi, _) where rewritten.contains(dbi):
                continue
            default:
                result.append(operation)
            }
        }
        let trace = OperationTrace()
        trace.operations = result
        trace.cursorDatabases = cursorDatabases
        return trace
    }

    /// Records what `operation` makes, when a trace records on this thread.
    @inline(__always)
    static func note(_ operation: @autoclosure () -> Operation) {
        guard let trace = active, pthread_equal(trace.thread, pthread_self()) != 0 else { return }
        trace.operations.append(operation())
    }

    /// Records a cursor just opened.
    @inline(__always)
    static func noteCursor(_ cursor: OpaquePointer, dbi: MDB_dbi) {
        guard let trace = active, pthread_equal(trace.thread, pthread_self()) != 0 else { return }
        trace.cursors[cursor] = trace.cursorDatabases.count
        trace.cursorDatabases.append(dbi)
        trace.operations.append(.openCursor(dbi: dbi))
    }

    /// The index of `cursor` among the cursors opened while recording; `nil` when none records, or when the
    /// cursor was opened before the recording began.
    @inline(__always)
    static func cursorIndex(_ cursor: OpaquePointer) -> Int? {
        guard let trace = active, pthread_equal(trace.thread, pthread_self()) != 0 else { return nil }
        return trace.cursors[cursor]
    }
}

extension Environment {
    /// Performs the operations of `trace` in one transaction of this environment, with LMDB's C API alone, and
    /// returns a sum of the values the reads returned (their 8-byte words as the machine loads them, then their
    /// last bytes), so that they are read as the code that recorded them read them: read-only and aborted, or,
    /// `asWrite`, committed as this environment commits (flushed when durable).
    ///
    /// `databases` maps each database of the recording environment to this one's: the identity when the trace
    /// was recorded here. Operations on a cursor opened before the recording began are skipped.
    public func perform(_ trace: OperationTrace, asWrite: Bool = false, databases: [Database: Database] = [:]) throws -> UInt64 {
        func dbi(_ recorded: MDB_dbi) -> MDB_dbi { databases[Database(handle: recorded)]?.handle ?? recorded }
        return try transactRaw(readOnly: !asWrite) { txn throws(LMDBError) -> UInt64 in
            var cursors: [OpaquePointer] = []
            defer { for cursor in cursors { mdb_cursor_close(cursor) } }
            var sum: UInt64 = 0
            func touch(_ value: MDB_val) {
                guard value.mv_size > 0 else { return }
                let bytes = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
                var index = 0
                while index + 8 <= bytes.count {
                    sum &+= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    index += 8
                }
                while index < bytes.count { sum &+= UInt64(bytes[index]); index += 1 }
            }
            // What the recorded code met and went on from (a key not found, a key already there) is met again.
            func check(_ code: Int32) throws(LMDBError) {
                if code != MDB_SUCCESS && code != MDB_NOTFOUND && code != MDB_KEYEXIST { throw LMDBError(rawValue: code) }
            }
            for operation in trace.operations {
                switch operation {
                case .get(let recorded, let key):
                    var value = MDB_val()
                    let code = key.withUnsafeBytes { key in
                        var key = MDB_val(key)
                        return mdb_get(txn, dbi(recorded), &key, &value)
                    }
                    try check(code)
                    if code == MDB_SUCCESS { touch(value) }
                case .openCursor(let recorded):
                    var cursor: OpaquePointer?
                    try check(mdb_cursor_open(txn, dbi(recorded), &cursor))
                    guard let cursor else { throw .invalidArgument }
                    cursors.append(cursor)
                case .cursorGet(let index, let op, let key):
                    var found = MDB_val()
                    var value = MDB_val()
                    let code: Int32
                    if let key {
                        code = key.withUnsafeBytes { key in
                            found = MDB_val(key)
                            return mdb_cursor_get(cursors[index], &found, &value, op)
                        }
                    } else {
                        code = mdb_cursor_get(cursors[index], &found, &value, op)
                    }
                    try check(code)
                    if code == MDB_SUCCESS { touch(value) }
                case .cursorPut(let index, let key, let value, let flags):
                    try check(key.withUnsafeBytes { key in
                        value.withUnsafeBytes { value in
                            var key = MDB_val(key)
                            var value = MDB_val(value)
                            return mdb_cursor_put(cursors[index], &key, &value, flags)
                        }
                    })
                case .put(let recorded, let key, let value, let flags):
                    try check(key.withUnsafeBytes { key in
                        value.withUnsafeBytes { value in
                            var key = MDB_val(key)
                            var value = MDB_val(value)
                            return mdb_put(txn, dbi(recorded), &key, &value, flags)
                        }
                    })
                case .delete(let recorded, let key):
                    try check(key.withUnsafeBytes { key in
                        var key = MDB_val(key)
                        return mdb_del(txn, dbi(recorded), &key, nil)
                    })
                }
            }
            return sum
        }
    }
}
