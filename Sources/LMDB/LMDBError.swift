internal import CLMDB

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// An error code returned by an LMDB function: either one of LMDB's own
/// `MDB_*` codes (negative) or a system `errno` value (positive).
public struct LMDBError: Error, RawRepresentable, Hashable, CustomStringConvertible, Sendable {
    /// The raw C error code.
    public let rawValue: Int32

    /// Creates an error from a raw C error code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// A textual description of the error.
    ///
    /// The corresponding LMDB function is `mdb_strerror`.
    public var description: String {
        switch self {
        case .alreadyOpen: "the environment is already open in this process"
        case .closed: "the environment is closed"
        case .unsupportedFileSystem: "the environment is on a file system LMDB cannot use (it needs a local file system)"
        case .untrustedFile:
            "a file of the environment is not one to open (a symbolic link, a hard link, a special file, another user's, or in a directory others can write to)"
        default: String(cString: mdb_strerror(rawValue))
        }
    }

    /// Throws the error for `code` unless it is `MDB_SUCCESS`.
    static func check(_ code: Int32) throws(LMDBError) {
        if code != MDB_SUCCESS { throw LMDBError(rawValue: code) }
    }
}

extension LMDBError {
    /// The key/data pair already exists (also returned by an out-of-order append).
    ///
    /// The corresponding LMDB error is `MDB_KEYEXIST`.
    public static let keyExists = LMDBError(rawValue: MDB_KEYEXIST)

    /// The key/data pair was not found (end of data).
    ///
    /// The corresponding LMDB error is `MDB_NOTFOUND`.
    public static let notFound = LMDBError(rawValue: MDB_NOTFOUND)

    /// A requested page was not found: the database is corrupted.
    ///
    /// The corresponding LMDB error is `MDB_PAGE_NOTFOUND`.
    public static let pageNotFound = LMDBError(rawValue: MDB_PAGE_NOTFOUND)

    /// A located page was the wrong type.
    ///
    /// The corresponding LMDB error is `MDB_CORRUPTED`.
    public static let corrupted = LMDBError(rawValue: MDB_CORRUPTED)

    /// An earlier fatal error occurred; the environment must be closed.
    ///
    /// The corresponding LMDB error is `MDB_PANIC`.
    public static let panic = LMDBError(rawValue: MDB_PANIC)

    /// The environment was created by an incompatible LMDB version.
    ///
    /// The corresponding LMDB error is `MDB_VERSION_MISMATCH`.
    public static let versionMismatch = LMDBError(rawValue: MDB_VERSION_MISMATCH)

    /// The file is not an LMDB data file.
    ///
    /// The corresponding LMDB error is `MDB_INVALID`.
    public static let invalid = LMDBError(rawValue: MDB_INVALID)

    /// The environment's map size has been reached.
    ///
    /// The corresponding LMDB error is `MDB_MAP_FULL`.
    public static let mapFull = LMDBError(rawValue: MDB_MAP_FULL)

    /// The environment's maximum number of named databases has been reached.
    ///
    /// The corresponding LMDB error is `MDB_DBS_FULL`.
    public static let databasesFull = LMDBError(rawValue: MDB_DBS_FULL)

    /// The environment's maximum number of readers has been reached.
    ///
    /// The corresponding LMDB error is `MDB_READERS_FULL`.
    public static let readersFull = LMDBError(rawValue: MDB_READERS_FULL)

    /// Too many thread-local storage keys are in use.
    ///
    /// The corresponding LMDB error is `MDB_TLS_FULL`.
    public static let tlsFull = LMDBError(rawValue: MDB_TLS_FULL)

    /// The transaction has too many dirty pages.
    ///
    /// The corresponding LMDB error is `MDB_TXN_FULL`.
    public static let transactionFull = LMDBError(rawValue: MDB_TXN_FULL)

    /// A cursor stack overflowed: the tree is too deep.
    ///
    /// The corresponding LMDB error is `MDB_CURSOR_FULL`.
    public static let cursorFull = LMDBError(rawValue: MDB_CURSOR_FULL)

    /// A page has no more space.
    ///
    /// The corresponding LMDB error is `MDB_PAGE_FULL`.
    public static let pageFull = LMDBError(rawValue: MDB_PAGE_FULL)

