import Foundation
internal import LMDB
import PermissionModel

/// One version of what the ledger knew about a handle of a subject: who made it known (or not), and what ended it.
public struct HandleRecord: Hashable, Sendable {
    /// The child (or user) the handle concerns.
    public var subject: String
    /// The handle, normalized.
    public var handle: CommunicationHandle
    /// The event that wrote this version.
    public var seq: UInt64
    /// Whether this version made the handle known (an approval, or an observation that said known) or
    /// not known (an observation that said not known).
    public var known: Bool
    /// When this version took effect: the `occurredAt` of the answer or observation that wrote it.
    public var since: Timestamp
    /// When a time-limited approval lapses, else `nil`.
    public var until: Timestamp?
    /// What wrote this version: an approved question or a `handles.observed` event.
    public var source: HandleSource
    /// For an approval: the question as of the view's point (choice, `via`, times).
    public var question: QuestionStatus?
    /// What ended this version by the view's point, or `nil` while it still holds.
    public var ended: Ending?

    /// How a version of a handle's record came to an end.
    public struct Ending: Hashable, Sendable {
        /// What ended a version.
        public enum Cause: String, Hashable, Sendable {
            /// A time-limited approval lapsed.
            case lapse
            /// A `handles.observed` event said known or not known.
            case observation
            /// A later approval replaced it.
            case approval
        }
        /// What ended it.
        public var cause: Cause
        /// When it ended: the `until` of a lapsed approval, else the `since` of the version that replaced it.
        public var at: Timestamp
        /// The event that ended it (`nil` for a lapse).
        public var seq: UInt64?
        /// Whether the handle was known after it.
        public var knownAfter: Bool
    }
}
