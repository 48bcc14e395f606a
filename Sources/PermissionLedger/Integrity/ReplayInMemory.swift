internal import Crypto
import Foundation
internal import LMDB
import PermissionModel

/// What an in-memory replay of the log did.
public struct ReplaySummary: Hashable, Sendable {
    /// How many events were replayed.
    public var events: UInt64
    /// How many questions the replay found.
    public var questions: Int
    /// The chain hash after the last event replayed.
    public var head: ChainHash
}

extension Ledger {
    /// Replays the whole log into memory (current state only) through the same rules as appends.
    /// Used to measure replay and to check determinism.
    public func replayInMemory() throws -> ReplaySummary {
        try read { view in
            let store = MemoryStore(keepsRows: false)
            var projector = Projector(store: store, head: .empty)
            try StoredLog.forEach(view.txn, tables) { event, record, hash in
                _ = try projector.apply(event, clock: { event.recordedAt! }, storedRecord: record, storedHash: hash)
            }
            return ReplaySummary(events: projector.head.seq, questions: store.questionCount, head: projector.head.hash)
        }
    }
}
