/// The labels of the metrics a ledger reports through swift-metrics (see ``Ledger/Options/metricsFactory``).
///
/// None has dimensions: a process with several ledgers gives each its own factory to tell them apart.
public enum LedgerMetricNames {
    /// Timer: how long each ``Ledger/append(_:maxRejections:)`` took, from the call until its events were
    /// durable (or it failed).
    public static let appendDuration = "permission_ledger_append_duration"
    /// Recorder: how many append calls each write transaction of the writer thread served (group commit).
    public static let commitGroupSize = "permission_ledger_commit_group_size"
    /// Recorder: how many events each write transaction of the writer thread offered.
    public static let commitEvents = "permission_ledger_commit_events"
    /// Counter: write transactions committed by the writer thread.
    public static let commits = "permission_ledger_commits"
    /// Counter: append calls rejected by the rules, in part or whole.
    public static let rejectedAppends = "permission_ledger_rejected_appends"
    /// Gauge: the size of LMDB's memory map, in bytes, after each commit.
    public static let mapBytes = "permission_ledger_map_bytes"
    /// Gauge: the bytes of the data file in use after each commit (the pages up to the last one used).
    public static let usedBytes = "permission_ledger_used_bytes"
    /// Gauge: the log's head `seq` after each commit.
    public static let headSeq = "permission_ledger_head_seq"
    /// Recorder: how many events a subscription was behind the head each time it read a page of the log.
    public static let subscriptionLag = "permission_ledger_subscription_lag"
}
