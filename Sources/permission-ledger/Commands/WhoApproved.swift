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
            // Not repeated: a handle is a personal value, and errors hold none (docs/spec/PRIVACY.md).
            var why = "is not a valid handle of any kind"
            if kinds.count == 1 {
                do { _ = try CommunicationHandle(value: handle, kind: kinds[0]) } catch { why = error.reason }
            }
            throw ToolFailure(.usage, "usage: --handle \(why)")
        }
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let (records, at) = try reading(opened, asOf: point) { view in
            (try handles.flatMap { try view.handleRecords($0, subject: subject) }, view.point)
        }
        switch format.resolved {
        case .json:
            try writeOut(QueryJSON.handleRecordsResult(records, handle: handles, at: at))
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
            var out = Output()
            try table.write(.csv, to: &out)
            try out.flush()
        case .table:
            try writeOut(Self.text(records, handles: handles, at: at), terminator: "")
        }
    }

    /// The table form: first how many questions approved the handle and what observations said of it (NOT known
    /// first), then, for each child (and handle), its approvals and its observations, each with what ended it.
    static func text(_ records: [HandleRecord], handles: [CommunicationHandle], at: AsOfPoint) -> String {
        func label(_ handle: CommunicationHandle) -> String { "\(displayed(handle.value)) (\(handle.kind.rawValue))" }
        func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        func isApproval(_ r: HandleRecord) -> Bool { if case .question = r.source { true } else { false } }
        func holds(_ r: HandleRecord) -> Bool { r.ended == nil && r.known && (r.until.map { $0 > at.time } ?? true) }

        var text = handles.map(label).joined(separator: " or ") + ", as of seq \(at.seq) (\(tableTime(at.time)) UTC)\n"
        let questions = Set(records.compactMap { r -> UUID? in if case .question(let id) = r.source { id } else { nil } })
        let observations = records.filter { !isApproval($0) }
        text += "approved by \(plural(questions.count, "question"))\n"
        text += "observed as NOT known \(plural(observations.filter { !$0.known }.count, "time")), "
            + "as known \(plural(observations.filter(\.known).count, "time"))\n"
        let current = Array(Set(records.filter(holds).map(\.subject))).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        text += current.isEmpty ? "known now to no child\n" : "known now to \(displayed(listCell(current)))\n"
        if records.isEmpty { text += "\nno approval or observation of this handle\n" }

        // By child and handle, in the order the ledger lists them; approvals, then observations, NOT known first.
        var groups: [(subject: String, handle: CommunicationHandle, records: [HandleRecord])] = []
        for r in records {
            if let i = groups.firstIndex(where: { $0.subject.utf8.elementsEqual(r.subject.utf8) && $0.handle == r.handle }) {
                groups[i].records.append(r)
            } else {
                groups.append((r.subject, r.handle, [r]))
            }
        }
        for group in groups {
            let now = group.records.contains(where: holds) ? "known now" : "not known now"
            text += "\n" + displayed(group.subject) + (handles.count > 1 ? ", " + label(group.handle) : "") + ": \(now)\n"
            let ordered = group.records.filter(isApproval) + group.records.filter { !isApproval($0) && !$0.known }
                + group.records.filter { !isApproval($0) && $0.known }
            for r in ordered {
                text += "  " + what(r) + "\n    " + ending(r) + "\n"
            }
        }
        return text
    }

    /// What wrote a version, with a verb: `approved by question ID (Title) on TIME via messages`,
    /// `observed as known at seq N on TIME`, `observed as NOT known at seq N on TIME`.
    private static func what(_ r: HandleRecord) -> String {
        switch r.source {
        case .question(let id):
            let title = r.question?.choiceTitle.map { " (\(displayed(shownText($0))))" } ?? ""
            let via = r.question?.via.map { " via \($0.rawValue)" } ?? ""
            let late = r.question?.late == true ? " (late)" : ""
            let until = r.until.map { ", until \(tableTime($0))" } ?? ""
            return "approved by question \(id.uuidString)\(title) on \(tableTime(r.since))\(via)\(late)\(until)"
        case .observation(let seq):
            return "observed as \(r.known ? "known" : "NOT known") at seq \(seq) on \(tableTime(r.since))"
        }
    }

    /// What ended a version by the point, or that it still holds.
    private static func ending(_ r: HandleRecord) -> String {
        guard let ended = r.ended else { return r.known ? "still in force" : "still not known" }
        let at = tableTime(ended.at)
        let event = ended.seq.map { " at seq \($0)" } ?? ""
        return switch (ended.cause, r.known, ended.knownAfter) {
        case (.lapse, _, _): "lapsed on \(at): the approval was time-limited"
        case (.observation, true, true): "confirmed on \(at) by the observation\(event), which said known"
        case (.observation, true, false): "REVOKED on \(at) by the observation\(event), which said NOT known"
        case (.observation, false, true): "ended on \(at) by the observation\(event), which said known"
        case (.observation, false, false): "said again on \(at) by the observation\(event), which said NOT known"
        case (.approval, true, _): "replaced on \(at) by the approval\(event)"
        case (.approval, false, _): "ended on \(at) by the approval\(event)"
        }
    }
}
