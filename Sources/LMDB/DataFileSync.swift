#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Flushes an environment's data file to disk through a file descriptor of its own.
///
/// Linux reports a failed write-back of a file's pages once to each open file description, to the first
/// flush through it that follows. LMDB's commits flush the data file through the environment's
/// descriptor, so when a commit's flush reports a failure (and the commit fails with it), a later
/// ``Environment/sync(force:)``, on that same descriptor, succeeds, although the failed write-back may
/// have taken pages of an earlier commit with it: the meta page of a commit whose flush was deferred
/// (`MDB_NOMETASYNC`), for one. A descriptor opened before the first write has every failure since
/// reported to it, whoever else saw it first.
///
/// Open one with ``Environment/openDataFileSync()``. It may be used from any thread.
public final class DataFileSync: @unchecked Sendable {
    /// The descriptor, `-1` once closed; guarded by `lock`.
    private var descriptor: Int32
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    init(dataFile: String) throws(LMDBError) {
        var descriptor: Int32
        repeat { descriptor = open(dataFile, O_RDONLY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { throw LMDBError(rawValue: errno) }
        self.descriptor = descriptor
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
    }

    deinit {
        if descriptor >= 0 { closeDescriptor(descriptor) }
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Flushes every page of the data file written so far, by anyone, to disk (`fdatasync`; on Apple
    /// platforms `F_FULLFSYNC`, as LMDB does). Throws the failure of any write-back of the file since this
    /// was opened or last threw: once per failure; ``LMDBError/closed`` after ``close()``.
    public func sync() throws(LMDBError) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard descriptor >= 0 else { throw .closed }
        try flushFile(descriptor, dataOnly: true)
    }

    /// Closes the descriptor now rather than when the last reference goes; closing twice does nothing.
    public func close() {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        if descriptor >= 0 { closeDescriptor(descriptor) }
        descriptor = -1
    }
}

extension Environment {
    /// Opens a descriptor of its own on the data file, to flush commits to disk through (see
    /// ``DataFileSync``). Open it before the first write whose flush it is to vouch for.
    public func openDataFileSync() throws(LMDBError) -> DataFileSync {
        try DataFileSync(dataFile: directory + "/data.mdb")
    }
}
