import Foundation
internal import LMDB

extension Ledger {
    /// Writes a consistent, compacted copy of the ledger into the new directory `path`, verifies the copy, and
    /// returns the copy's head: what `permission-ledger backup --out DIR` runs (docs/spec/CLI.md).
    ///
    /// The copy is LMDB's copy with compaction: one read transaction's snapshot of the ledger, without the pages
    /// LMDB has freed. Other processes, and this one, read and append meanwhile; the copy holds the events up to
    /// the last commit before it began, and its head is that snapshot's (at least the head when the call began).
    /// Nothing is written to the ledger itself, so a ledger opened read-only can be backed up.
    ///
    /// The copy is itself a ledger: to restore it, open it (or give it as `--ledger`). It is written into a
    /// temporary directory beside `path` (`path.partial-` and a random suffix), mode 0700 with its data file
    /// 0600, flushed to disk, opened read-only and checked as ``verify(progress:)`` checks, and only then renamed to
    /// `path`: `path` never holds a partial copy. On any failure the temporary directory is removed.
    ///
    /// ```swift
    /// let ledger = try await Ledger.open(path: "family.ledger", options: .init(readOnly: true))
    /// let head = try await ledger.backup(to: "family.ledger.backup")
    /// print("backup: \(head.seq) events, head \(head.hash)")
    /// ```
    ///
    /// - Parameter path: the backup's directory, which must not exist; its parent must.
    /// - Returns: the head of the copy's log.
    /// - Throws: ``LedgerError``: `.storage` when `path` already exists or the copy cannot be written (a full
    ///   disk, an I/O error, a file size limit); `.damaged` when the copy fails verification; `.locked`, `.damaged`
    ///   or `.storage` naming the ledger when the ledger cannot be read.
    ///
    /// It copies and verifies the whole ledger: it runs on a thread of its own, not on the cooperative pool.
    @discardableResult
    public func backup(to path: String) async throws -> LogHead {
        try await offPool("ledger-backup") { [self] cancellation in try backup(to: path, cancellation: cancellation) }
    }

    /// ``backup(to:)`` on the calling thread, for the tool and tests.
    @discardableResult
    package func backup(to path: String) throws(LedgerError) -> LogHead {
        do {
            return try backup(to: path, cancellation: nil)
        } catch {
            throw error as? LedgerError ?? LedgerError.storage(error, path: self.path)
        }
    }

