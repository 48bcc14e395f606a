import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

/// A question id as given: a whole UUID, or the abbreviation tables show (`FAD10000…000000000358`,
/// also with `...`), which is resolved against the ledger.
enum QuestionReference {
    case id(UUID)
    case abbreviated(prefix: String, suffix: String)

    init(parsing text: String) throws {
        if text.utf8.count == 36, let id = UUID(uuidString: text) {
            self = .id(id)
            return
        }
        let parts = text.replacingOccurrences(of: "...", with: "…").split(separator: "…", omittingEmptySubsequences: false)
        let hex = CharacterSet(charactersIn: "0123456789abcdefABCDEF-")
        guard parts.count == 2, parts.allSatisfy({ $0.unicodeScalars.allSatisfy(hex.contains) }), parts[0].count + parts[1].count >= 8 else {
            throw ToolFailure(.usage, "usage: \(quoted(text)) is not a question id (a UUID such as 6A3F1C2E-0000-4000-8000-000000000001, or a table's abbreviation such as 6A3F1C2E…000000000001)")
        }
        self = .abbreviated(prefix: parts[0].uppercased(), suffix: parts[1].uppercased())
    }

    /// The question's id: an abbreviation must match exactly one question asked by the point.
    func resolve(in view: LedgerView) throws -> UUID {
        switch self {
        case .id(let id):
            return id
        case .abbreviated(let prefix, let suffix):
            let matches = try view.questions().map(\.question.id).filter {
                $0.uuidString.hasPrefix(prefix) && $0.uuidString.hasSuffix(suffix)
            }
            guard matches.count == 1 else {
                throw ToolFailure(.rejected, matches.isEmpty
                    ? "no question matches \(prefix)…\(suffix) as of seq \(view.point.seq)"
                    : "\(prefix)…\(suffix) matches \(matches.count) questions; give the whole id")
            }
            return matches[0]
        }
    }
}

/// A name as people write it: prefix, given, middle, family, suffix, then the nickname in quotes.
func displayName(_ n: PersonNameComponents) -> String {
    var parts = [n.namePrefix, n.givenName, n.middleName, n.familyName, n.nameSuffix].compactMap { $0 }
    if let nick = n.nickname { parts.append("\"\(nick)\"") }
    return parts.joined(separator: " ")
}

func handlesText(_ handles: [CommunicationHandle]) -> String {
    handles.map(\.value).joined(separator: ", ")
}

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
        let reference = try QuestionReference(parsing: id)
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let (status, at, questionID) = try reading(opened, asOf: point) { view in
            let questionID = try reference.resolve(in: view)
            return (try view.question(questionID), view.point, questionID)
        }
        guard let status else {
            throw ToolFailure(.rejected, "question \(questionID.uuidString) is not in the ledger as of seq \(at.seq)")
        }
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.questionResult(status, at: at))
        case .csv:
            // One RFC 4180 table: a record per event, each with the question's fields first.
            var table = Table("id", "subject", "topic", "description", "handles", "actions", "state", "late", "askedAt",
                              "resolvedAt", "expiresAt", "choice", "answer", "via", "errorCode", "errorMessage",
                              "seq", "type", "eventId", "occurredAt", "recordedAt")
            let question = status.question
            var description = "", actions = ""
            switch question.topic {
            case .significantAppUpdate(let topic): description = topic.description
            case .communication(let topic): actions = topic.orderedActions.map(\.rawValue).joined(separator: " ")
            }
            let fields = [
                question.id.uuidString, status.subject, question.topic.name, description, handlesText(question.topic.handles), actions,
                status.state.rawValue, String(status.late), status.askedAt.description, status.resolvedAt?.description ?? "",
                question.expiresAt?.description ?? "", status.choice?.id ?? "", status.choice?.answer.rawValue ?? "",
                status.via?.rawValue ?? "", status.error?.code.rawValue ?? "", status.error?.message ?? "",
            ]
            for e in status.events {
                table.add(row: fields + [String(e.seq), e.type.rawValue, e.id, e.occurredAt.description, e.recordedAt.description])
            }
            writeOut(table.csv(), terminator: "")
        case .table:
            var fields = Table("field", "value")
            fields.add("id", status.question.id.uuidString)
            fields.add("subject", status.subject)
            fields.add("topic", status.question.topic.name)
            if case .significantAppUpdate(let topic) = status.question.topic { fields.add("description", topic.description) }
            if case .communication(let topic) = status.question.topic {
                for person in topic.personInformation {
                    let name = person.nameComponents.map(displayName) ?? ""
                    fields.add("handle", "\(person.handle.value) (\(person.handle.kind.rawValue))\(name.isEmpty ? "" : " " + name)")
                }
                fields.add("actions", topic.orderedActions.map(\.rawValue).joined(separator: ", "))
            }
            fields.add("state", status.state.rawValue + (status.late ? " (late)" : ""))
            fields.add("asked", status.askedAt.description)
            fields.add("resolved", status.resolvedAt?.description ?? "-")
            fields.add("expires", status.question.expiresAt?.description ?? "-")
            fields.add("choice", status.choice.map { "\($0.title) (\($0.id), \($0.answer.rawValue))" } ?? "-")
            fields.add("via", status.via?.rawValue ?? "-")
            if let error = status.error { fields.add("error", error.code.rawValue + (error.message.map { ": " + $0 } ?? "")) }
            var events = Table("seq", "type", "event id", "occurred (UTC)", "recorded (UTC)")
            for e in status.events {
                events.add(String(e.seq), e.type.rawValue, e.id, tableTime(e.occurredAt), tableTime(e.recordedAt))
            }
            writeOut("as of seq \(at.seq), \(at.time)\n\n" + fields.text() + "\n" + events.text())
        }
    }
}

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
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let (list, at) = try reading(opened, asOf: point) { (try $0.questions(subject: subject, state: stateFilter), $0.point) }
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.questionsResult(list, at: at))
        case .table, .csv:
            func about(_ q: QuestionStatus) -> String {
                q.question.topic.handles.isEmpty ? "app update" : handlesText(q.question.topic.handles)
            }
            if format.resolved == .csv {
                var table = Table("id", "subject", "state", "late", "askedAt", "resolvedAt", "expiresAt", "choice", "via", "handles")
                for q in list {
                    table.add(q.question.id.uuidString, q.subject, q.state.rawValue, q.late ? "true" : "false", q.askedAt.description,
                              q.resolvedAt?.description ?? "", q.question.expiresAt?.description ?? "", q.choice?.id ?? "",
                              q.via?.rawValue ?? "", handlesText(q.question.topic.handles))
                }
                writeOut(table.csv(), terminator: "")
            } else {
                var table = Table("id", "subject", "state", "asked (UTC)", "about")
                for q in list {
                    table.add(tableID(q.question.id), q.subject, q.state.rawValue + (q.late ? "*" : ""), tableTime(q.askedAt), about(q))
                }
                let note = list.contains(where: \.late) ? "\n* late: answered after the app stopped waiting, or recorded at or after expiry\n" : ""
                writeOut("\(list.count) question\(list.count == 1 ? "" : "s") as of seq \(at.seq), \(at.time)\n\n" + table.text() + note, terminator: "")
            }
        }
    }
}

