internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

extension Ledger {
    /// Recomputes the hash chain over every stored event, checks each record decodes and re-encodes to the
    /// same bytes, then rebuilds every projection from the log alone and compares it, row by row, with the
    /// kept projections.
    ///
    /// Also checked, since damage there changes what queries or later writes see: the data file's two meta
    /// pages (read from the file, see ``/LMDB/MetaPages``), which LMDB would otherwise silently fall back from
    /// to the previous commit; that every key of the log and of every table is found again by a lookup (a
    /// damaged branch page can hide rows from lookups while a scan still returns them); LMDB's records of
    /// each table (flags, number of entries); the meta table; and LMDB's free list.
    ///
    /// Its cost grows with the log (about 36 µs per event): it runs on a thread of its own, not on the
    /// cooperative pool, and stops with `CancellationError` soon after its task is cancelled.
    ///
    /// Damage that makes LMDB read outside the data file can crash the process; to check a file that may be
    /// damaged, run ``verify(path:progress:)`` in a child process, as `permission-ledger verify` does.
    ///
    /// - Parameter progress: called, on the verifying thread, with the stage and `seq` the check is at
    ///   (see ``VerificationProgress``).
    /// - Returns: the report; damage found is in it, not thrown.
    /// - Throws: ``LedgerError`` when the ledger cannot be read at all: `.damaged` when the damage is found
    ///   before the log could be read (the meta pages, say), `.notALedger` when its meta table says it was
    ///   written by another version of PermissionLedger and its tables bear that out; `.closed` after
    ///   ``close()``; `CancellationError` when the task is cancelled.
    public func verify(progress: (@Sendable (VerificationStage, UInt64) -> Void)? = nil) async throws -> VerificationReport {
        try await offPool("ledger-verify") { [self] cancellation in
            try verify(progress: progress, cancellation: cancellation)
        }
    }

    /// ``verify(progress:)`` on the calling thread, for the tool and tests.
    package func verify(progress: VerificationProgress? = nil) throws -> VerificationReport {
        try verify(progress: progress, cancellation: nil)
    }

    func verify(progress: VerificationProgress?, cancellation: Cancellation?) throws -> VerificationReport {
        try Self.checkMetaPages(path: path)
        do {
            return try Self.verify(environment: environment, tables: tables, path: path, progress: progress, cancellation: cancellation)
        } catch let cancelled as CancellationError {
            throw cancelled
        } catch {
            throw Self.verificationError(error, path: path)
        }
    }

    /// An error met while verifying, as a ``LedgerError``; damage not tied to an event is at seq 1.
    private static func verificationError(_ error: any Error, path: String) -> LedgerError {
        var error = LedgerError.storage(error, path: path)
        if error.kind == .damaged && error.seq == nil { error.seq = 1 }
        return error
    }

    /// Opens the ledger at `path` read-only and checks it as ``verify(progress:)`` does, treating whatever
    /// of the data file is inconsistent as damage rather than as a file that is not a ledger.
    ///
    /// A directory whose LMDB environment has none of the ledger's tables is not a ledger; one that has some
    /// of them but not all, whose meta pages are inconsistent, or that LMDB reports as corrupted, is a damaged
    /// ledger. Run it in a child process when the file may be damaged: LMDB itself may crash on a damaged page.
    ///
    /// ```swift
    /// let report = try await Ledger.verify(path: "family.ledger")
    /// if let seq = report.damagedSeq { print("seq \(seq): \(report.problem!)") }
    /// ```
    ///
    /// - Parameters:
    ///   - path: the ledger's directory.
    ///   - progress: called with the stage and `seq` the check is at (see ``VerificationProgress``).
    /// - Returns: the report; damage found in the log or a table is in it, not thrown.
    /// - Throws: ``LedgerError``: `.missing`, `.notALedger`, `.locked` or `.storage` when the ledger cannot be
    ///   opened or read; `.damaged` (with `seq`) when the damage is found before the log could be read.
    public static func verify(path: String, progress: (@Sendable (VerificationStage, UInt64) -> Void)? = nil) async throws -> VerificationReport {
        try await offPool("ledger-verify") { cancellation in
            try verify(path: path, progress: progress, cancellation: cancellation)
        }
    }

