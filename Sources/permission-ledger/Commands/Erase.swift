import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

extension Erasure.Basis: ExpressibleByArgument {}

struct Erase: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Erase a subject's personal fields: record a subject.erased event and destroy their keys, in one step.",
        discussion: """
        Every handle value, name, description, choice title and error message of the subject's events \
        recorded before the erasure (or before --before) becomes unreadable for good, at every as-of point: \
        outputs show (erased, seq N) in its place, and JSON null with "erased": {"seq", "basis"}. Question \
        states, known-handle membership, permissions, counts and the log's hashes stay what they were. A crash \
        at any moment leaves either no erasure or a complete one. Prints how many events and fields it \
        erased. Backups taken before the erasure still hold the data: erase them too, or restore and erase again.

        Example:
          permission-ledger erase --ledger family.ledger --subject kid-cleo --basis guardianRequest --reference case-4711
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The subject whose data is erased.", valueName: "S"))
    var subject: String
    @Option(help: ArgumentHelp("Why: guardianRequest, accountDeleted, retention or other.", valueName: "BASIS"))
    var basis: Erasure.Basis
    @Option(help: ArgumentHelp("The app's case or ticket number (1 to 128 bytes; not personal data).", valueName: "REF"))
    var reference: String?
    @Option(help: ArgumentHelp("Erase only what was recorded before this RFC 3339 time. Default: everything recorded before the erasure.", valueName: "WHEN"))
    var before: String?
    @Option(name: .customLong("occurred-at"), help: ArgumentHelp("When the erasure was decided, RFC 3339. Default: now.", valueName: "TIME"))
    var occurredAt: String?
    @OptionGroup var format: FormatOption

    func run() throws {
        let cut = try before.map { try parseTime($0, option: "--before") }
        let time = try occurredAt.map { try parseTime($0, option: "--occurred-at") } ?? Timestamp(Date())
        let opened = try ledger.openForWriting(makes: false)
        let summary: Ledger.ErasureSummary
        do {
            summary = try opened.eraseSynchronously(subject: subject, Erasure(basis: basis, reference: reference, before: cut), occurredAt: time)
        } catch let rejected as AppendRejected {
            throw ToolFailure(.rejected, lines: rejected.rejections.map { "erase: \($0.rejection.description)" })
        } catch {
            throw ToolFailure(error)
        }
        let text: String
        switch format.resolved {
        case .json:
            var inner = JSONObjectWriter()
            inner.string("subject", summary.subject)
            inner.integer("seq", summary.seq)
            inner.integer("events", summary.events)
            inner.integer("fields", summary.fields)
            var json = JSONObjectWriter()
            json.json("erased", inner.text)
            text = json.text + "\n"
        case .csv:
            var table = Table("subject", "seq", "events", "fields")
            table.add(summary.subject, String(summary.seq), String(summary.events), String(summary.fields))
            text = table.csv()
        case .table:
            text = "erased \(summary.events) event\(summary.events == 1 ? "" : "s") (\(summary.fields) field\(summary.fields == 1 ? "" : "s")) of \(displayed(summary.subject)), seq \(summary.seq)\n"
        }
        do {
            try writeOut(text, terminator: "")
        } catch {
            throw ToolFailure.outputFailed(errno: error.errno, saying: "the erasure is recorded at seq \(summary.seq); only this summary was not written")
        }
    }
}

/// Parses an RFC 3339 time given to `option` (exit 2 when it is not one).
func parseTime(_ text: String, option: String) throws -> Timestamp {
    if text.hasPrefix("seq:") {
        throw ToolFailure(.usage, "usage: \(option) \(quoted(text)) is not a time: expected RFC 3339, such as 2026-11-20T14:00:00Z")
    }
    do {
        return try Timestamp(rfc3339: text)
    } catch {
        // The reason alone: unlike --as-of, this option takes no seq:N.
        throw ToolFailure(.usage, "usage: \(option) \(error.reason)")
    }
}