    /// Another process grew the database beyond this environment's map size.
    ///
    /// The corresponding LMDB error is `MDB_MAP_RESIZED`.
    public static let mapResized = LMDBError(rawValue: MDB_MAP_RESIZED)

    /// The operation is incompatible with the database, or the database flags changed.
    ///
    /// The corresponding LMDB error is `MDB_INCOMPATIBLE`.
    public static let incompatible = LMDBError(rawValue: MDB_INCOMPATIBLE)

    /// A reader lock table slot was invalid.
    ///
    /// The corresponding LMDB error is `MDB_BAD_RSLOT`.
    public static let badReaderSlot = LMDBError(rawValue: MDB_BAD_RSLOT)

    /// The transaction must abort, has a child, is invalid, or has already ended.
    ///
    /// This wrapper also throws it when a transaction or cursor is used after its
    /// closure returned, and for forbidden nesting (such as `write` inside a transaction).
    ///
    /// The corresponding LMDB error is `MDB_BAD_TXN`.
    public static let badTransaction = LMDBError(rawValue: MDB_BAD_TXN)

    /// A key or data item has an unsupported size (for example an empty key).
    ///
    /// The corresponding LMDB error is `MDB_BAD_VALSIZE`.
    public static let badValueSize = LMDBError(rawValue: MDB_BAD_VALSIZE)

    /// The database handle changed unexpectedly or is not valid in this transaction.
    ///
    /// The corresponding LMDB error is `MDB_BAD_DBI`.
    public static let badDatabase = LMDBError(rawValue: MDB_BAD_DBI)

    /// No space left on the device.
    ///
    /// The corresponding C error is `ENOSPC`.
    public static let noSpace = LMDBError(rawValue: ENOSPC)

    /// Permission denied, or a write in a read-only environment or transaction.
    ///
    /// The corresponding C error is `EACCES`.
    public static let accessDenied = LMDBError(rawValue: EACCES)

    /// No such file or directory.
    ///
    /// The corresponding C error is `ENOENT`.
    public static let noSuchFile = LMDBError(rawValue: ENOENT)

    /// The file already exists.
    ///
    /// The corresponding C error is `EEXIST`.
    public static let fileExists = LMDBError(rawValue: EEXIST)

    /// The resource is temporarily unavailable: the environment is locked by another process.
    ///
    /// The corresponding C error is `EAGAIN`.
    public static let busy = LMDBError(rawValue: EAGAIN)

    /// An invalid parameter was specified.
    ///
    /// The corresponding C error is `EINVAL`.
    public static let invalidArgument = LMDBError(rawValue: EINVAL)

    /// The disk quota is used up.
    ///
    /// The corresponding C error is `EDQUOT`.
    public static let quotaExceeded = LMDBError(rawValue: EDQUOT)

    /// The file would grow past the largest size allowed: the process's file size limit (`ulimit -f`).
    ///
    /// The corresponding C error is `EFBIG`.
    public static let fileTooLarge = LMDBError(rawValue: EFBIG)

    /// A low-level I/O error occurred.
    ///
    /// The corresponding C error is `EIO`.
    public static let ioError = LMDBError(rawValue: EIO)

    /// Out of memory.
    ///
    /// The corresponding C error is `ENOMEM`.
    public static let outOfMemory = LMDBError(rawValue: ENOMEM)

    /// The environment is already open in this process: LMDB allows one open environment per
    /// directory and process. Share the open ``Environment`` instead. (This wrapper's own code.)
    public static let alreadyOpen = LMDBError(rawValue: -30_700)

    /// The environment was closed (``Environment/close()``): nothing can be read or written through it any
    /// more. (This wrapper's own code.)
    public static let closed = LMDBError(rawValue: -30_703)

    /// The directory is on a file system LMDB cannot use: a network file system (NFS, SMB, ...), whose
    /// locks and memory maps LMDB cannot rely on, or a pseudo file system. (This wrapper's own code.)
    public static let unsupportedFileSystem = LMDBError(rawValue: -30_701)

    /// The directory or a file in it failed the checks made before LMDB opens them: a symbolic link, a hard link, a
    /// special file, another user's, or a directory others can write to (``Environment/FileProblem`` says which and
    /// why), or the data file LMDB opened is not the one checked. (This wrapper's own code.)
    public static let untrustedFile = LMDBError(rawValue: -30_702)
}