    /// ``verify(path:progress:)`` on the calling thread, for the tool and tests.
    package static func verify(path: String, progress: VerificationProgress? = nil) throws(LedgerError) -> VerificationReport {
        do {
            return try verify(path: path, progress: progress, cancellation: nil)
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    private static func verify(path: String, progress: VerificationProgress?, cancellation: Cancellation?) throws -> VerificationReport {
        // The directory and its files are checked before anything in it is read, the meta pages included, while no
        // other open in this process runs (as a ledger opens: ``Environment/whileOpening(_:)``).
        progress?(.dataFile, 1)
        let environment = try Environment.whileOpening { () throws -> Environment in
            try LedgerDirectory.prepare(path: path, readOnly: true)
            try checkMetaPages(path: path)
            do {
                return try Environment(path: path, options: .init(
                    maxDatabases: StorageTable.allCases.count + 2, readOnly: true))
            } catch let error as LMDBError {
                throw openingError(error, path: path)
            }
        }
        _ = try? environment.clearStaleReaders()
        var missing: [StorageTable] = []
        for table in StorageTable.allCases {
            do {
                _ = try environment.openDatabase(table.rawValue, create: false)
            } catch let error as LMDBError where error == .notFound {
                // A ledger of format 1 has no keys; one made before it kept handle values has none.
                if table != .keys && table != .handleValues { missing.append(table) }
            } catch {
                throw LedgerError(.damaged, "LMDB cannot open the \(table.rawValue) table: \(error)", seq: 1)
            }
        }
        guard missing.count < StorageTable.allCases.count - 2 else {
            // Unless the list of tables itself is damaged.
            do {
                _ = try environment.read { try $0.databaseNames() }
            } catch {
                throw LedgerError(.damaged, "LMDB's list of the tables is damaged (\(error)): none of the ledger's tables can be found", seq: 1)
            }
            throw LedgerError(.notALedger, "\(path): not a ledger (its LMDB environment has no ledger tables)")
        }
        guard missing.isEmpty else {
            // Derived tables added by a later version are missing from an older ledger: that is no damage.
            if !missing.contains(.meta), !missing.contains(.events),
                let meta = try? environment.openDatabase(StorageTable.meta.rawValue, create: false),
                let version = try? environment.read({ try $0.get(meta, key: Array("projections".utf8)).map(Array.init) }),
                version.count == 1, (1..<projectionsVersion).contains(version[0]) {
                throw olderIndexes(path: path)
            }
            throw LedgerError(.damaged, "the data file lacks the ledger's \(missing.map(\.rawValue).joined(separator: ", ")) table\(missing.count == 1 ? "" : "s")", seq: 1)
        }
        do {
            let tables = try Tables(environment: environment, create: false)
            return try verify(environment: environment, tables: tables, path: path, progress: progress, cancellation: cancellation)
        } catch let cancelled as CancellationError {
            throw cancelled
        } catch {
            throw verificationError(error, path: path)
        }
    }

    /// Checks the raw meta pages of the ledger's data file; a writer committing meanwhile may be caught in
    /// the middle of writing one, so a problem counts only when it is still there after a few tries.
    static func checkMetaPages(path: String) throws(LedgerError) {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        var problem: String?
        for attempt in 0..<5 {
            if attempt > 0 { usleep(20_000) }
            let pages: MetaPages
            do {
                pages = try MetaPages(dataFile: dataFile)
            } catch {
                throw openingError(error, path: path)
            }
            guard pages.isLMDBFile else {
                throw LedgerError(.notALedger, "\(path): not a ledger (data.mdb is not an LMDB data file)")
            }
            problem = pages.problem ?? rollback(pages)
            if problem == nil { return }
        }
        throw LedgerError(.damaged, "the data file's meta pages are damaged: \(problem!)", seq: 1)
    }

    /// A ledger whose derived tables an older PermissionLedger made, as `Ledger.init` says it.
    static func olderIndexes(path: String) -> LedgerError {
        LedgerError(
            .notALedger, "\(path): the ledger's indexes were made by an older PermissionLedger",
            remedy: .rebuildProjections(path: path))
    }

    /// Whether the commit LMDB would show holds fewer events than the other meta page's: the log only grows,
    /// so the page with the higher transaction ID must be damaged, and LMDB would show an earlier state.
    private static func rollback(_ pages: MetaPages) -> String? {
        guard pages.pages.count == 2, let shown = pages.newest else { return nil }
        let other = pages.pages[0] == shown ? pages.pages[1] : pages.pages[0]
        guard other.transactionID > 0, let shownEvents = pages.entries(ofDatabase: StorageTable.events.rawValue, in: shown),
            let otherEvents = pages.entries(ofDatabase: StorageTable.events.rawValue, in: other), otherEvents > shownEvents
        else { return nil }
        return """
            the commit LMDB would show (transaction \(shown.transactionID), \(shownEvents) events) is older than the one \
            of the other meta page (transaction \(other.transactionID), \(otherEvents) events): a transaction ID is damaged, \
            and the ledger would look rolled back
            """
    }

    /// An error opening the environment of a ledger whose meta pages check out: what the file holds is damage.
    private static func openingError(_ error: LMDBError, path: String) -> LedgerError {
        switch error {
        case .invalid, .versionMismatch, .corrupted, .pageNotFound, .panic, .incompatible:
            LedgerError(.damaged, "LMDB cannot open the data file: \(error)", seq: 1)
        case .noSuchFile: LedgerError(.missing, "\(path): no ledger here (\(error))")
        default: LedgerError.storage(error, path: path)
        }
    }

    /// Verifies in one read transaction, then weighs what the meta table says against what was found.
    private static func verify(
        environment: Environment, tables: Tables, path: String, progress: VerificationProgress?, cancellation: Cancellation?
    ) throws -> VerificationReport {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        let fileSize = size(of: dataFile)
        let report = try environment.read { txn in
            // First, before LMDB follows any page: a page whose header is damaged can send a lookup round in a
            // loop. The walk finds what no read of the tables can: pages no lookup or scan reaches, free pages a
            // tree still uses, counts that do not add up. The commit verified may be replaced by now, by a writer
            // in another process: its pages are then not walked.
            if case .damaged(let seq, let problem) = try pageCheck(txn, dataFile: dataFile) {
                throw LedgerError(.damaged, "the data file's pages are damaged: \(problem)", seq: seq ?? 1)
            }
            let verifier = Verifier(txn: txn, tables: tables, fileSize: fileSize, progress: progress, cancellation: cancellation)
            return try verifier.weigh(try verifier.run(), path: path)
        }
        // The key store, read without a key: a ledger that keeps keys there cannot show its personal fields without
        // it whole (its keys themselves are checked by the readers that open them).
        let keyStore = try keyStoreInUse(environment)
        guard report.isIntact, keyStore.holdsKeys, let problem = KeyStore.problem(directory: path, slotsInUse: keyStore.slots) else {
            return report
        }
        return VerificationReport(events: report.events, head: report.head, damagedSeq: 1, problem: problem)
    }
}
