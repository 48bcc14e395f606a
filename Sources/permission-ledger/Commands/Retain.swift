import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Retain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply a retention policy: erase every personal field recorded before a time, for every subject.",
        discussion: """
        Appends one subject.erased event with basis retention and that cut per subject that has personal \
        fields recorded before WHEN still readable, and destroys their keys, as erase does. Safe to run from \
        a timer, in several processes at once: a second run erases nothing more. --dry-run lists what it \
        would erase and changes nothing.

        Example:
          permission-ledger retain --ledger family.ledger --before 2025-11-27T00:00:00Z --dry-run
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("Erase what was recorded before this RFC 3339 time.", valueName: "WHEN"))
    var before: String
    @Flag(name: .customLong("dry-run"), help: "List what would be erased; change nothing.")
    var dryRun = false
    @OptionGroup var format: FormatOption

    func run() throws {
        let cut = try parseTime(before, option: "--before")
        // A dry run only reads: it opens the ledger read-only and never creates it.
        let opened = try dryRun ? ledger.openForReading() : ledger.openForWriting(makes: false)
        let summary: Ledger.RetentionSummary
        do {
            summary = try opened.retainSynchronously(before: cut, dryRun: dryRun)
        } catch let rejected as AppendRejected {
            throw ToolFailure(.rejected, lines: rejected.rejections.map { "retain: \($0.rejection.description)" })
        } catch {
            throw ToolFailure(error)
        }
        do {
            try writeOut(Self.render(summary, format.resolved), terminator: "")
        } catch {
            throw ToolFailure.outputFailed(errno: error.errno, saying: dryRun ? "nothing was erased" : "the erasures are recorded; only this summary was not written")
        }
    }

    static func render(_ summary: Ledger.RetentionSummary, _ format: OutputFormat) -> String {
        switch format {
        case .json:
            var retained = JSONObjectWriter()
            retained.string("before", summary.before.description)
            retained.integer("subjects", summary.erasures.count)
            retained.integer("events", summary.events)
            retained.integer("fields", summary.fields)
            retained.bool("dryRun", summary.dryRun)
            var list = "["
            for (i, erasure) in summary.erasures.enumerated() {
                var item = JSONObjectWriter()
                item.string("subject", erasure.subject)
                item.integer("seq", summary.dryRun ? nil : erasure.seq)
                item.integer("events", erasure.events)
                item.integer("fields", erasure.fields)
                list += (i > 0 ? "," : "") + item.text
            }
            retained.json("erasures", list + "]")
            var json = JSONObjectWriter()
            json.json("retained", retained.text)
            return json.text + "\n"
        case .csv, .table:
            var table = Table("subject", "seq", "events", "fields")
            for erasure in summary.erasures {
                table.add(erasure.subject, summary.dryRun ? "" : String(erasure.seq), String(erasure.events), String(erasure.fields))
            }
            if format == .csv { return table.csv() }
            let verb = summary.dryRun ? "would erase" : "erased"
            let total = "\(verb) \(summary.events) event\(summary.events == 1 ? "" : "s") (\(summary.fields) field\(summary.fields == 1 ? "" : "s")) recorded before \(summary.before) of \(summary.erasures.count) subject\(summary.erasures.count == 1 ? "" : "s")\n"
            return summary.erasures.isEmpty ? total : table.text() + total
        }
    }
}
