import ArgumentParser
import PermissionLedger

/// What a reader of a ledger sees, for the tests of damage detection: every LMDB database's rows and
/// digest (`Ledger.tableDigests`), read in a process of its own, since a damaged data file can make the
/// reading process die or hang.
struct TableDigests: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table-digests",
        abstract: "Print each LMDB database of a ledger: its name, number of rows and SHA-256 digest.",
        discussion: """
        The rows are read with plain cursor scans and nothing else of the ledger's logic, so that two \
        copies of a ledger print the same lines exactly when a reader sees the same rows in both.
        """)

    @Option var ledger: String

    func run() throws {
        do {
            for table in try Ledger.tableDigests(path: ledger) { print("\(table.table) \(table.rows) \(table.digest)") }
        } catch {
            throw Failure("\(ledger): \(error)")
        }
    }
}
