import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

/// A one-line description of an event for tables.
func summary(_ event: PermissionEvent) -> String {
    switch event.payload {
    case .questionAsked(let q):
        let about = q.topic.handles.isEmpty ? "app update" : handlesText(q.topic.handles)
        return "\(tableID(q.id)) about \(about)"
    case .questionSendCanceled(let id), .questionExpired(let id):
        return tableID(id)
    case .questionAskFailed(let id, let error):
        return "\(tableID(id)) \(error.code.rawValue)"
    case .questionAnswered(let id, let choice, let via):
        return "\(tableID(id)) \(choice) via \(via.rawValue)"
    case .handlesObserved(let checked, let known):
        let knownSet = Set(known)
        return checked.map { "\($0.value)\(knownSet.contains($0) ? "" : " (not known)")" }.joined(separator: ", ")
    case .permissionChanged(let p, let state, let cause):
        return "\(p.rawValue) → \(state.rawValue)\(cause.map { " (\($0.rawValue))" } ?? "")"
    }
}

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
    @Option(help: ArgumentHelp("Only this question's events (its id, or a table's abbreviation).", valueName: "ID")) var question: String?
    @Option(help: ArgumentHelp("Only events of this type, such as question.answered.", valueName: "TYPE")) var type: String?
    @Option(help: ArgumentHelp("From this point on (included): a time or seq:N.", valueName: "WHEN")) var from: String?
    @Option(help: ArgumentHelp("Up to this point (included): a time or seq:N.", valueName: "WHEN")) var to: String?
    @OptionGroup var format: FormatOption

    func run() throws {
        let typeFilter: EventType? = try type.map { try parseChoice($0, option: "--type") }
        let fromPoint = try from.map { try parseWhen($0, option: "--from") }
        let toPoint = try to.map { try parseWhen($0, option: "--to") }
        let reference = try question.map { try QuestionReference(parsing: $0) }
        let opened = try ledger.openForReading()
        var events: [PermissionEvent] = []
        try reading(opened, asOf: toPoint) { view in
            let questionID = try reference?.resolve(in: view)
            let low = try fromPoint.map { try view.firstSeq(from: $0) } ?? 1
            try view.history(subject: subject, question: questionID, type: typeFilter, fromSeq: low, toSeq: view.point.seq) {
                events.append($0)
            }
        }
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.historyResult(events))
        case .csv:
            var table = Table("seq", "type", "id", "subject", "occurredAt", "recordedAt", "questionId", "detail", "hash")
            for e in events {
                table.add(String(e.seq ?? 0), e.type.rawValue, e.id, e.subject, e.occurredAt.description, e.recordedAt?.description ?? "",
                          e.questionID?.uuidString ?? "", summary(e), e.hash?.description ?? "")
            }
            writeOut(table.csv(), terminator: "")
        case .table:
            var table = Table("seq", "recorded (UTC)", "type", "subject", "detail")
            for e in events {
                table.add(String(e.seq ?? 0), tableTime(e.recordedAt), e.type.rawValue, e.subject, summary(e))
            }
            writeOut("\(events.count) event\(events.count == 1 ? "" : "s")\n\n" + table.text(), terminator: "")
        }
    }
}

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
            writeOut(QueryJSON.diffResult(diff, includeSubject: subject == nil))
        case .csv:
            var table = Table("change", "subject", "what", "from", "to")
            for q in diff.questions { table.add("question", q.subject, q.id.uuidString, q.from?.rawValue ?? "", q.to?.rawValue ?? "") }
            for h in diff.handlesAdded { table.add("handle added", h.subject, "\(h.handle.handle.kind.rawValue):\(h.handle.handle.value)", "", "known") }
            for h in diff.handlesRemoved { table.add("handle removed", h.subject, "\(h.handle.handle.kind.rawValue):\(h.handle.handle.value)", "known", "") }
            for p in diff.permissions { table.add("permission", p.subject, p.permission.rawValue, p.from?.rawValue ?? "", p.to?.rawValue ?? "") }
            writeOut(table.csv(), terminator: "")
        case .table:
            var text = "from seq \(diff.from.seq) (\(tableTime(diff.from.time)) UTC) to seq \(diff.to.seq) (\(tableTime(diff.to.time)) UTC)\n\n"
            var questions = Table("question", "subject", "from", "to")
            for q in diff.questions { questions.add(tableID(q.id), q.subject, q.from?.rawValue ?? "(not asked)", q.to?.rawValue ?? "(not asked)") }
            text += "questions whose state changed: \(diff.questions.count)\n" + (diff.questions.isEmpty ? "" : questions.text())
            var handles = Table("change", "subject", "kind", "value", "source")
            for (change, list) in [("added", diff.handlesAdded), ("removed", diff.handlesRemoved)] {
                for h in list {
                    let source: String = switch h.handle.source {
                    case .question(let id): "question \(tableID(id))"
                    case .observation(let seq): "observed, seq \(seq)"
                    }
                    handles.add(change, h.subject, h.handle.handle.kind.rawValue, h.handle.handle.value, source)
                }
            }
            let handleCount = diff.handlesAdded.count + diff.handlesRemoved.count
            text += "\nknown handles added or removed: \(handleCount)\n" + (handleCount == 0 ? "" : handles.text())
            var permissions = Table("subject", "permission", "from", "to")
            for p in diff.permissions { permissions.add(p.subject, p.permission.rawValue, p.from?.rawValue ?? "-", p.to?.rawValue ?? "-") }
            text += "\npermissions that changed: \(diff.permissions.count)\n" + (diff.permissions.isEmpty ? "" : permissions.text())
            writeOut(text, terminator: "")
        }
    }
}

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Count events by type, subjects and questions by state; show the head and the file size.",
        discussion: """
        Example:
          permission-ledger stats --ledger family.ledger
        """)

    @OptionGroup var ledger: LedgerOption
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let (stats, at) = try reading(opened, asOf: point) { (try $0.statistics(), $0.point) }
        let fileBytes = ((try? FileManager.default.attributesOfItem(atPath: opened.path + "/data.mdb"))?[.size] as? NSNumber)?.int64Value ?? 0
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.statisticsResult(stats, at: at, fileBytes: fileBytes))
        case .table, .csv:
            var table = Table("what", "count")
            table.add("events", String(stats.eventsByType.values.reduce(0, +)))
            for type in EventType.allCases { table.add("  " + type.rawValue, String(stats.eventsByType[type] ?? 0)) }
            table.add("subjects", String(stats.subjects))
            table.add("questions", String(stats.questionsByState.values.reduce(0, +)))
            for state in QuestionState.allCases { table.add("  " + state.rawValue, String(stats.questionsByState[state] ?? 0)) }
            if format.resolved == .csv {
                table.add("headSeq", String(stats.head.seq))
                table.add("fileBytes", String(fileBytes))
                writeOut(table.csv(), terminator: "")
            } else {
                let head = "head seq \(stats.head.seq), \(stats.head.recordedAt.map { "recorded \($0)" } ?? "empty")\n  hash \(stats.head.hash)\n"
                let size = String(format: "data file %.1f MiB", Double(fileBytes) / 1_048_576)
                writeOut("as of seq \(at.seq), \(at.time)\n\(head)\(size)\n\n" + table.text(), terminator: "")
            }
        }
    }
}

