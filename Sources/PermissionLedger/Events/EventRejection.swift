import Foundation
import PermissionModel

/// Why an event was rejected, in plain words: by the JSON Lines reader or by an acceptance rule.
public struct EventRejection: Error, Hashable, Sendable, CustomStringConvertible {
    /// The event's type when it could be read, as written in the input.
    public var eventType: String?
    /// What is wrong.
    public var reason: String

    /// Creates a rejection for `reason`, naming the event's type when it is known.
    public init(_ reason: String, eventType: String? = nil) {
        self.reason = reason
        self.eventType = eventType
    }

    /// The reason, preceded by the event's type (`question.answered: …`) when it is known.
    public var description: String { eventType.map { "\($0): \(reason)" } ?? reason }
}
