import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

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
