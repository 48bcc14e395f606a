import Foundation
internal import LMDB
import PermissionModel

/// The counts `stats` prints.
public struct LedgerStatistics: Hashable, Sendable {
    /// The log's head (independent of the point).
    public var head: LogHead
    /// How many events of each type the log holds up to the point; types without events are absent.
    public var eventsByType: [EventType: UInt64]
    /// How many subjects have an event at or before the point.
    public var subjects: Int
    /// How many questions are in each state at the point; states without questions are absent.
    public var questionsByState: [QuestionState: Int]
}
