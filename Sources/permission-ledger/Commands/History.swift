import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List events in log order, filtered by subject, question, type and time range.",
        discussion: """
        --from and --to are both included: an RFC 3339 time bounds by recordedAt, seq:N by position. \
        JSON gives each event as export writes it.

        Examples:
          permission-ledger history --subject kid-1 --from 2026-11-03T00:00:00Z --to 2026-11-04T00:00:00Z
          permission-ledger history --question 6A3F1C2E-0000-4000-8000-000000000001
          permission-ledger history --type permission.changed --format csv
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "Only this subject's events.") var subject: String?
    @Option(help: ArgumentHelp("Only this question's events (its id, or its first 8 and last 12 hex digits, as FIRST8…LAST12).", valueName: "ID")) var question: String?
    @Option(help: ArgumentHelp("Only events of this type, such as question.answered.", valueName: "TYPE")) var type: String?
    @Option(help: ArgumentHelp("From this point on (included): a time or seq:N.", valueName: "WHEN")) var from: String?
    @Option(help: ArgumentHelp("Up to this point (included): a time or seq:N.", valueName: "WHEN")) var to: String?
    @OptionGroup var format: FormatOption

    func run() throws {
        let typeFilter: EventType? = try type.map { try parseChoice($0, option: "--type") }
        let fromPoint = try from.map { try parseWhen($0, option: "--from") }
        let toPoint = try to.map { try parseWhen($0, option: "--to") }
        let reference = try question.map(parseQuestion)
        let opened = try ledger.openForReading()
        // Collected in the read, which is run again after an erasure recorded meanwhile: each run starts afresh.
        let events = try reading(opened, asOf: toPoint) { view in
            let questionID = try reference?.resolve(in: view)
            let low = try fromPoint.map { try view.firstSeq(from: $0) } ?? 1
            var events: [RecordedEvent] = []
            try view.history(subject: subject, question: questionID, type: typeFilter, fromSeq: low, toSeq: view.point.seq) {
                events.append($0)
            }
            return events
        }
        switch format.resolved {
        case .json:
            var out = Output()
            try QueryJSON.historyResult(events) { bytes throws(OutputFailure) in try out.write(bytes: bytes) }
            try out.write("\n")
            try out.flush()
        case .csv:
            var table = Table("seq", "type", "id", "subject", "occurredAt", "recordedAt", "questionId", "detail", "hash")
            for e in events {
                table.add(String(e.seq), e.type.rawValue, e.id, e.subject, e.occurredAt.description, e.recordedAt.description,
                          e.questionID?.uuidString ?? "", summary(e.event), e.hash.description)
            }
            var out = Output()
            try table.write(.csv, to: &out)
            try out.flush()
        case .table:
            var table = Table("seq", "recorded (UTC)", "type", "subject", "detail")
            for e in events {
                table.add(String(e.seq), tableTime(e.recordedAt), e.type.rawValue, e.subject, summary(e.event))
            }
            var out = Output()
            try out.write("\(events.count) event\(events.count == 1 ? "" : "s")\n\n")
            try table.write(.table, to: &out)
            try out.flush()
        }
    }
}
