import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append the events of JSON Lines files to the ledger, all or nothing.",
        discussion: """
        Each line is one event in the form of docs/spec/EVENTS.md. If any line is rejected, nothing from \
        this call is written and every rejected line is reported (up to 100) as FILE:LINE: reason. \
        Events already in the ledger (same id, same content) are counted as duplicates. \
        The files are read line by line, so memory stays bounded however large they are. A line longer \
        than 1 MiB is reported as soon as it passes the limit, and the rest of its file is not read. A \
        UTF-8 byte order mark at the start of a file is skipped.

        Example:
          permission-ledger import --ledger family.ledger Fixtures/approval-messages.jsonl
        """)

    @OptionGroup var ledger: LedgerOption
    @Argument(help: ArgumentHelp("JSON Lines files to import; - reads standard input.", valueName: "FILE"))
    var files: [String]

    func run() throws {
        // Every file is opened first: a missing one stops the import before the ledger is touched.
        let input = try EventFiles.open(files)
        let opened = try ledger.openForWriting()
        let summary = try input.append(to: opened)
        do {
            try writeOut("imported \(summary.appended) event\(summary.appended == 1 ? "" : "s"), \(summary.duplicates) duplicate\(summary.duplicates == 1 ? "" : "s"); head seq \(summary.head.seq)")
        } catch {
            throw ToolFailure.outputFailed(
                errno: error.errno, saying: "the events were imported (head seq \(summary.head.seq)); only this summary was not written")
        }
    }
}
