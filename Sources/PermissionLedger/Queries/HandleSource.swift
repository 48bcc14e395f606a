internal import Crypto
import Foundation
import PermissionModel

/// Where a known handle came from.
public enum HandleSource: Hashable, Sendable {
    /// An approval of this question.
    case question(UUID)
    /// The `handles.observed` event with this `seq`.
    case observation(UInt64)
}
