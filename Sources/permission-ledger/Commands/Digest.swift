import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Digest: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the SHA-256 of all derived state at a point of the log.",
        discussion: """
        Equal for any two ledgers holding the same events. Without --as-of the digest is taken as \
        of the head (seq of the last event), so it does not change with the wall clock.

        Example:
          permission-ledger digest --ledger family.ledger --as-of seq:10
        """)

    @OptionGroup var ledger: LedgerOption
    @OptionGroup var asOf: AsOfHeadOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let result: (String, AsOfPoint)
        do {
            let resolved = try point ?? .seq(opened.head().seq)
            result = try opened.read(asOf: resolved, retries: Ledger.readRetries) { (try $0.digest(), $0.point) }
        } catch {
            throw ToolFailure(error)
        }
        switch format.resolved {
        case .json:
            var json = JSONObjectWriter()
            json.json("asOf", QueryJSON.asOf(result.1))
            json.string("digest", result.0)
            try writeOut(json.text)
        case .csv:
            var table = Table("asOfSeq", "asOfTime", "digest")
            table.add(String(result.1.seq), result.1.time.description, result.0)
            try writeOut(table.csv(), terminator: "")
        case .table: try writeOut(result.0)
        }
    }
}
