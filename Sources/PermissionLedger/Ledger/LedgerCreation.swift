import Foundation
internal import LMDB
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The making of a new ledger, marked in its directory until it is done, so that a process killed midway leaves a
/// directory that the next writer finishes, not one that looks like a ledger whose data was lost.
///
/// LMDB makes `lock.mdb`, then `data.mdb`, then writes the data file's first pages: a kill between them leaves a
/// `lock.mdb` alone or an empty `data.mdb`, which ``LedgerDirectory`` refuses ever after, as what a lost data file
/// leaves. So a new ledger is made under a mark, the file ``markerName``, made and flushed before anything else and
/// removed once the ledger has recorded its format, made its key store and flushed its data file: where the mark
/// is, no event was ever stored, and the next writable open goes on with the making.
///
/// Making is done holding an exclusive `flock` on the directory, which the system lets go when the process dies: a
/// writer that finds the mark waits for the lock (outside ``/LMDB/Environment/whileOpening(_:)``, so that other
/// ledgers of the process open meanwhile), and then either finds the ledger made meanwhile or knows that its maker
/// is gone.
final class LedgerCreation {
    /// What a writable open does with a directory, as ``LedgerDirectory/prepare(path:readOnly:makes:)`` finds it.
    enum Start {
        /// Opens the ledger there.
        case open
        /// Makes the ledger, or finishes making it, and then ``finish(_:)``.
        case make(LedgerCreation)
        /// Another process is making the ledger: wait for it (``waitForMaker(path:)``), then look again.
        case makerAtWork
    }

    /// The mark's name in the ledger's directory.
    static let markerName = "being-made"

    private let path: String
    /// The directory, open and locked while the ledger is made; -1 once let go.
    private var fd: Int32

