import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Question: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show one question: its topic, state, answer and events.",
        discussion: """
        Example:
          permission-ledger question 6A3F1C2E-0000-4000-8000-000000000001 --as-of 2026-11-20T14:00:00Z
        """)

    @OptionGroup var ledger: LedgerOption
    @Argument(help: ArgumentHelp("The question's id (a UUID).", valueName: "ID")) var id: String
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let reference = try parseQuestion(id)
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let (status, at, questionID) = try reading(opened, asOf: point) { view in
            let questionID = try reference.resolve(in: view)
            return (try view.question(questionID), view.point, questionID)
        }
        guard let status else {
            throw ToolFailure(.rejected, "question \(questionID.uuidString) is not in the ledger as of seq \(at.seq)")
        }
        switch format.resolved {
        case .json:
            try writeOut(QueryJSON.questionResult(status, at: at))
        case .csv:
            // One RFC 4180 table: a record per event, each with the question's fields first.
            var table = Table("id", "subject", "topic", "description", "handles", "actions", "state", "late", "askedAt",
                              "resolvedAt", "expiresAt", "choice", "answer", "via", "errorCode", "errorMessage",
                              "seq", "type", "eventId", "occurredAt", "recordedAt")
            let question = status.question
            var description = "", actions = ""
            switch question.topic {
            case .significantAppUpdate: description = status.appUpdateDescription.map(shownText) ?? ""
            case .communication(let topic): actions = topic.orderedActions.map(\.rawValue).joined(separator: " ")
            }
            let fields = [
                question.id.uuidString, status.subject, question.topic.name, description, handlesText(status.handles), actions,
                status.state.rawValue, String(status.late), status.askedAt.description, status.resolvedAt?.description ?? "",
                question.expiresAt?.description ?? "", status.choice?.id ?? "", status.choice?.answer.rawValue ?? "",
                status.via?.rawValue ?? "", status.error?.code.rawValue ?? "", status.errorMessage.map(shownText) ?? "",
            ]
            for e in status.events {
                table.add(row: fields + [String(e.seq), e.type.rawValue, e.id, e.occurredAt.description, e.recordedAt.description])
            }
            try writeOut(table.csv(), terminator: "")
        case .table:
            var fields = Table("field", "value")
            fields.add("id", status.question.id.uuidString)
            fields.add("subject", status.subject)
            fields.add("topic", status.question.topic.name)
            if let description = status.appUpdateDescription { fields.add("description", shownText(description)) }
            if case .communication(let topic) = status.question.topic {
                for person in topic.personInformation {
                    let name = person.nameComponents.map(displayName) ?? ""
                    let value = status.erased.map(erasedText) ?? person.handle.value
                    fields.add("handle", "\(value) (\(person.handle.kind.rawValue))\(name.isEmpty ? "" : " " + name)")
                }
                fields.add("actions", topic.orderedActions.map(\.rawValue).joined(separator: ", "))
            }
            fields.add("state", status.state.rawValue + (status.late ? " (late)" : ""))
            fields.add("asked", status.askedAt.description)
            fields.add("resolved", status.resolvedAt?.description ?? "-")
            fields.add("expires", status.question.expiresAt?.description ?? "-")
            fields.add("choice", status.choice.map { "\(status.choiceTitle.map(shownText) ?? "") (\($0.id), \($0.answer.rawValue))" } ?? "-")
            fields.add("via", status.via?.rawValue ?? "-")
            if let error = status.error { fields.add("error", error.code.rawValue + (status.errorMessage.map { ": " + shownText($0) } ?? "")) }
            var events = Table("seq", "type", "event id", "occurred (UTC)", "recorded (UTC)")
            for e in status.events {
                events.add(String(e.seq), e.type.rawValue, e.id, tableTime(e.occurredAt), tableTime(e.recordedAt))
            }
            try writeOut("as of seq \(at.seq), \(at.time)\n\n" + fields.text() + "\n" + events.text())
        }
    }
}
