import PermissionModel

/// The span of time an audit report covers, by when things happened (`occurredAt`, which is also when a handle
/// became known): from `from` to `to`, both included. An open end reaches the subject's first event, or the
/// report's as-of point.
public struct ReportPeriod: Hashable, Sendable {
    /// The first instant covered, or `nil` for the subject's first event.
    public var from: Timestamp?
    /// The last instant covered, or `nil` for the report's as-of point.
    public var to: Timestamp?

    /// The period from `from` to `to`, both included; `nil` leaves an end open.
    public init(from: Timestamp? = nil, to: Timestamp? = nil) {
        self.from = from
        self.to = to
    }

    /// The whole history of the subject, up to the as-of point.
    public static let everything = ReportPeriod()
}
