import Foundation
internal import LMDB
import PermissionModel

/// The named LMDB databases of a ledger, each named as on disk (see `docs/STORAGE.md`): the names are part of
/// the storage format, and `allCases` is the order in which a ledger opens them.
public enum StorageTable: String, CaseIterable, Hashable, Sendable {
    /// `format` → the storage format version.
    case meta
    /// seq (8 bytes, big-endian) → chain hash (32 bytes) followed by the event record.
    case events
    /// event id (UTF-8) → seq.
    case eventIDs
    /// recordedAt (8 bytes, sortable) + seq → empty: resolves an as-of time to a seq.
    case byRecordedAt
    /// subject (UTF-8) → seq of its first event.
    case subjects
    /// askedAt (8 bytes, sortable) + question id (16 bytes) → seq of the question.asked event.
    case questionsByAsked
    /// question id + seq → `QuestionRow`.
    case questions
    /// subject NUL kind value NUL + seq → `HandleRow`.
    case handles
    /// subject NUL permission NUL + seq → `PermissionRow`.
    case permissions
    /// subject NUL + seq → empty: a subject's events, for history by subject.
    case subjectEvents
    /// kind value NUL (as in `handles`) + subject → seq of the first row: which subjects a handle concerns.
    case handleSubjects
    /// subject NUL + seq → `HandleSetRecord`: the rows of the subject's handles an event changed, or the
    /// subject's whole handle set after it, for its handle set as of any point.
    case handleSets
    /// expiresAt (8 bytes, sortable) + question id (16 bytes) → empty: the pending questions that have an
    /// `expiresAt`, soonest first, for expiry sweeps. Not versioned: it describes the head only.
    case expiries
    /// subject NUL kind [day] → the slot of a data key in the key store (`KeyRing`). Not derived: it names keys,
    /// which the log cannot give back.
    case keys
    /// subject NUL 0x01 chunk → a sealed chunk of the subject's handle values by token; subject NUL 0x02 token → its
    /// chunk (`HandleDirectory`). Not derived: the log holds the values sealed under keys a rebuild does not use.
    case handleValues
    /// seq → the hashes of the Merkle tree's complete subtrees whose last leaf is that event's (`StoredTree`):
    /// the tree over the log (docs/spec/PROOFS.md), for the root of any size and any proof in a few lookups.
    case tree
    /// level (1 byte) ‖ index (8 bytes) → the hash of the tree's complete subtree of `2^level` leaves at that index,
    /// for levels of 6 and more (`StoredTree.upperLevel`): the nodes every proof of a large tree goes through,
    /// together in a table of their own (some 16 MB for 10,000,000 events) rather than one page apart each.
    case treeTop

    /// Whether the table holds state derived from the log: what a rebuild writes again and `verify` compares
    /// with a rebuild (every table but `meta`, `keys`, `handleValues` and the log, `events`).
    public var isDerived: Bool { self != .meta && self != .events && self != .keys && self != .handleValues }

    /// The tables that hold state derived from the log, in the order of ``allCases``.
    static let derived = allCases.filter(\.isDerived)

    /// The names of derived tables that earlier versions of the projections kept and this one does not
    /// (`subjectHandles` in version 2, `handleChanges` and `handleCheckpoints` in versions 3 and 4): a rebuild
    /// deletes them, pages and all, where it finds them.
    static let retiredNames = ["subjectHandles", "handleChanges", "handleCheckpoints"]
}

