import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what changed between two points: question states, known handles, permissions.",
        discussion: """
        Examples:
          permission-ledger diff --from 2026-11-01T00:00:00Z --to 2026-11-08T00:00:00Z
          permission-ledger diff --from seq:100 --to seq:200 --subject kid-1 --format json
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The earlier point: a time or seq:N.", valueName: "WHEN")) var from: String
    @Option(help: ArgumentHelp("The later point: a time or seq:N.", valueName: "WHEN")) var to: String
    @Option(help: "Only this subject.") var subject: String?
    @OptionGroup var format: FormatOption

    func run() throws {
        let fromPoint = try parseWhen(from, option: "--from")
        let toPoint = try parseWhen(to, option: "--to")
        let opened = try ledger.openForReading()
        let diff = try reading(opened, asOf: fromPoint) { view in try view.diff(to: try view.at(toPoint), subject: subject) }
        switch format.resolved {
        case .json:
            try writeOut(QueryJSON.diffResult(diff, includeSubject: subject == nil))
        case .csv:
            var table = Table("change", "subject", "what", "from", "to")
            for q in diff.questions { table.add("question", q.subject, q.id.uuidString, q.from?.rawValue ?? "", q.to?.rawValue ?? "") }
            for h in diff.handlesAdded { table.add("handle added", h.subject, "\(h.handle.handle.kind.rawValue):\(shownText(h.handle.value))", "", "known") }
            for h in diff.handlesRemoved { table.add("handle removed", h.subject, "\(h.handle.handle.kind.rawValue):\(shownText(h.handle.value))", "known", "") }
            for p in diff.permissions { table.add("permission", p.subject, p.permission.rawValue, p.from?.rawValue ?? "", p.to?.rawValue ?? "") }
            var out = Output()
            try table.write(.csv, to: &out)
            try out.flush()
        case .table:
            var text = "from seq \(diff.from.seq) (\(tableTime(diff.from.time)) UTC) to seq \(diff.to.seq) (\(tableTime(diff.to.time)) UTC)\n\n"
            var questions = Table("question", "subject", "from", "to")
            for q in diff.questions { questions.add(q.id.uuidString, q.subject, q.from?.rawValue ?? "(not asked)", q.to?.rawValue ?? "(not asked)") }
            text += "questions whose state changed: \(diff.questions.count)\n" + (diff.questions.isEmpty ? "" : questions.text())
            var handles = Table("change", "subject", "kind", "value", "source")
            for (change, list) in [("added", diff.handlesAdded), ("removed", diff.handlesRemoved)] {
                for h in list {
                    let source: String = switch h.handle.source {
                    case .question(let id): "question \(id.uuidString)"
                    case .observation(let seq): "observed, seq \(seq)"
                    }
                    handles.add(change, h.subject, h.handle.handle.kind.rawValue, shownText(h.handle.value), source)
                }
            }
            let handleCount = diff.handlesAdded.count + diff.handlesRemoved.count
            text += "\nknown handles added or removed: \(handleCount)\n" + (handleCount == 0 ? "" : handles.text())
            var permissions = Table("subject", "permission", "from", "to")
            for p in diff.permissions { permissions.add(p.subject, p.permission.rawValue, p.from?.rawValue ?? "-", p.to?.rawValue ?? "-") }
            text += "\npermissions that changed: \(diff.permissions.count)\n" + (diff.permissions.isEmpty ? "" : permissions.text())
            try writeOut(text, terminator: "")
        }
    }
}
