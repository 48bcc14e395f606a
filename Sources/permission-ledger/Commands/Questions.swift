import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Questions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List questions with their states, ordered by when they were asked.",
        discussion: """
        Example:
          permission-ledger questions --subject kid-1 --state pending --format csv
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "Only this subject's questions.") var subject: String?
    @Option(help: ArgumentHelp("Only questions in this state: \(QuestionState.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "STATE"))
    var state: String?
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let stateFilter: QuestionState? = try state.map { try parseChoice($0, option: "--state") }
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let (list, at) = try reading(opened, asOf: point) { (try $0.questions(subject: subject, state: stateFilter), $0.point) }
        switch format.resolved {
        case .json:
            var out = Output()
            try QueryJSON.questionsResult(list, at: at) { bytes throws(OutputFailure) in try out.write(bytes: bytes) }
            try out.write("\n")
            try out.flush()
        case .table, .csv:
            func about(_ q: QuestionStatus) -> String {
                q.question.topic.handles.isEmpty ? "app update" : handlesText(q.handles)
            }
            if format.resolved == .csv {
                var table = Table("id", "subject", "state", "late", "askedAt", "resolvedAt", "expiresAt", "choice", "via", "handles")
                for q in list {
                    table.add(q.question.id.uuidString, q.subject, q.state.rawValue, q.late ? "true" : "false", q.askedAt.description,
                              q.resolvedAt?.description ?? "", q.question.expiresAt?.description ?? "", q.choice?.id ?? "",
                              q.via?.rawValue ?? "", handlesText(q.handles))
                }
                var out = Output()
                try table.write(.csv, to: &out)
                try out.flush()
            } else {
                var table = Table("id", "subject", "state", "asked (UTC)", "about")
                for q in list {
                    table.add(q.question.id.uuidString, q.subject, q.state.rawValue + (q.late ? "*" : ""), tableTime(q.askedAt), about(q))
                }
                let note = list.contains(where: \.late) ? "\n* late: answered after the app stopped waiting, or recorded at or after expiry\n" : ""
                var out = Output()
                try out.write("\(list.count) question\(list.count == 1 ? "" : "s") as of seq \(at.seq), \(at.time)\n\n")
                try table.write(.table, to: &out)
                try out.write(note)
                try out.flush()
            }
        }
    }
}