    /// The directory at `path`, open, and locked by this process for making a ledger there.
    private init(path: String, lockedDirectory fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { release() }

    /// Opens the directory at `path` and takes its lock, waiting for it when `waiting`; `nil` when another process
    /// holds it and this one does not wait.
    private static func lock(_ path: String, waiting: Bool) throws(LedgerError) -> Int32? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            // Read access is what listing the directory takes too (``LedgerDirectory/listing(_:)``), and is said so.
            if code == EACCES { _ = try LedgerDirectory.listing(path) }
            throw LedgerError(.storage, "\(path): cannot be opened to make a ledger in it: \(String(cString: strerror(code))); check that it is a directory you can read")
        }
        var locked: Int32
        repeat { locked = flock(fd, waiting ? LOCK_EX : LOCK_EX | LOCK_NB) } while locked != 0 && errno == EINTR
        guard locked == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { return nil }
            throw LedgerError(.storage, "\(path): cannot be locked to make a ledger in it: \(String(cString: strerror(code))); a ledger needs a local file system")
        }
        return fd
    }

    /// Waits until no process holds the lock of the directory at `path`: what a writable open does when
    /// ``begin(path:makes:)`` said ``Start/makerAtWork``, before it looks again.
    static func waitForMaker(path: String) throws(LedgerError) {
        if let fd = try lock(path, waiting: true) { close(fd) }
    }

    /// Whether the directory at `path` holds the mark of a ledger being made, or whose making was cut short.
    static func isMarked(_ path: String) -> Bool {
        var info = stat()
        return lstat(path + "/" + markerName, &info) == 0
    }

    /// The mark, where it is not an empty regular file of the user's (something planted in its place) refused with
    /// one line.
    private static func checkMark(_ path: String) throws(LedgerError) {
        let marker = path + "/" + markerName
        var info = stat()
        guard lstat(marker, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(), info.st_size == 0 else {
            throw LedgerError(.notALedger, "\(marker): is not the empty file of yours that marks a ledger being made; a ledger's files must be regular files owned by you; refusing to open it")
        }
    }

    /// The refusal of a ledger whose making is not finished, by a reader (`readOnly`) or by a writer that does not
    /// make ledgers (`Ledger.Options.makesLedger` false: erase, retain, rebuild).
    static func notMadeYet(_ path: String, readOnly: Bool) -> LedgerError {
        LedgerError(.notALedger, "\(path): a ledger was being made here and is not made yet (its maker may have stopped midway); \(readOnly ? "open it for writing" : "open it"), for example with import, to finish making it")
    }

    /// What a writable open does with the directory at `path` that holds no ledger yet (its `data.mdb` is missing
    /// or empty), or the mark of one being made, taking the directory's lock first: one that `makes` ledgers goes on
    /// with a making that was cut short, or starts one in an empty directory; another opens the ledger only once
    /// the mark is gone. ``Start/open`` when another process made the ledger meanwhile, and for a directory on a
    /// file system where no ledger can live, which opening the environment then refuses with the reason. Throws
    /// what ``LedgerDirectory`` says of a directory that holds part of a ledger without the mark, or other files.
    static func begin(path: String, makes: Bool) throws(LedgerError) -> Start {
        guard Environment.fileSystemProblem(at: path) == nil else { return .open }
        try checkMark(path)
        guard let fd = try lock(path, waiting: false) else { return .makerAtWork }
        let creation = LedgerCreation(path: path, lockedDirectory: fd)
        let dataFile = path + "/data.mdb"
        var info = stat()
        let hasData = lstat(dataFile, &info) == 0
        if isMarked(path) {
            guard makes else { throw notMadeYet(path, readOnly: false) }
            // Its maker is gone, since the lock was free: nothing was stored, as the mark goes before the first
            // event can be. An empty data file is what LMDB leaves when killed before it wrote the file's first
            // pages; LMDB makes it again.
            if hasData, info.st_size == 0, unlink(dataFile) != 0 {
                let code = errno
                throw LedgerError(.storage, "\(dataFile): cannot be removed to make the ledger again: \(String(cString: strerror(code))); remove it yourself, as nothing was stored in it")
            }
            return .make(creation)
        }
        if hasData {
            // Made by another process while this one waited; an empty data file is refused as lost data.
            if info.st_size == 0 { throw LedgerDirectory.emptyDataFile(dataFile) }
            return .open
        }
        let contents = try LedgerDirectory.listing(path)
        if contents.contains("lock.mdb") { throw LedgerDirectory.lockFileAlone(path) }
        if !contents.isEmpty {
            throw LedgerError(.notALedger, "\(path): not a ledger (the directory holds other files and no data.mdb)")
        }
        guard makes else { throw LedgerError(.notALedger, "\(path): not a ledger (no data.mdb in the directory)") }
        try creation.mark()
        return .make(creation)
    }

    /// Makes the mark, and flushes the directory, so that it is there before any file of the ledger.
    private func mark() throws(LedgerError) {
        let marker = path + "/" + Self.markerName
        let made = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard made >= 0 else {
            throw LedgerError(.storage, "\(marker): cannot be created: \(String(cString: strerror(errno))); the ledger's directory must be writable by you")
        }
        close(made)
        OwnerOnlyFile.syncDirectory(of: marker)
    }

    /// Ends the making once the ledger in `environment` has recorded its format and made its key store: flushes the
    /// data file, removes the mark, flushes the directory and lets the lock go.
    func finish(_ environment: Environment) throws(LedgerError) {
        do {
            try environment.sync(force: true)
        } catch {
            throw LedgerError.storage(error, path: path)
        }
        let marker = path + "/" + Self.markerName
        guard unlink(marker) == 0 || errno == ENOENT else {
            throw LedgerError(.storage, "\(marker): cannot be removed: \(String(cString: strerror(errno))); the ledger is made: remove the file yourself")
        }
        OwnerOnlyFile.syncDirectory(of: marker)
        release()
    }

    /// Lets the lock go: what a failed making does too, leaving the mark for the next writer.
    private func release() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }
}
