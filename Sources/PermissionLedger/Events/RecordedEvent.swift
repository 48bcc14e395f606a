import Foundation
import PermissionModel

/// An event as the ledger stores it: with the `seq`, `recordedAt` and chain `hash` the ledger gave it.
///
/// What reads the log returns this type (subscriptions, ``Ledger/forEachEvent(after:_:)``,
/// ``LedgerView/history(subject:question:type:fromSeq:toSeq:_:)``), so that none of the three is optional;
/// what is appended is a ``PermissionEvent``. The event's own fields read through: `recorded.subject`,
/// `recorded.type`, `recorded.payload`.
@dynamicMemberLookup
public struct RecordedEvent: Hashable, Sendable {
    /// The event's position in the log, 1-based.
    public let seq: UInt64
    /// When the ledger recorded it.
    public let recordedAt: Timestamp
    /// The chain hash after this event.
    public let hash: ChainHash
    /// The event, with its `seq`, `recordedAt` and `hash` set: what `EventJSON.encode` writes and
    /// what another ledger's ``Ledger/append(_:maxRejections:)`` checks them against.
    public let event: PermissionEvent

    /// A stored event; nil when `event` lacks its `seq`, `recordedAt` or `hash`.
    public init?(_ event: PermissionEvent) {
        guard let seq = event.seq, let recordedAt = event.recordedAt, let hash = event.hash else { return nil }
        self.init(seq: seq, recordedAt: recordedAt, hash: hash, event: event)
    }

    init(seq: UInt64, recordedAt: Timestamp, hash: ChainHash, event: PermissionEvent) {
        self.seq = seq
        self.recordedAt = recordedAt
        self.hash = hash
        self.event = event
    }

    /// A stored event read from the log, whose `seq`, `recordedAt` and `hash` the read set.
    init(stored event: PermissionEvent) {
        self.init(seq: event.seq!, recordedAt: event.recordedAt!, hash: event.hash!, event: event)
    }

    /// The event's own fields: `id`, `subject`, `occurredAt`, `payload`, `type`, `questionID`.
    public subscript<Value>(dynamicMember keyPath: KeyPath<PermissionEvent, Value>) -> Value {
        event[keyPath: keyPath]
    }
}

extension EventJSON {
    /// The JSON line of a stored event (no trailing newline), with its `seq`, `recordedAt` and `hash`.
    public static func encode(_ recorded: RecordedEvent) -> String {
        encode(recorded.event)
    }
}
