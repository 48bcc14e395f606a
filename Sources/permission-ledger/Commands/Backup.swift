import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a consistent, compacted copy of the ledger into a new directory, and verify it.",
        discussion: """
        The copy is one snapshot of the ledger, taken while other processes read and append, without the \
        pages LMDB has freed. It is written beside DIR under a temporary name, verified as verify does, and \
        only then renamed to DIR, so DIR never holds a partial copy; the ledger itself is only read. DIR \
        must not exist (exit 2); it is made mode 0700, its data file 0600. The copy is itself a ledger: \
        to restore, use it as --ledger. Prints the copy's head seq and hash. A copy that cannot be written \
        (a full disk, an I/O error) exits 6 and leaves nothing behind.

        Example:
          permission-ledger backup --ledger family.ledger --out family.ledger.2026-11-20
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The backup's directory, which must not exist.", valueName: "DIR"))
    var out: String
    @OptionGroup var format: FormatOption

    func validate() throws {
        guard !out.isEmpty else { throw ValidationError("--out needs a directory") }
    }

    func run() throws {
        var status = stat()
        if lstat(out, &status) == 0 {
            throw ToolFailure(.usage, "usage: --out \(quoted(out)): already exists; a backup is written into a new directory")
        }
        try ledger.refuseOutputInsideLedger(out, option: "--out")
        let opened = try ledger.openForReading()
        let head: LogHead
        do {
            head = try opened.backup(to: out)
        } catch {
            throw Self.failure(error)
        }
        let summary: String
        switch format.resolved {
        case .json:
            var json = JSONObjectWriter()
            json.string("out", out)
            json.integer("seq", head.seq)
            json.string("head", "\(head.hash)")
            json.bool("verified", true)
            summary = json.text + "\n"
        case .csv:
            var table = Table("out", "seq", "head", "verified")
            table.add(out, String(head.seq), "\(head.hash)", "true")
            summary = table.csv()
        case .table:
            summary = "backup: \(head.seq) events, head seq \(head.seq), hash \(head.hash), verified\n"
        }
        do {
            try writeOut(summary, terminator: "")
        } catch {
            throw ToolFailure.outputFailed(
                errno: error.errno, saying: "the backup \(out) is written and verified; only this summary was not written")
        }
    }

    /// How a failed backup is reported. The ledger opened: a storage failure now is the copy's, output that
    /// could not be written (docs/spec/CLI.md: exit 6, one line); any other failure is the ledger's.
    static func failure(_ error: LedgerError) -> ToolFailure {
        guard error.kind == .storage else { return ToolFailure(error) }
        return ToolFailure(.outputFailed, error.toolDescription)
    }
}
