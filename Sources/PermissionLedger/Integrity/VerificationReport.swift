internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// What `verify` found.
public struct VerificationReport: Hashable, Sendable {
    /// How many events the log holds.
    public var events: UInt64
    /// The head's chain hash as recomputed.
    public var head: ChainHash
    /// The first damaged `seq`, if any: the event whose bytes are wrong, the event a damaged projection row
    /// belongs to, or the event the check was at when it found damage in LMDB's own records (1 when the
    /// damage is not tied to one event).
    public var damagedSeq: UInt64?
    /// What is wrong, in plain words, or `nil` when the ledger is intact.
    public var problem: String?
    /// What was being checked when the damage was found.
    var stage: VerificationStage?

    /// Whether nothing is wrong: the chain, every record and every projection check out.
    public var isIntact: Bool { problem == nil }
}

/// What a running verification is checking; with a `seq`, where it is (see ``VerificationProgress``).
public enum VerificationStage: Hashable, Sendable, CustomStringConvertible {
    /// The data file's meta pages and LMDB's records of the ledger's tables, before any event is read.
    case dataFile
    /// The log: each event's chain hash, record and rules, in `seq` order.
    case log
    /// A derived table, compared row by row with a rebuild from the log.
    case table(StorageTable)
    /// LMDB's free list, after everything else.
    case freeList

    /// The stage in plain words, such as "the log" or "the handles table".
    public var description: String {
        switch self {
        case .dataFile: "the data file's meta pages and table records"
        case .log: "the log"
        case .table(let table): "the \(table.rawValue) table"
        case .freeList: "LMDB's free list"
        }
    }
}

/// Called as a verification goes, with what it checks and the `seq` it is at: in ``VerificationStage/log``
/// the event being checked, in a table the event of the row just read, else 1. Called for every event and
/// every row, so it should be cheap; a process that runs the check for another (see `permission-ledger
/// verify`) records the position where that other process can read it should the check crash.
public typealias VerificationProgress = (VerificationStage, UInt64) -> Void
