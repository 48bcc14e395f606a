import Foundation

/// What the workers of a run measured together.
struct LoadReport {
    var connections: Int
    var seconds: Double
    var latencies: [Double]
    var statuses: [Int: Int]
    var failures: Int
    var serverWentAway: Bool

    init(workers: [LoadWorker], seconds: Double) {
        connections = workers.count
        self.seconds = seconds
        latencies = workers.flatMap(\.latencies).sorted()
        statuses = workers.reduce(into: [:]) { all, worker in all.merge(worker.statuses, uniquingKeysWith: +) }
        failures = workers.reduce(0) { $0 + $1.failures }
        serverWentAway = workers.contains(where: \.sawServerGo)
    }

    var answered: Int { latencies.count }
    var acknowledged: Int { statuses.filter { (200..<300).contains($0.key) }.values.reduce(0, +) }
    var requestsPerSecond: Double { Double(answered) / max(seconds, 1e-9) }

    /// The latency at quantile `q`, in milliseconds.
    func percentile(_ q: Double) -> Double {
        guard !latencies.isEmpty else { return 0 }
        return latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))] * 1e3
    }

    /// A sentence for people, then one `key=value` line for scripts.
    var text: String {
        let others = statuses.filter { !(200..<300).contains($0.key) }.sorted { $0.key < $1.key }
            .map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
        let human = String(
            format: "ledger-load: %d connections, %.1f s: %d requests answered (%d acknowledged%@), %d without a response; %.0f requests/s; latency p50 %.2f ms, p99 %.2f ms%@",
            connections, seconds, answered, acknowledged, others.isEmpty ? "" : ", " + others, failures, requestsPerSecond,
            percentile(0.5), percentile(0.99), serverWentAway ? "; the server went away" : "")
        let machine = String(
            format: "load: requests=%d acknowledged=%d other=%d failed=%d rps=%.0f p50_ms=%.2f p99_ms=%.2f server_gone=%@",
            answered, acknowledged, answered - acknowledged, failures, requestsPerSecond, percentile(0.5), percentile(0.99),
            serverWentAway ? "yes" : "no")
        return human + "\n" + machine
    }
}
