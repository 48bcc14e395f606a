import Foundation
import PermissionModel

/// What became of one event offered to the ledger.
public enum AppendOutcome: Hashable, Sendable {
    /// Appended at this `seq`.
    case appended(seq: UInt64)
    /// Already recorded (the same event id with the same content, or the same answer delivered again): a no-op.
    case duplicate(of: UInt64)
}
