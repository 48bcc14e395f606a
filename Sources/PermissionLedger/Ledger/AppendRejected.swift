import Foundation
internal import LMDB

/// Some events were rejected; nothing of the batch was written.
public struct AppendRejected: Error, Sendable, CustomStringConvertible {
    /// Each rejected event's index in the batch, with the reason. At most the batch's limit are listed.
    public var rejections: [(index: Int, rejection: EventRejection)]

    /// One line per rejected event: `event N: ` (its 1-based position in the batch) and the reason.
    public var description: String {
        rejections.map { "event \($0.index + 1): \($0.rejection)" }.joined(separator: "\n")
    }
}
