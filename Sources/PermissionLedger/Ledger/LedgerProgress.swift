/// How far work over the whole log has got: a rebuild of the derived tables (when
/// ``Ledger/open(path:options:progress:)`` or ``Ledger/rebuildProjections(progress:)`` runs one).
public struct LedgerProgress: Hashable, Sendable, CustomStringConvertible {
    /// The events done so far.
    public var completed: UInt64
    /// The events in all: the log's head `seq` when the work began.
    public var total: UInt64

    /// The share done, from 0 to 1 (1 for an empty log).
    public var fractionCompleted: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    /// `completed of total events (p%)`.
    public var description: String {
        "\(completed) of \(total) events (\(Int((fractionCompleted * 100).rounded(.down)))%)"
    }
}
