import Foundation
internal import LMDB

/// What is checked of the data file when a ledger opens, before LMDB reads a page of it through its memory
/// map: LMDB keeps no checksums and trusts its pages, so a file cut short makes it fault (`SIGBUS`), and a
/// damaged page can make it fault or fail an assertion, or make a writer append to a damaged log.
///
/// - Every open of an existing data file, before LMDB opens it: the meta pages
///   (``/LMDB/MetaPages/problem``): the file holds every page in use (an empty or cut-short file fails),
///   a plausible page size, roots within the pages in use. Cheap: two reads of 152 bytes.
/// - A writable open, also: the head event's chain hash, recomputed from the event before it
///   (docs/STORAGE.md, "The chain hash"), so that nothing is appended to a log whose end is damaged.
/// - With ``Ledger/Options/checksPages`` (`permission-ledger import` and `rebuild`): a walk of every page
///   of the data file's trees (``/LMDB/PageWalk``), read with `pread`, before anything else is read.
///   O(pages in use).
/// - A read-only open of a data file of at most ``pageWalkLimit`` bytes: the same walk. A reader otherwise
///   trusts the pages it reads, as LMDB does, and a damaged page of a table can read as a table without the
///   rows it held; on a small file the walk costs milliseconds.
extension Ledger {
    /// The checks before LMDB opens the data file at `path` (when there is one): the meta pages; for a
    /// writer with a writable map (a rebuild), also the writer's checks, through a read-only environment,
    /// since LMDB sizes the file to a writable map as it opens it and a refusal must leave the file as it was.
    ///
    /// - Throws: ``LedgerError`` of kind `.damaged` naming the data file (and the `seq` when known), or
    ///   `.notALedger` when the data file is no LMDB file at all.
    static func checkBeforeOpening(path: String, options: Options) throws(LedgerError) {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        guard FileManager.default.fileExists(atPath: dataFile) else { return }
        do {
            try checkMetaPages(path: path)
        } catch where error.kind == .damaged {
            throw LedgerError(.damaged, "\(dataFile): \(error.message)\(restore)")
        }
        guard !options.readOnly, options.writableMap else { return }
        let environment: Environment
        do {
            environment = try Environment(path: path, options: .init(maxDatabases: StorageTable.allCases.count + 2, readOnly: true))
        } catch {
            throw LedgerError.storage(error, path: path)
        }
        try checkBeforeWriting(environment, dataFile: dataFile, options: options)
        // The keys too, when there is a key: a rebuild refused for its key store or its key (another ledger's, a
        // damaged file) leaves the data file as it was. What opened them is let go.
        do {
            _ = try keyRing(path: path, options: options, newKey: nil, use: .direct, environment: environment)
        } catch let error as LedgerError {
            throw error
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }

    /// The checks once LMDB has opened the environment, before anything else reads it: a writer's
    /// (unless ``checkBeforeOpening(path:options:)`` ran them).
    static func checkWhenOpened(_ environment: Environment, path: String, options: Options) throws(LedgerError) {
        let dataFile = (path as NSString).appendingPathComponent("data.mdb")
        if options.readOnly {
            if options.checksPages || size(of: dataFile) <= pageWalkLimit { try checkPages(environment, dataFile: dataFile) }
            return
        }
        guard !options.writableMap else { return }
        try checkBeforeWriting(environment, dataFile: dataFile, options: options)
    }

    /// The size of the file at `path` in bytes, or `Int.max` when it cannot be read.
    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? Int.max
    }

    /// The largest data file a read-only open walks page by page (``checkWhenOpened(_:path:options:)``): 32 MiB,
    /// 8,192 pages of 4 KiB, read in some 10 ms.
    static let pageWalkLimit = 32 << 20

    private static func checkBeforeWriting(_ environment: Environment, dataFile: String, options: Options) throws(LedgerError) {
        if options.checksPages { try checkPages(environment, dataFile: dataFile) }
        try checkHead(environment, dataFile: dataFile)
    }

    /// What to do about a damaged data file, after its problem.
    private static let restore = "; restore the ledger from a backup"

