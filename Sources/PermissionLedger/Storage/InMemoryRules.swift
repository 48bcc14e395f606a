import Foundation
internal import LMDB
import PermissionModel

/// The acceptance rules applied to offered events in memory, with no storage: what an append does besides
/// writing (the rules, the record's encoding, the chain hash), with every accepted event's record kept in a
/// dictionary so that a duplicate is told from a reused id. The benchmark suite measures it as a ceiling for
/// the engines that run these very rules: the ledger, and its SQLite twin.
@_spi(StorageEngine) public struct InMemoryRules {
    private var projector = Projector(store: MemoryStore(keepsRows: false, keepsEvents: true), head: .empty)
    private let clock: () -> Timestamp

    /// - Parameter clock: assigns `recordedAt` to events that have none, as ``Ledger/Options/clock`` does.
    public init(clock: @escaping () -> Timestamp = { Timestamp(Date()) }) {
        self.clock = clock
    }

    /// The head after the events accepted so far.
    public var head: LogHead { projector.head }

    /// Offers `events` in order, as one batch of ``Ledger/appendSynchronously(_:)`` would, and returns how
    /// many were appended (the others were duplicates). Throws the first rejection; the events before it stay
    /// applied.
    public mutating func apply(_ events: [PermissionEvent]) throws -> Int {
        var appended = 0
        for event in events {
            if case .appended = try projector.apply(event, clock: clock) { appended += 1 }
        }
        return appended
    }
}