struct WhoApproved: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "who-approved",
        abstract: "For a contact (handle), every approval and observation that made it known, to which child, and what ended it.",
        discussion: """
        Lists, for each subject, each time the ledger's knowledge of the handle changed: the question \
        that approved it (with the choice, how it was answered and when), or the observation of \
        known handles that said known or not known, and what later revoked, replaced or lapsed it. \
        Without --kind, every kind the value is valid for is searched (a phone number, an email \
        address, an app handle).

        Examples:
          permission-ledger who-approved --handle dragonslayer42
          permission-ledger who-approved --handle "+1 (555) 010-0101" --kind phoneNumber --as-of 2026-11-03T12:00:00Z
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "The handle's value, as the app reported it (it is normalized).") var handle: String
    @Option(help: ArgumentHelp("phoneNumber, emailAddress or custom. Default: every kind the value is valid for.", valueName: "KIND"))
    var kind: String?
    @Option(help: "Only this subject.") var subject: String?
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        var kinds = CommunicationHandle.Kind.allCases
        if let kind { kinds = [try parseChoice(kind, option: "--kind")] }
        let handles = kinds.compactMap { try? CommunicationHandle(value: handle, kind: $0) }
        guard !handles.isEmpty else {
            var why = "\(quoted(handle)) is not a valid handle of any kind"
            if kinds.count == 1 {
                do { _ = try CommunicationHandle(value: handle, kind: kinds[0]) } catch { why = error.reason }
            }
            throw ToolFailure(.usage, "usage: --handle \(why)")
        }
        let point = try asOf.point()
        let opened = try ledger.openForReading()
        let (records, at) = try reading(opened, asOf: point) { view in
            (try handles.flatMap { try view.handleRecords($0, subject: subject) }, view.point)
        }
        switch format.resolved {
        case .json:
            writeOut(QueryJSON.handleRecordsResult(records, handle: handles, at: at))
        case .csv:
            var table = Table("subject", "kind", "value", "seq", "known", "since", "until", "source", "choice", "via", "endedBy", "endedAt", "endedSeq")
            for r in records {
                let source: String = switch r.source {
                case .question(let id): "question:\(id.uuidString)"
                case .observation(let seq): "observation:\(seq)"
                }
                table.add(r.subject, r.handle.kind.rawValue, r.handle.value, String(r.seq), String(r.known), r.since.description,
                          r.until?.description ?? "", source, r.question?.choice?.id ?? "", r.question?.via?.rawValue ?? "",
                          r.ended?.cause.rawValue ?? "", r.ended?.at.description ?? "", r.ended?.seq.map(String.init) ?? "")
            }
            writeOut(table.csv(), terminator: "")
        case .table:
            var text = wrap("\(handles.map { "\($0.value) (\($0.kind.rawValue))" }.joined(separator: " or "))", indent: "")
                + "as of seq \(at.seq), \(tableTime(at.time)) UTC\n"
            let approvals = records.filter { if case .question = $0.source { true } else { false } }
            let current = records.filter { $0.ended == nil && $0.known && ($0.until.map { $0 > at.time } ?? true) }.map(\.subject)
            text += "approved by \(approvals.count) question\(approvals.count == 1 ? "" : "s"); "
                + (current.isEmpty ? "known to no subject now\n" : "known now to \(current.joined(separator: ", "))\n")
            if records.isEmpty { text += "\nno approval or observation of this handle\n" }
            for r in records {
                let what: String
                switch r.source {
                case .question(let id):
                    let choice = r.question?.choice.map { "\"\($0.title)\"" } ?? "approval"
                    what = "approved for \(r.subject): question \(tableID(id)), \(choice) via \(r.question?.via?.rawValue ?? "?")\(r.question?.late == true ? " (late)" : "")"
                case .observation(let seq):
                    what = "observed \(r.known ? "known" : "NOT known") for \(r.subject) (seq \(seq))"
                }
                text += "\n" + wrap("• " + what, indent: "  ") + "    from \(tableTime(r.since))" + (r.until.map { " until \(tableTime($0))" } ?? "")
                if let ended = r.ended {
                    let how = switch (ended.cause, r.known, ended.knownAfter) {
                    case (.lapse, _, _): "the time-limited approval lapsed"
                    case (.observation, true, true): "confirmed known by an observation"
                    case (.observation, true, false): "REVOKED: an observation said not known"
                    case (.observation, false, true): "an observation said known"
                    case (.observation, false, false): "an observation said not known again"
                    case (.approval, true, _): "replaced by another approval"
                    case (.approval, false, _): "approved by a question"
                    }
                    text += "\n" + wrap("    ended \(tableTime(ended.at)): \(how)\(ended.seq.map { " (seq \($0))" } ?? "")", indent: "      ")
                        .dropLast()
                } else {
                    text += r.known ? "\n    still in force" : "\n    still not known"
                }
                text += "\n"
            }
            writeOut(text, terminator: "")
        }
    }
}

/// Wraps text at spaces to lines of at most `width` characters, continuing with `indent`; ends with a newline.
/// Leading spaces are kept; a word longer than a line is cut with an ellipsis.
func wrap(_ text: String, indent: String, width: Int = 80) -> String {
    func fit(_ line: String) -> String { line.count > width ? String(line.prefix(width - 1)) + "…" : line }
    let lead = String(text.prefix { $0 == " " })
    var lines: [String] = []
    var line = lead
    var hasWord = false
    for word in text.dropFirst(lead.count).split(separator: " ") {
        let candidate = hasWord ? line + " " + word : line + word
        if candidate.count <= width || !hasWord {
            line = fit(candidate)
        } else {
            lines.append(line)
            line = fit(indent + word)
        }
        hasWord = true
    }
    lines.append(line)
    return lines.joined(separator: "\n") + "\n"
}
