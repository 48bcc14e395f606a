import Foundation
internal import LMDB
import PermissionModel

/// What changed between two points of the log.
public struct LedgerDiff: Hashable, Sendable {
    /// A question whose state differs between the two points.
    public struct QuestionChange: Hashable, Sendable {
        /// The question's id.
        public var id: UUID
        /// The child who was asked to send it.
        public var subject: String
        /// `nil` when the question had not been asked at the first point.
        public var from: QuestionState?
        /// `nil` when the question had not been asked at the second point (it is earlier than the first).
        public var to: QuestionState?
    }
    /// A handle known at one of the two points and not at the other.
    public struct HandleChange: Hashable, Sendable {
        /// The child (or user) the handle concerns.
        public var subject: String
        /// The handle, as known at the point where it is known.
        public var handle: KnownHandle
    }
    /// A system permission whose state differs between the two points.
    public struct PermissionChange: Hashable, Sendable {
        /// The user whose permission it is.
        public var subject: String
        /// The permission.
        public var permission: SystemPermission
        /// Its state at the first point, or `nil` when none was recorded by then.
        public var from: SystemPermission.State?
        /// Its state at the second point, or `nil` when none was recorded by then.
        public var to: SystemPermission.State?
    }
    /// The first point: the view ``LedgerView/diff(to:subject:)`` was called on.
    public var from: AsOfPoint
    /// The second point: the view passed as `other`.
    public var to: AsOfPoint
    /// The questions whose state differs: first those asked by the second point, ordered by `askedAt`
    /// then id, then those asked only by the first.
    public var questions: [QuestionChange]
    /// The handles known at the second point and not at the first, by subject, then kind and value.
    public var handlesAdded: [HandleChange]
    /// The handles known at the first point and not at the second, by subject, then kind and value.
    public var handlesRemoved: [HandleChange]
    /// The permissions whose state differs, by subject, then permission name.
    public var permissions: [PermissionChange]
}
