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
/// writer that finds the mark waits for the lock, and then either finds the ledger made meanwhile or knows that its
/// maker is gone.
final class LedgerCreation {
    /// The mark's name in the ledger's directory.
    static let markerName = "being-made"

    private let path: String
    /// The directory, open and locked while the ledger is made; -1 once let go.
    private var fd: Int32

    /// Locks the directory at `path` for making a ledger there, waiting while another process holds the lock.
    private init(locking path: String) throws(LedgerError) {
        self.path = path
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            // Read access is what listing the directory takes too (``LedgerDirectory/listing(_:)``), and is said so.
            if errno == EACCES { _ = try LedgerDirectory.listing(path) }
            throw LedgerError(.storage, "\(path): cannot be opened to make a ledger in it: \(String(cString: strerror(errno)))")
        }
        var locked: Int32
        repeat { locked = flock(fd, LOCK_EX) } while locked != 0 && errno == EINTR
        guard locked == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw LedgerError(.storage, "\(path): cannot be locked to make a ledger in it: \(reason)")
        }
    }

    deinit { release() }

    /// Whether the directory at `path` holds the mark of a ledger being made, or whose making was cut short.
    static func isMarked(_ path: String) -> Bool {
        var info = stat()
        return lstat(path + "/" + markerName, &info) == 0
    }

    /// What a writable open that makes ledgers does with the directory at `path` that holds no ledger yet (its
    /// `data.mdb` is missing or empty), or the mark of one being made: with the directory locked, it goes on with a
    /// making that was cut short, or starts one in an empty directory. Returns `nil` when another process made
    /// the ledger while this one waited for the lock. Throws what ``LedgerDirectory`` says of a directory that holds
    /// part of a ledger without the mark, or other files. Returns `nil` too for a directory on a file system where
    /// no ledger can live, which opening the environment then refuses with the reason.
    static func begin(path: String) throws(LedgerError) -> LedgerCreation? {
        guard Environment.fileSystemProblem(at: path) == nil else { return nil }
        let creation = try LedgerCreation(locking: path)
        let dataFile = path + "/data.mdb"
        var info = stat()
        let hasData = lstat(dataFile, &info) == 0
        if isMarked(path) {
            // Its maker is gone, since the lock was free: nothing was stored. An empty data file is what LMDB
            // leaves when killed before it wrote the file's first pages; LMDB makes it again.
            if hasData, info.st_size == 0, unlink(dataFile) != 0 {
                throw LedgerError(.storage, "\(dataFile): cannot be removed to make the ledger again: \(String(cString: strerror(errno)))")
            }
            return creation
        }
        if hasData {
            // Made by another process while this one waited; an empty data file is refused as lost data.
            if info.st_size == 0 { throw LedgerDirectory.emptyDataFile(dataFile) }
            return nil
        }
        let contents = try LedgerDirectory.listing(path)
        if contents.contains("lock.mdb") { throw LedgerDirectory.lockFileAlone(path) }
        if !contents.isEmpty {
            throw LedgerError(.notALedger, "\(path): not a ledger (the directory holds other files and no data.mdb)")
        }
        try creation.mark()
        return creation
    }

    /// Makes the mark, and flushes the directory, so that it is there before any file of the ledger.
    private func mark() throws(LedgerError) {
        let marker = path + "/" + Self.markerName
        let made = open(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard made >= 0 else {
            throw LedgerError(.storage, "\(marker): cannot be created: \(String(cString: strerror(errno)))")
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
            throw LedgerError(.storage, "\(marker): cannot be removed: \(String(cString: strerror(errno)))")
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
