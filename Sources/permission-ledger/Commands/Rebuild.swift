import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Rebuild: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Derive every projection and index anew from the log (the log itself is not changed).",
        discussion: """
        Use it when verify reports a damaged projection while the log is intact, or when a newer \
        PermissionLedger asks for it. Then run verify.

        It first reserves room on disk for the data file: about twice what the ledger uses, kept for later \
        appends. On a full disk it stops there, before it writes anything. Other processes may read and \
        append meanwhile (appends wait until the rebuild has committed).

        Example:
          permission-ledger rebuild --ledger family.ledger && permission-ledger verify --ledger family.ledger
        """)

    @OptionGroup var ledger: LedgerOption

    func run() throws {
        let head: LogHead
        do {
            head = try Ledger.rebuildProjections(path: ledger.path)
        } catch {
            throw ToolFailure(error)
        }
        do {
            try writeOut("rebuilt the projections of \(head.seq) events")
        } catch {
            throw ToolFailure.outputFailed(errno: error.errno, saying: "the projections were rebuilt; only this summary was not written")
        }
    }
}