struct KnownHandles: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "known-handles",
        abstract: "List the handles a subject may talk to, and on whose approval or observation.",
        discussion: """
        Example:
          permission-ledger known-handles --subject kid-1 --as-of 2026-11-03T12:00:00Z
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "The subject (child).") var subject: String
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let (handles, at) = try reading(opened, asOf: point) { (try $0.knownHandles(subject: subject), $0.point) }
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.knownHandlesResult(handles, subject: subject, at: at))
        case .table, .csv:
            let csv = format.resolved == .csv
            var table = csv ? Table("kind", "value", "since", "until", "source") : Table("kind", "value", "since (UTC)", "until (UTC)", "source")
            for h in handles {
                let source: String
                switch h.source {
                case .question(let id): source = csv ? "question:\(id.uuidString)" : "question \(tableID(id))"
                case .observation(let seq): source = csv ? "observation:\(seq)" : "observed, seq \(seq)"
                }
                let kind = csv ? h.handle.kind.rawValue : ["phoneNumber": "phone", "emailAddress": "email"][h.handle.kind.rawValue] ?? h.handle.kind.rawValue
                table.add(kind, h.handle.value, csv ? h.since.description : tableTime(h.since),
                          csv ? (h.until?.description ?? "") : tableTime(h.until), source)
            }
            if format.resolved == .csv { writeOut(table.csv(), terminator: "") } else { writeOut("\(subject) as of seq \(at.seq), \(at.time)\n\n" + table.text(), terminator: "") }
        }
    }
}

struct Permissions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a subject's system permission states, and whether required ones are granted.",
        discussion: """
        With --require, "satisfied" means every named permission is authorized, limited or provisional.

        Example:
          permission-ledger permissions --subject kid-1 --require camera,microphone
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "The subject (user).") var subject: String
    @Option(help: ArgumentHelp("Permissions that must be granted, comma-separated.", valueName: "P,P,..."))
    var require: String?
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        var required: [SystemPermission]?
        if let require {
            required = try require.split(separator: ",").map { name in
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                guard let p = SystemPermission(rawValue: trimmed) else {
                    throw ToolFailure(.usage, "usage: --require: \(quoted(trimmed)) is not a permission; expected some of \(SystemPermission.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return p
            }
        }
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let (permissions, at) = try reading(opened, asOf: point) { (try $0.permissions(subject: subject), $0.point) }
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.permissionsResult(permissions, subject: subject, at: at, require: required))
        case .table, .csv:
            let csv = format.resolved == .csv
            var table = csv ? Table("permission", "state", "since", "canPrompt", "cause") : Table("permission", "state", "since (UTC)", "prompt", "cause")
            let missing = required.map { QueryJSON.missingPermissions($0, in: permissions) } ?? []
            if csv, required != nil {
                // With --require, each record says whether the permission is required and, if so, whether
                // it is missing; a required permission with no recorded state gets a record of its own.
                table.headers += ["required", "missing"]
            }
            for p in permissions {
                var row = [p.permission.rawValue, p.state.rawValue, csv ? p.since.description : tableTime(p.since),
                           csv ? String(p.canPrompt) : (p.canPrompt ? "yes" : "no"), p.cause?.rawValue ?? ""]
                if csv, let required { row += [String(required.contains(p.permission)), String(missing.contains(p.permission))] }
                table.add(row: row)
            }
            if csv, required != nil {
                for p in missing where !permissions.contains(where: { $0.permission == p }) {
                    table.add(row: [p.rawValue, "", "", "", "", "true", "true"])
                }
                // Still ordered by permission, by code point, as CLI.md orders them.
                table.rows.sort { $0[0].utf8.lexicographicallyPrecedes($1[0].utf8) }
            }
            var text = csv ? table.csv() : "\(subject) as of seq \(at.seq), \(at.time)\n\n" + table.text()
            if required != nil, !csv {
                text += missing.isEmpty ? "\nrequired: satisfied\n" : "\nrequired: NOT satisfied; missing \(missing.map(\.rawValue).joined(separator: ", "))\n"
            }
            writeOut(text, terminator: "")
        }
    }
}

func writeOut(_ text: String, terminator: String) {
    var out = Output()
    out.write(text + terminator)
    out.flush()
}