    /// Walks the pages of the commit a read transaction shows, so that no writer reuses them meanwhile.
    ///
    /// A writer in another process may commit twice while the walk reads the meta pages, which hold no more
    /// than the two latest commits: that walk is taken again in a new read transaction. Damage is reported when
    /// two walks in a row find it, so that a meta page read while a writer rewrote it is not taken for damage.
    /// After ``pageWalkAttempts`` walks that a writer outran, the check is left out.
    private static func checkPages(_ environment: Environment, dataFile: String) throws(LedgerError) {
        var damagedBefore = false
        for _ in 0..<pageWalkAttempts {
            let found: PageCheck
            do {
                found = try environment.read { txn in try pageCheck(txn, dataFile: dataFile) }
            } catch {
                throw LedgerError.storage(error, path: directory(holding: dataFile))
            }
            switch found {
            case .consistent: return
            case .commitReplaced: damagedBefore = false
            case .damaged(let seq, let problem):
                if damagedBefore { throw LedgerError(.damaged, "\(dataFile): the data file is damaged: \(problem)\(restore)", seq: seq) }
                damagedBefore = true
            }
        }
    }

    /// How many times ``checkPages(_:dataFile:)`` walks a data file at most.
    static let pageWalkAttempts = 8

    /// What a walk of the pages of a read transaction's commit found.
    enum PageCheck {
        case consistent
        /// A later commit rewrote the commit's meta page before the walk read it: nothing was walked.
        case commitReplaced
        /// The damage, in plain words, and the `seq` near it when it is in the log's tree.
        case damaged(seq: UInt64?, problem: String)
    }

    /// Walks the pages of `txn`'s commit (``/LMDB/PageWalk``).
    static func pageCheck(_ txn: ReadTransaction, dataFile: String) throws -> PageCheck {
        switch try PageWalk.check(dataFile: dataFile, transactionID: try txn.transactionID) {
        case .consistent: return .consistent
        case .commitReplaced: return .commitReplaced
        case .damaged(let damage):
            var seq: UInt64?
            if damage.database == StorageTable.events.rawValue, let key = damage.nearKey, key.count == 8 {
                seq = key.withUnsafeBytes { Keys.decodeSeq($0) }
            }
            return .damaged(seq: seq, problem: damage.message)
        }
    }

    /// Checks that the head event's stored chain hash is SHA-256 of the previous event's and its own record.
    private static func checkHead(_ environment: Environment, dataFile: String) throws(LedgerError) {
        let path = directory(holding: dataFile)
        let fileSize = size(of: dataFile)
        do {
            let events: Database
            do {
                events = try environment.openDatabase(StorageTable.events.rawValue, create: false)
            } catch let error as LMDBError where error == .notFound {
                return // A new ledger, or not a ledger: opening the tables says which.
            }
            let problem = try environment.read { txn -> (UInt64?, String)? in
                let cursor = try txn.cursor(events)
                guard let head = try cursor.last() else { return nil }
                guard head.key.count == 8 else { return (nil, "the log's last key has \(head.key.count) bytes, not a seq") }
                let seq = Keys.decodeSeq(head.key)
                guard head.value.count > 32, head.value.count <= fileSize else {
                    return (seq, "the head event's stored bytes (\(head.value.count)) cannot be an event")
                }
                let stored = ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: head.value[0..<32])))
                let record = [UInt8](copying: UnsafeRawBufferPointer(rebasing: head.value[32...]))
                var previous = ChainHash.genesis
                if seq > 1 {
                    guard let before = try cursor.previous(), before.key.count == 8, Keys.decodeSeq(before.key) == seq - 1,
                        before.value.count > 32
                    else { return (seq, "the event before the head is missing from the log") }
                    previous = ChainHash(unchecked: [UInt8](copying: UnsafeRawBufferPointer(rebasing: before.value[0..<32])))
                }
                guard (try? storedChainHash(record, previous: previous)) == stored else {
                    return (seq, "the head event's chain hash does not match its bytes")
                }
                return nil
            }
            if let (seq, why) = problem {
                throw LedgerError(.damaged, "\(dataFile): the data file is damaged: \(why)\(restore)", seq: seq)
            }
        } catch {
            throw LedgerError.storage(error, path: path)
        }
    }
}
