import Foundation
import PermissionModel

/// A question as it was asked, with who asked it and the current version of its state.
@_spi(StorageEngine) public struct QuestionDefinition {
    public var question: PermissionQuestion
    public var row: QuestionRow

    public init(question: PermissionQuestion, row: QuestionRow) {
        self.question = question
        self.row = row
    }
}

/// What the rules read and write. The ledger implements it over an LMDB write transaction;
/// a rebuild implements it in memory, so both derive projections with the very same code.
///
/// Open to other storage engines through `@_spi(StorageEngine) import PermissionLedger`: the benchmark
/// suite (`Tools/Benchmarks`) runs these very rules over SQLite, so that only the storage differs. Not
/// part of the public API: it may change with any release.
@_spi(StorageEngine) public protocol ProjectionStore: AnyObject {
    func seq(ofEventID id: String) throws -> UInt64?
    func storedEvent(_ seq: UInt64) throws -> PermissionEvent
    func question(_ id: UUID) throws -> QuestionDefinition?
    /// The seq of the latest version of a question's row.
    func seq(ofLatestQuestionVersion id: UUID) throws -> UInt64?
    func updateQuestion(_ id: UUID, row: QuestionRow, seq: UInt64) throws
    func handle(subject: String, _ handle: CommunicationHandle) throws -> HandleRow?
    func putHandle(subject: String, _ row: HandleRow, seq: UInt64) throws
    func putPermission(subject: String, _ row: PermissionRow, seq: UInt64) throws
    func isKnownSubject(_ subject: String) throws -> Bool
    /// The record of `event`, appended at `seq` and recorded at `recordedAt`, as stored (after the chain hash),
    /// and the part of it the chain hash covers: sealed (format 2) when the store has the ledger's keys. The stored
    /// bytes go nowhere but back to the store (``storeEvent(_:seq:record:hash:newSubject:)``): a store that makes them
    /// later (the ledger's, whose second thread seals the record's box) gives them empty.
    func record(_ event: PermissionEvent, recordedAt: Timestamp, seq: UInt64) throws -> (stored: [UInt8], chained: [UInt8])
    /// Stores the event itself and the indexes over it (ids, `recordedAt`, subjects, questions by time).
    func storeEvent(_ event: PermissionEvent, seq: UInt64, record: [UInt8], hash: ChainHash, newSubject: Bool) throws
    /// Erases the personal fields of `subject`'s events that `erasure`, appended at `seq` and recorded at
    /// `recordedAt`, covers: destroys their keys when the transaction commits. Changes no projection.
    func erase(subject: String, _ erasure: Erasure, seq: UInt64, recordedAt: Timestamp) throws
    /// Called once all of an event's projections are written: records what the event changed of each
    /// subject's handle set (``HandleSetRecord``).
    func endEvent(seq: UInt64) throws
}

extension ProjectionStore {
    /// Nothing to destroy: a store that keeps no keys holds no sealed field (a rebuild replays an erasure's
    /// record, whose keys were destroyed when it was appended).
    public func erase(subject: String, _ erasure: Erasure, seq: UInt64, recordedAt: Timestamp) throws {}

    /// A version 1 record, unsealed: for stores that keep no keys (in memory, or a benchmark's peer).
    public func record(_ event: PermissionEvent, recordedAt: Timestamp, seq: UInt64) throws -> (stored: [UInt8], chained: [UInt8]) {
        let record = EventRecord.encode(event, recordedAt: recordedAt)
        return (record, record)
    }
}
