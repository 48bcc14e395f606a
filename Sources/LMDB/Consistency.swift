internal import CLMDB

/// The persistent flags of a database, fixed when it is created.
///
/// The corresponding LMDB flags are the `MDB_*` flags of `mdb_dbi_open` that LMDB stores with the database.
public struct DatabaseFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The raw LMDB flag bits.
    public let rawValue: UInt32

    /// Creates flags from raw LMDB flag bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Keys compare from their last byte. The corresponding LMDB flag is `MDB_REVERSEKEY`.
    public static let reverseKey = DatabaseFlags(rawValue: UInt32(MDB_REVERSEKEY))
    /// A key may have several sorted values. The corresponding LMDB flag is `MDB_DUPSORT`.
    public static let duplicateSort = DatabaseFlags(rawValue: UInt32(MDB_DUPSORT))
    /// Keys are native integers. The corresponding LMDB flag is `MDB_INTEGERKEY`.
    public static let integerKey = DatabaseFlags(rawValue: UInt32(MDB_INTEGERKEY))
    /// Duplicate values all have one size. The corresponding LMDB flag is `MDB_DUPFIXED`.
    public static let duplicateFixed = DatabaseFlags(rawValue: UInt32(MDB_DUPFIXED))
    /// Duplicate values are native integers. The corresponding LMDB flag is `MDB_INTEGERDUP`.
    public static let integerDuplicate = DatabaseFlags(rawValue: UInt32(MDB_INTEGERDUP))
    /// Duplicate values compare from their last byte. The corresponding LMDB flag is `MDB_REVERSEDUP`.
    public static let reverseDuplicate = DatabaseFlags(rawValue: UInt32(MDB_REVERSEDUP))

    /// The flags in hexadecimal, as LMDB's headers write them.
    public var description: String { "0x" + String(rawValue, radix: 16) }
}

/// LMDB's own bookkeeping as a read-only transaction sees it, for integrity checks.
extension ReadTransaction {
    /// The ID of the commit this transaction's snapshot shows.
    ///
    /// The corresponding LMDB function is `mdb_txn_id`.
    public var transactionID: UInt64 {
        get throws(LMDBError) { UInt64(mdb_txn_id(try state.transaction())) }
    }

    /// The persistent flags of `db` (as stored when it was opened).
    ///
    /// The corresponding LMDB function is `mdb_dbi_flags`.
    public func flags(_ db: Database) throws(LMDBError) -> DatabaseFlags {
        var flags: UInt32 = 0
        try state.check(mdb_dbi_flags(try state.transaction(), db.handle, &flags))
        return DatabaseFlags(rawValue: flags)
    }

    /// The names of the environment's named databases: the keys of LMDB's main database, in order.
    ///
    /// - Throws: ``LMDBError/corrupted`` when there are not as many as LMDB records for the main database (a
    ///   damaged page), or what LMDB throws reading it.
    ///
    /// The corresponding LMDB functions are `mdb_cursor_get` and `mdb_stat` on the main database (`MAIN_DBI`).
    public func databaseNames() throws(LMDBError) -> [String] {
        // The main database is LMDB's database 1 (MAIN_DBI, which lmdb.h does not name).
        let main = Database(handle: 1)
        let cursor = try self.cursor(main)
        var names: [String] = []
        var entry = try cursor.first()
        while let e = entry {
            names.append(String(decoding: e.key, as: UTF8.self))
            entry = try cursor.next()
        }
        guard try statistics(main).entries == names.count else { throw .corrupted }
        return names
    }

    /// The last page in use as of the environment's latest commit, which may be newer than this snapshot.
    ///
    /// The corresponding LMDB function is `mdb_env_info` (`me_last_pgno`).
    public func lastCommittedPage() throws(LMDBError) -> UInt64 {
        var info = MDB_envinfo()
        try state.check(mdb_env_info(mdb_txn_env(try state.transaction()), &info))
        return UInt64(info.me_last_pgno)
    }

    /// Checks LMDB's free list (the pages earlier commits freed, for later ones to reuse) and returns what
    /// is wrong with it, in plain words, or `nil`.
    ///
    /// A damaged free list does not change what a reader sees, but the next write would take its pages for
    /// new data: a page listed twice, or a page that is not free, would then be overwritten while in use.
    /// Checked: each record is keyed by the 8-byte ID of a commit no later than this snapshot's, in increasing
    /// order, and holds a count followed by that many page numbers; every page number lies after the two
    /// meta pages and within the pages in use; no page is listed twice. A page number changed into that of
    /// another page in use passes these checks (only a walk of every tree's pages would see it).
    ///
    /// Must run in a read-only transaction (LMDB opens the free list to readers only).
    ///
    /// - Returns: the problem, or `nil` when the free list is consistent.
    /// - Throws: ``LMDBError`` when LMDB cannot read the free list (a damaged page, say).
    public func freeListProblem() throws(LMDBError) -> String? {
        let snapshot = try transactionID
        let lastPage = try lastCommittedPage()
        // The free list is LMDB's database 0 (FREE_DBI, which lmdb.h does not name).
        let cursor = try self.cursor(Database(handle: 0))
        var seen = [UInt64](repeating: 0, count: Int(lastPage / 64) + 1)
        var previous: UInt64?
        var entry = try cursor.first()
        while let e = entry {
            guard e.key.count == 8 else { return "a free-list record has a key of \(e.key.count) bytes, not a commit ID" }
            let commit = e.key.loadUnaligned(as: UInt64.self)
            if let previous, commit <= previous {
                return "the free-list records are out of order (commit \(commit) after \(previous))"
            }
            previous = commit
            guard commit <= snapshot else {
                return "a free-list record names commit \(commit), later than the last commit (\(snapshot))"
            }
            guard e.value.count >= 8, e.value.count % 8 == 0 else {
                return "the free-list record of commit \(commit) has \(e.value.count) bytes, not a list of page numbers"
            }
            let count = e.value.loadUnaligned(as: UInt64.self)
            guard count <= UInt64(e.value.count / 8 - 1) else {
                return "the free-list record of commit \(commit) claims \(count) pages but has room for \(e.value.count / 8 - 1)"
            }
            for index in 0..<Int(count) {
                let page = e.value.loadUnaligned(fromByteOffset: 8 * (index + 1), as: UInt64.self)
                guard page >= 2, page <= lastPage else {
                    return "the free-list record of commit \(commit) lists page \(page), outside pages 2...\(lastPage)"
                }
                let (word, bit) = (Int(page / 64), UInt64(1) << (page % 64))
                guard seen[word] & bit == 0 else { return "the free list lists page \(page) twice" }
                seen[word] |= bit
            }
            entry = try cursor.next()
        }
        return nil
    }
}
