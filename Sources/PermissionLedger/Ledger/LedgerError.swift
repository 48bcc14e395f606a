import Foundation
internal import LMDB

/// Why a ledger could not be opened, read or written, in plain words.
public struct LedgerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure: the command-line tool maps these to exit codes.
    public enum Kind: Hashable, Sendable {
        /// There is no ledger at the path.
        case missing
        /// The path holds something that is not a ledger (or a newer format), or a file the ledger refuses to open
        /// (a symbolic link, a hard link, a special file, another user's, a directory others can write to), or what
        /// is left of a ledger whose data is lost (an empty `data.mdb`, a `lock.mdb` alone).
        case notALedger
        /// Another process holds a lock the ledger needs, or this process already has the ledger open.
        case locked
        /// Stored bytes are damaged.
        case damaged
        /// The disk or LMDB failed (out of space, I/O error, ...).
        case storage
        /// The query names something that does not exist at the point asked, or a point beyond the log.
        case notFound
        /// The ledger was closed (``Ledger/close()``): open it again to go on.
        case closed
        /// A write was asked of a ledger opened read-only (``Ledger/Options/readOnly``).
        case readOnly
        /// The ledger's key, which personal fields need, is not where it was looked for (``Ledger/Options/keyFile``).
        case keyUnavailable
    }

    /// What the reader of an error can do about it, as a value: the engine's ``description`` words it in
    /// terms of this API, and a program built on the engine (the command-line tool) in its own terms.
    public enum Remedy: Hashable, Sendable, CustomStringConvertible {
        /// Check the whole ledger at `path` with ``Ledger/verify(path:progress:)``: the disk failed a read or
        /// a write, and only a full check tells whether what is stored is intact.
        case verify(path: String)
        /// Rebuild the derived tables of the ledger at `path` from its log with
        /// ``Ledger/rebuildProjections(path:progress:)``: an older PermissionLedger made them. The log is unchanged.
        case rebuildProjections(path: String)
        /// Read again: an erasure recorded while the read was going on destroyed a key it needed, and a read
        /// begun after it sees the erasure. ``Ledger/read(asOf:retries:_:)`` reads again by itself.
        case readAgain

        /// The remedy in terms of this API.
        public var description: String {
            switch self {
            case .verify: "check the ledger with Ledger.verify(path:)"
            case .readAgain: "read again"
            case .rebuildProjections:
                "rebuild them once with Ledger.rebuildProjections(path:) (the log itself is unchanged)"
            }
        }
    }

    /// What kind of failure it is.
    public var kind: Kind
    /// What went wrong, in plain words, often starting with the ledger's path; the ``remedy`` is not part of it.
    public var message: String
    /// The stored event the problem is at, when known.
    public var seq: UInt64?
    /// What to do about it, when there is something beyond fixing what the message names.
    public var remedy: Remedy?

    /// Creates an error of `kind` with `message`, at the stored event `seq` when there is one, and the
    /// `remedy` to offer when there is one.
    public init(_ kind: Kind, _ message: String, seq: UInt64? = nil, remedy: Remedy? = nil) {
        self.kind = kind
        self.message = message
        self.seq = seq
        self.remedy = remedy
    }

    /// The message, preceded by `seq N: ` when the error is at a stored event and followed by the remedy
    /// when there is one.
    public var description: String { described(remedy: remedy?.description) }

    /// The message, preceded by `seq N: ` when the error is at a stored event and followed by `remedy`, the
    /// ``remedy`` in the words of the program that reports the error (`nil` for none).
    public func described(remedy: String?) -> String {
        let text = remedy.map { "\(message); \($0)" } ?? message
        return seq.map { "seq \($0): \(text)" } ?? text
    }

    /// A write asked of a ledger opened read-only.
    static func readOnly(path: String) -> LedgerError {
        LedgerError(.readOnly, "\(path): the ledger is open read-only; open it for writing to append or rebuild")
    }

    /// The ledger's key is not where it was looked for.
    static func missingKey(_ location: LedgerKey.Location) -> LedgerError {
        LedgerError(.keyUnavailable, "the ledger's key is needed and was not found: looked for \(location); give its file with --key-file or PERMISSION_LEDGER_KEY_FILE")
    }

    static func storage(_ error: any Error, path: String) -> LedgerError {
        if let e = error as? LedgerError { return e }
        if let e = error as? EventRecord.DecodingError { return LedgerError(.damaged, "\(path): \(e.description)") }
        guard let e = error as? LMDBError else { return LedgerError(.storage, "\(path): \(error)") }
        switch e {
        case .closed: return LedgerError(.closed, "\(path): the ledger is closed; open it again to go on")
        case .busy: return LedgerError(.locked, "\(path): the ledger is locked by another process (\(e))")
        case .alreadyOpen:
            return LedgerError(.locked, "\(path): the ledger is already open in this process; share that Ledger instead of opening it again (LMDB allows one open per process)")
        case .unsupportedFileSystem:
            let why = Environment.fileSystemProblem(at: path) ?? "its file system does not support what LMDB needs"
            return LedgerError(.storage, "\(path): a ledger cannot live here: \(why); LMDB needs a local file system (memory maps and locks)")
        case .invalid, .versionMismatch, .incompatible: return LedgerError(.notALedger, "\(path): not a ledger (\(e))")
        case .corrupted, .panic, .pageNotFound: return LedgerError(.damaged, "\(path): the ledger's data file is damaged (\(e))")
        case .noSpace, .quotaExceeded, .fileTooLarge, .ioError:
            let (why, remedy) = writeFailure(e, path: path)
            return LedgerError(.storage, "\(path): \(why)", remedy: remedy)
        case .untrustedFile:
            // The open checked the directory and found what the check before it had not: say what it is now.
            let problem = Environment.fileProblem(inDirectory: path, readOnly: true)
                ?? Environment.FileProblem(path: path, reason: .replaced, isDirectory: true)
            return LedgerDirectory.refusal(problem, readOnly: true)
        case .accessDenied:
            if let problem = Environment.fileProblem(inDirectory: path, readOnly: true), case .accessDenied = problem.reason {
                return LedgerDirectory.refusal(problem, readOnly: true)
            }
            return LedgerError(.storage, "\(path): permission denied")
        default: return LedgerError(.storage, "\(path): \(e)")
        }
    }

    /// Why a read or write of the data file failed, in plain words. LMDB reports a write that stopped short
    /// (the disk filled up, or the process reached its file size limit) as an I/O error, so the free space
    /// and the limit are looked at here. A failed commit stores nothing: what was stored before is intact.
    /// When the disk itself failed, the remedy is a full check.
    static func writeFailure(_ error: LMDBError, path: String) -> (why: String, remedy: Remedy?) {
        let intact = "the write failed, and what the ledger held before is intact"
        let sizeLimit = fileSizeLimit()
        var file = stat()
        let size = stat(path + "/data.mdb", &file) == 0 ? Int(file.st_size) : 0
        if error == .fileTooLarge || sizeLimit.map({ size + (4 << 20) >= $0 }) == true {
            let limit = sizeLimit.map { ": \($0) bytes" } ?? ""
            return ("the data file reached this process's file size limit (ulimit -f\(limit)); \(intact)", nil)
        }
        if error == .quotaExceeded { return ("the disk quota is used up; \(intact)", nil) }
        var stats = statvfs()
        let free = statvfs(path, &stats) == 0 ? Int(stats.f_bavail) * Int(stats.f_frsize) : nil
        if error == .noSpace || free.map({ $0 < 4 << 20 }) == true {
            let shown = free.map { " (\($0 / 1024) KiB free)" } ?? ""
            return ("no space left on the device\(shown); \(intact)", nil)
        }
        return ("an input/output error (\(error)): the disk failed a read or a write", .verify(path: path))
    }
}

/// The process's file size limit (`ulimit -f`) in bytes, or `nil` when there is none.
private func fileSizeLimit() -> Int? {
    var limit = rlimit()
    #if os(Linux)
    let resource = __rlimit_resource_t(RLIMIT_FSIZE.rawValue)
    #else
    let resource = RLIMIT_FSIZE
    #endif
    guard getrlimit(resource, &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
    return Int(clamping: limit.rlim_cur)
}
