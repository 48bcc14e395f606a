internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension Environment {
    /// Copies the environment into the existing directory `path`, as a new data file, `data.mdb`: a consistent
    /// snapshot of the last commit, which opens as an environment of its own.
    ///
    /// With `compacting`, the copy is taken in one read transaction of its own, so that writers, of this
    /// process or of others, go on meanwhile; the pages that earlier commits freed are left out and the pages in
    /// use numbered anew, so that the copy is no larger than its data, and its free list is empty. Without it,
    /// the file is copied page for page, free pages included, and LMDB holds its writer lock while it copies the
    /// meta pages.
    ///
    /// The data file is created with the permissions `fileMode` (less the process's umask, as LMDB creates its
    /// own files), and flushed to disk before this returns. When the copy fails, the file is removed again.
    /// Must not be called inside a transaction on this thread.
    ///
    /// ```swift
    /// try FileManager.default.createDirectory(atPath: "backup", withIntermediateDirectories: false)
    /// try environment.copy(to: "backup", compacting: true)
    /// let copy = try Environment(path: "backup", options: .init(readOnly: true))
    /// ```
    ///
    /// - Parameters:
    ///   - path: an existing directory without a `data.mdb`.
    ///   - compacting: whether to leave out the free pages (`MDB_CP_COMPACT`).
    ///   - fileMode: the permissions of the new data file.
    /// - Throws: ``LMDBError/fileExists`` when the directory already holds a `data.mdb`,
    ///   ``LMDBError/noSuchFile`` when it does not exist, ``LMDBError/noSpace`` (or another system error) when
    ///   the copy cannot be written, ``LMDBError/badTransaction`` inside a transaction, or what LMDB throws
    ///   reading the environment.
    ///
    /// The corresponding LMDB function is `mdb_env_copy2`; this calls `mdb_env_copyfd2` on a file it opens
    /// itself, to set its permissions and flush it.
    public func copy(to path: String, compacting: Bool, fileMode: UInt32 = 0o600) throws(LMDBError) {
        guard let mode = mode_t(exactly: fileMode) else { throw .invalidArgument }
        let file = path + "/data.mdb"
        var descriptor: Int32
        repeat {
            descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw LMDBError(rawValue: errno) }
        do throws(LMDBError) {
            try withHandleOutsideTransactions { (env) throws(LMDBError) in
                // Nothing is written before the transaction begins, but a try again starts from an empty file.
                guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else { throw LMDBError(rawValue: errno) }
                try LMDBError.check(mdb_env_copyfd2(env, descriptor, compacting ? UInt32(MDB_CP_COMPACT) : 0))
            }
            try flushFile(descriptor, dataOnly: false)
            guard closeDescriptor(descriptor) == 0 || errno == EINTR else {
                descriptor = -1
                throw LMDBError(rawValue: errno)
            }
        } catch {
            if descriptor >= 0 { closeDescriptor(descriptor) }
            unlink(file)
            throw error
        }
    }
}