    /// ``backup(to:)``, stopping with `CancellationError` once `cancellation` says its task was cancelled: before
    /// the copy, after it, and as the copy is verified. What it wrote is then removed. (LMDB's copy itself runs to
    /// its end.)
    func backup(to path: String, cancellation: Cancellation?) throws -> LogHead {
        let target = Self.withoutTrailingSlashes(path)
        var status = stat()
        guard lstat(target, &status) != 0 else {
            throw LedgerError(.storage, "\(target): already exists; a backup is written into a new directory")
        }
        let before: LogHead
        do {
            before = try head()
        } catch {
            throw LedgerError.storage(error, path: self.path)
        }
        let temporary = target + ".partial-" + String(UInt64.random(in: .min ... .max), radix: 16)
        guard mkdir(temporary, 0o700) == 0 else {
            throw LedgerError(.storage, "\(temporary): cannot create the backup's directory: \(String(cString: strerror(errno)))")
        }
        do {
            chmod(temporary, 0o700)
            try cancellation?.check()
            try copy(to: temporary, for: target)
            try cancellation?.check()
            let head = try Self.verifiedHead(ofCopy: temporary, target: target, atLeast: before, cancellation: cancellation)
            try Self.flushDirectory(temporary, for: target)
            let renamed = Self.renameWithoutReplacing(temporary, target)
            guard renamed == 0 else {
                if renamed == EEXIST || renamed == ENOTEMPTY {
                    throw LedgerError(.storage, "\(target): already exists; a backup is written into a new directory")
                }
                throw LedgerError(.storage, "\(target): cannot rename the verified backup into place: \(String(cString: strerror(renamed)))")
            }
            // Renamed: from here on the backup is in place, whatever the flush of its parent says.
            do {
                try Self.flushDirectory(Self.parent(of: target), for: target)
            } catch {
                try? FileManager.default.removeItem(atPath: target)
                throw error
            }
            return head
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }

    /// LMDB's compacted copy of the environment into `directory`, its errors said as a backup's.
    /// Copies the environment, then the ledger's key store (holding its lock, so that the copy is one state of
    /// it, with every key the environment's snapshot refers to), and the ledger's key when it lives in the
    /// ledger's directory. A key kept elsewhere is not copied: the backup needs it as the ledger does.
    private func copy(to directory: String, for target: String) throws(LedgerError) {
        guard let keyRing = tables.keyRing else { return try copyWithoutKey(to: directory, for: target) }
        try keyRing.store.locked(exclusive: false) { () throws(LedgerError) in
            try copyEnvironment(to: directory, for: target)
            try Self.copyFile(keyRing.store.path, to: directory + "/" + KeyStore.fileName, for: target)
        }
        let location = keyRing.ledgerKey.location
        if location.origin == .ledgerDirectory {
            try Self.copyFile(location.path, to: directory + "/" + LedgerKey.defaultFileName, for: target)
        }
    }

    /// ``copy(to:for:)`` of a ledger opened without its key: the environment and, when the ledger has one, its key
    /// store all the same, under the store's lock, so that the backup holds every key its data names. The key
    /// file is not copied: it is not at hand.
    private func copyWithoutKey(to directory: String, for target: String) throws(LedgerError) {
        let store = path + "/" + KeyStore.fileName
        let fd: Int32?
        do throws(OwnerOnlyFile.Problem) {
            fd = try OwnerOnlyFile.openExisting(store, writable: false)
        } catch {
            throw LedgerError(.damaged, "key store \(error.description); the backup was not written")
        }
        guard let fd else { return try copyEnvironment(to: directory, for: target) }
        defer { closeDescriptor(fd) }
        try KeyStore.locked(fd, path: store, exclusive: false) { () throws(LedgerError) in
            try copyEnvironment(to: directory, for: target)
            try Self.copyFile(store, to: directory + "/" + KeyStore.fileName, for: target)
        }
    }

    /// Copies the key file at `source` into a new file of mode 0600 at `destination`, flushed, a mebibyte at a
    /// time: a key store grows with the ledger, and one planted huge must not be held in memory.
    private static func copyFile(_ source: String, to destination: String, for target: String) throws(LedgerError) {
        do throws(OwnerOnlyFile.Problem) {
            guard let fd = try OwnerOnlyFile.openExisting(source, writable: false) else {
                throw OwnerOnlyFile.Problem(path: source, reason: "is missing")
            }
            defer { closeDescriptor(fd) }
            let created = try OwnerOnlyFile.create(destination) { copy in
                switch WholeFile.copy(from: fd, to: copy) {
                case nil: nil
                case .unreadable(let code): OwnerOnlyFile.Problem(path: source, reason: "cannot be read: \(String(cString: strerror(code)))")
                case .unwritable(let code): OwnerOnlyFile.Problem(path: destination, reason: "cannot be written: \(String(cString: strerror(code)))")
                }
            }
            guard created else { throw OwnerOnlyFile.Problem(path: destination, reason: "already exists") }
        } catch {
            // What the ledger's own file holds is damage; what the backup's cannot take, a failed output.
            throw LedgerError(error.path == source ? .damaged : .storage, "\(target): cannot copy a key file: \(error.description); the backup was not written")
        }
    }

    private func copyEnvironment(to directory: String, for target: String) throws(LedgerError) {
        do {
            try environment.copy(to: directory, compacting: true, fileMode: 0o600)
        } catch {
            switch error {
            case .noSpace:
                throw LedgerError(.storage, "\(target): no space left on the device; the backup was not written")
            case .quotaExceeded:
                throw LedgerError(.storage, "\(target): the disk quota is used up; the backup was not written")
            case .fileTooLarge:
                throw LedgerError(.storage, "\(target): the copy reached this process's file size limit (ulimit -f); the backup was not written")
            case .ioError:
                throw LedgerError(.storage, "\(target): an input/output error (\(error)) while writing the copy; the backup was not written")
            case .accessDenied, .fileExists, .noSuchFile:
                throw LedgerError(.storage, "\(target): cannot write the copy (\(error)); the backup was not written")
            case .readersFull:
                throw LedgerError(.locked, "\(self.path): no reader slot is free for the copy's read transaction (\(error))")
            default:
                // What LMDB met reading the ledger.
                throw LedgerError.storage(error, path: self.path)
            }
        }
    }

    /// Opens the copy read-only, verifies it as `verify` does, and returns its head; removes the lock file the
    /// open made, so that the backup holds its data file alone.
    private static func verifiedHead(ofCopy directory: String, target: String, atLeast before: LogHead, cancellation: Cancellation?) throws -> LogHead {
        let head: LogHead
        let report: VerificationReport
        do {
            let copy = try Ledger(path: directory, options: .init(readOnly: true))
            report = try copy.verify(progress: nil, cancellation: cancellation)
            head = try copy.head()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw LedgerError.storage(error, path: target)
        }
        if unlink(directory + "/lock.mdb") != 0 && errno != ENOENT {
            throw LedgerError(.storage, "\(target): cannot remove the copy's lock file: \(String(cString: strerror(errno)))")
        }
        if let problem = report.problem {
            throw LedgerError(.damaged, "the backup failed verification: \(problem)", seq: report.damagedSeq ?? 1)
        }
        guard report.events == head.seq, report.head == head.hash, head.seq >= before.seq else {
            throw LedgerError(.damaged, """
                the backup does not match the ledger: it holds \(head.seq) events (verified: \(report.events)), \
                the ledger held \(before.seq) when the backup began
                """)
        }
        return head
    }

    /// `path` without the slashes it ends in (but `/` itself), so that a sibling's name is beside it.
    private static func withoutTrailingSlashes(_ path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        return String(path)
    }

    /// The directory that holds `path` (`.` for a bare name).
    private static func parent(of path: String) -> String {
        directory(holding: path)
    }

    /// Flushes a directory's entries to disk, so that a file created or renamed in it stays after a crash.
    private static func flushDirectory(_ directory: String, for target: String) throws(LedgerError) {
        var descriptor: Int32
        repeat { descriptor = openDescriptor(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else {
            throw LedgerError(.storage, "\(target): cannot open \(directory) to flush it: \(String(cString: strerror(errno)))")
        }
        defer { closeDescriptor(descriptor) }
        var status: Int32
        repeat { status = fsync(descriptor) } while status < 0 && errno == EINTR
        // Some file systems cannot flush a directory (EINVAL): their entries are then as durable as they get.
        guard status == 0 || errno == EINVAL else {
            throw LedgerError(.storage, "\(target): cannot flush \(directory) to disk: \(String(cString: strerror(errno)))")
        }
    }

    /// Renames `source` to `destination` unless something exists there, and returns 0 or the `errno` value
    /// (`EEXIST` when `destination` exists). Atomic where the system can tell rename not to replace
    /// (`renameat2` with `RENAME_NOREPLACE` on Linux, `renamex_np` with `RENAME_EXCL` on Apple's systems); else
    /// a plain `rename` after a check, which an empty directory created in between would lose to.
    private static func renameWithoutReplacing(_ source: String, _ destination: String) -> Int32 {
        #if canImport(Darwin)
        if renamex_np(source, destination, UInt32(RENAME_EXCL)) == 0 { return 0 }
        guard errno == ENOTSUP || errno == EINVAL else { return errno }
        #else
        // Swift's Glibc module does not declare renameat2 (glibc 2.28 and later have it).
        typealias Renameat2 = @convention(c) (Int32, UnsafePointer<CChar>?, Int32, UnsafePointer<CChar>?, UInt32) -> Int32
        if let symbol = dlsym(nil, "renameat2") {
            let renameat2 = unsafeBitCast(symbol, to: Renameat2.self)
            let noReplace: UInt32 = 1 // RENAME_NOREPLACE
            if renameat2(AT_FDCWD, source, AT_FDCWD, destination, noReplace) == 0 { return 0 }
            guard errno == EINVAL || errno == ENOSYS else { return errno }
        }
        #endif
        var status = stat()
        guard lstat(destination, &status) != 0 else { return EEXIST }
        return rename(source, destination) == 0 ? 0 : errno
    }
}
