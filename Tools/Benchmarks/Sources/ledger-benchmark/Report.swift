import Foundation
import PermissionLedger

/// The audit report of one child of the `--query-events` ledger (at 10,000,000 events and the suite's 1,000
/// children, a child with 10,000 events): the time to read, check and render it, median of three, and its size,
/// against docs/REPORTS.md's limits (under 2 seconds, under 5 MB); then the time to write the child's audit
/// bundle beside it.
func measureReport(_ options: SuiteOptions) throws -> [Figure] {
    let (ledger, signer, head) = try proofLedger(options.directory + "/query-\(options.queryEvents)", events: options.queryEvents, options: options)
    let subject = "kid-0"
    var times: [Double] = []
    var size = 0
    var events = 0
    for _ in 0..<3 {
        var html = ""
        times.append(try seconds {
            let report = try AuditReport(ledger: ledger, subject: subject, asOf: .seq(head), signer: signer)
            html = report.html(bundleDirectory: "kid-0.bundle")
            events = report.events.count
        })
        size = html.utf8.count
    }
    times.sort()
    let bundle = options.directory + "/report-kid-0.bundle"
    try? FileManager.default.removeItem(atPath: bundle)
    let bundleTime = try seconds { _ = try AuditBundle.write(ledger, subject: subject, asOf: .seq(head), signer: signer, to: bundle) }
    try? FileManager.default.removeItem(atPath: bundle)
    let workload = "audit report of one child (\(events) events) in a \(options.queryEvents)-event ledger"
    return [
        Figure(workload: workload + ": read, each event checked against the signed tree, rendered", unit: "s (median of 3)",
               ledger: times[1], target: "< 2", met: times[1] < 2,
               note: String(format: "%.2f to %.2f s; page cache warm", times[0], times[2])),
        Figure(workload: "  its HTML file", unit: "MB", ledger: Double(size) / 1_000_000, target: "< 5", met: size < 5_000_000),
        Figure(workload: "  its audit bundle, written beside it", unit: "s", ledger: bundleTime, target: "(none)", met: nil,
               note: "\(events) events, three files each"),
    ]
}
