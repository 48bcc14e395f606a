import CoreMetrics

/// The metrics of one ledger, made once when it opens with the factory of its options.
struct LedgerMetrics: Sendable {
    let appendDuration: Timer
    let commitGroupSize: Recorder
    let commitEvents: Recorder
    let commits: Counter
    let rejectedAppends: Counter
    let mapBytes: Gauge
    let usedBytes: Gauge
    let headSeq: Gauge
    let subscriptionLag: Recorder

    init(factory: (any MetricsFactory)?) {
        let factory = factory ?? MetricsSystem.factory
        appendDuration = Timer(label: LedgerMetricNames.appendDuration, factory: factory)
        commitGroupSize = Self.recorder(LedgerMetricNames.commitGroupSize, factory)
        commitEvents = Self.recorder(LedgerMetricNames.commitEvents, factory)
        commits = Counter(label: LedgerMetricNames.commits, factory: factory)
        rejectedAppends = Counter(label: LedgerMetricNames.rejectedAppends, factory: factory)
        mapBytes = Gauge(label: LedgerMetricNames.mapBytes, factory: factory)
        usedBytes = Gauge(label: LedgerMetricNames.usedBytes, factory: factory)
        headSeq = Gauge(label: LedgerMetricNames.headSeq, factory: factory)
        subscriptionLag = Self.recorder(LedgerMetricNames.subscriptionLag, factory)
    }

    private static func recorder(_ label: String, _ factory: any MetricsFactory) -> Recorder {
        Recorder(
            label: label, dimensions: [], aggregate: true,
            handler: factory.makeRecorder(label: label, dimensions: [], aggregate: true), factory: factory)
    }
}
