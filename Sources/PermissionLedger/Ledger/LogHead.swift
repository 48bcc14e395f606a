import Foundation
import PermissionModel

/// The log's head: the last event's position, chain hash and `recordedAt`.
public struct LogHead: Hashable, Sendable {
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
}
