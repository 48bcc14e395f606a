import Foundation
import PermissionModel

/// The log's head: the last event's position, chain hash and `recordedAt`.
public struct LogHead: Hashable, Sendable, CustomStringConvertible {
    /// The last event's `seq`: the number of events in the log (0 when it is empty).
    public var seq: UInt64
    /// The chain hash after the last event (``ChainHash/genesis`` when the log is empty).
    public var hash: ChainHash
    /// The last event's `recordedAt`, or `nil` when the log is empty.
    public var recordedAt: Timestamp?

    /// The head of an empty log.
    public static let empty = LogHead(seq: 0, hash: .genesis, recordedAt: nil)

    @_spi(StorageEngine) public init(seq: UInt64, hash: ChainHash, recordedAt: Timestamp?) {
        self.seq = seq
        self.hash = hash
        self.recordedAt = recordedAt
    }

    /// `seq 12, recorded 2026-11-20T09:00:01Z, hash 6f1c…`, or `empty` for an empty log.
    public var description: String {
        guard let recordedAt else { return "empty" }
        return "seq \(seq), recorded \(recordedAt), hash \(hash)"
    }
}
