internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The environments open in this process, by the device and inode of their data file.
///
/// LMDB forbids opening one environment twice in a process: closing either copy releases the POSIX
/// locks of both, and another process could then reset the lock file under the other. The registry
/// turns that mistake into ``LMDBError/alreadyOpen``. It keys on `data.mdb`, which an open environment
/// holds open, so that its inode cannot be reused by another file meanwhile (a directory's could: a
/// directory removed while its environment is open frees its inode for the next one created).
enum OpenEnvironments {
    struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    private nonisolated(unsafe) static var open: Set<Identity> = []
    private nonisolated(unsafe) static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// Held around each open, from the look at its data file to its claim or registration, so that two
    /// opens of one new environment at once are one after the other: the second then finds the data file
    /// the first created, claimed, and is refused. Recursive: a caller that checks the directory before it
    /// opens (``Environment/whileOpening(_:)``) holds it across both.
    private nonisolated(unsafe) static let openingLock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(lock, &attributes)
        pthread_mutexattr_destroy(&attributes)
        return lock
    }()

    /// Runs `body` while no other open in this process runs.
    static func opening<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(openingLock)
        defer { pthread_mutex_unlock(openingLock) }
        return try body()
    }

    /// The identity of the data file of the environment in directory `path`, or `nil` when there is
    /// none yet (a new environment, which no one can have open).
    static func identity(of path: String) -> Identity? {
        var info = stat()
        guard stat(path + "/data.mdb", &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The identity of the data file an open environment holds.
    static func identity(ofOpen env: OpaquePointer) -> Identity? {
        var fd: mdb_filehandle_t = -1
        var info = stat()
        guard mdb_env_get_fd(env, &fd) == MDB_SUCCESS, fstat(fd, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Claims `identity` for an environment about to be opened.
    static func claim(_ identity: Identity) throws(LMDBError) {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        guard open.insert(identity).inserted else { throw .alreadyOpen }
    }

    /// Records `identity` for an environment just created (there was no data file to claim before).
    static func register(_ identity: Identity) {
        pthread_mutex_lock(lock)
        open.insert(identity)
        pthread_mutex_unlock(lock)
    }

    /// Releases `identity` once its environment is closed.
    static func release(_ identity: Identity) {
        pthread_mutex_lock(lock)
        open.remove(identity)
        pthread_mutex_unlock(lock)
    }
}

/// File systems LMDB cannot be used on: its memory map and locks need a local file system.
enum FileSystemCheck {
    /// Why the file system holding `path` cannot hold an environment, or `nil` when it can (or is unknown).
    static func problem(at path: String) -> String? {
        var info = statfs()
        guard statfs(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        let name = withUnsafeBytes(of: info.f_fstypename) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return problem(typeName: name)
        #else
        return problem(type: Int64(info.f_type))
        #endif
    }

    /// The Linux file-system magic numbers (`statfs.f_type`) of network and pseudo file systems.
    static func problem(type: Int64) -> String? {
        switch UInt32(truncatingIfNeeded: type) {
        case 0x6969: "it is on NFS, a network file system"
        case 0x517B, 0xFF53_4D42, 0xFE53_4D42: "it is on SMB/CIFS, a network file system"
        case 0x0102_1997: "it is on 9P, a network file system"
        case 0x5346_414F, 0x6B41_4653: "it is on AFS, a network file system"
        case 0x00C3_6400: "it is on Ceph, a network file system"
        case 0x0BD0_0BD0: "it is on Lustre, a network file system"
        case 0x7375_7245: "it is on Coda, a network file system"
        case 0x9FA0: "it is in /proc, which holds no files"
        case 0x6265_6572: "it is in /sys, which holds no files"
        default: nil
        }
    }

    /// The macOS file-system type names (`statfs.f_fstypename`) of network file systems.
    static func problem(typeName: String) -> String? {
        ["nfs", "smbfs", "afpfs", "webdav", "cifs"].contains(typeName) ? "it is on \(typeName), a network file system" : nil
    }
}

extension Environment {
    /// Why the file system holding `path` cannot hold an environment (a network or pseudo file
    /// system), in words, or `nil` when nothing speaks against it.
    public static func fileSystemProblem(at path: String) -> String? {
        FileSystemCheck.problem(at: path)
    }
}