/// The named databases of a ledger environment, opened: one for each ``StorageTable``, named alike.
struct Tables: Sendable {
    let meta: Database
    let events: Database
    let eventIDs: Database
    let byRecordedAt: Database
    let subjects: Database
    let questionsByAsked: Database
    let questions: Database
    let handles: Database
    let permissions: Database
    let subjectEvents: Database
    let handleSubjects: Database
    let handleSets: Database
    let expiries: Database
    /// `nil` in a ledger of format 1, which has no keys.
    let keys: Database?
    /// `nil` in a ledger of format 1, and in one of format 2 made before it kept handle values and open read-only:
    /// their values are then read from the events that named them.
    let handleValues: Database?
    /// Whether this open made the `handleValues` table in a ledger that had none: it is then filled from the log.
    let madeHandleValues: Bool
    /// `nil` in a ledger of format 1, and in one made before it kept the Merkle tree and open read-only (its
    /// projections, older, are rebuilt, tree and all, when it is opened for writing).
    let tree: Database?
    /// Present when `tree` is.
    let treeTop: Database?
    /// The upper levels of the tree that this open ledger's readers have read.
    let treeNodes = TreeNodeCache()
    /// The ledger's keys, for a ledger whose personal fields are sealed (format 2); `nil` for format 1, whose
    /// records hold them as they are, and for a ledger opened without its key (`verify`).
    var keyRing: KeyRing?
    /// Where the ledger's key was looked for: what an error says when a personal field needs it.
    var keyLocation = LedgerKey.Location(path: LedgerKey.defaultFileName, origin: .ledgerDirectory)
    /// The key store's path, when the ledger was opened without a key ring because its key store is missing
    /// while its key is there.
    var missingKeyStore: String?

    /// What a reader that needs a key throws when the ledger was opened without its key ring: the key store
    /// missing is damage, named as such; otherwise the key was not found where it was looked for.
    var keyUnavailable: LedgerError {
        guard let missingKeyStore else { return .missingKey(keyLocation) }
        return LedgerError(.damaged, "key store \(missingKeyStore) is missing, and the ledger's key is there: personal fields cannot be read; restore the key store from a backup")
    }

    init(environment: Environment, create: Bool, keyRing: KeyRing? = nil) throws {
        self.keyRing = keyRing
        func open(_ table: StorageTable) throws -> Database { try environment.openDatabase(table.rawValue, create: create) }
        // In the order of StorageTable.allCases.
        meta = try open(.meta)
        events = try open(.events)
        eventIDs = try open(.eventIDs)
        byRecordedAt = try open(.byRecordedAt)
        subjects = try open(.subjects)
        questionsByAsked = try open(.questionsByAsked)
        questions = try open(.questions)
        handles = try open(.handles)
        permissions = try open(.permissions)
        subjectEvents = try open(.subjectEvents)
        handleSubjects = try open(.handleSubjects)
        handleSets = try open(.handleSets)
        expiries = try open(.expiries)
        do {
            keys = try open(.keys)
        } catch let error as LMDBError where error == .notFound && !create {
            keys = nil
        }
        do {
            handleValues = try environment.openDatabase(StorageTable.handleValues.rawValue, create: false)
            madeHandleValues = false
        } catch let error as LMDBError where error == .notFound {
            handleValues = create ? try open(.handleValues) : nil
            madeHandleValues = create
        }
        let opened: (tree: Database, top: Database)?
        do {
            opened = (try open(.tree), try open(.treeTop))
        } catch let error as LMDBError where error == .notFound && !create {
            opened = nil
        }
        tree = opened?.tree
        treeTop = opened?.top
    }

    /// The database of `table`.
    subscript(table: StorageTable) -> Database {
        switch table {
        case .meta: meta
        case .events: events
        case .eventIDs: eventIDs
        case .byRecordedAt: byRecordedAt
        case .subjects: subjects
        case .questionsByAsked: questionsByAsked
        case .questions: questions
        case .handles: handles
        case .permissions: permissions
        case .subjectEvents: subjectEvents
        case .handleSubjects: handleSubjects
        case .handleSets: handleSets
        case .expiries: expiries
        case .keys: keys!
        case .handleValues: handleValues!
        case .tree: tree!
        case .treeTop: treeTop!
        }
    }

    /// The database of `table`, `nil` when the ledger has none (``keys`` in format 1, ``handleValues`` in a
    /// ledger made before it kept handle values).
    func opened(_ table: StorageTable) -> Database? {
        switch table {
        case .keys: keys
        case .handleValues: handleValues
        case .tree: tree
        case .treeTop: treeTop
        default: self[table]
        }
    }

    func database(_ table: VersionedTable) -> Database {
        switch table {
        case .questions: questions
        case .handles: handles
        case .permissions: permissions
        }
    }

    /// Every table holding derived state, with its database: what `verify` compares against a rebuild.
    var derived: [(StorageTable, Database)] { StorageTable.derived.compactMap { table in opened(table).map { (table, $0) } } }
}
