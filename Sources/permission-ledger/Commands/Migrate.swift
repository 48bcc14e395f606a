import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a ledger of storage format 1 into a new ledger that encrypts personal fields.",
        discussion: """
        A ledger of storage format 1 keeps phone numbers, email addresses, names and free text unencrypted; \
        it opens read-only. migrate checks OLD's hash chain and appends every event into NEW, a new ledger \
        (with its key file, --key-file or ledger.key in NEW), keeping each event's seq and recordedAt. The new \
        ledger's hashes differ, as its records do; it records OLD's head seq and hash, which stats shows, so \
        that the two logs stay linked. OLD is only read: remove it and its backups once NEW is verified.

        Example:
          permission-ledger migrate family.ledger family-v2.ledger && permission-ledger verify --ledger family-v2.ledger
        """)

    @Argument(help: ArgumentHelp("The ledger of storage format 1.", valueName: "OLD"))
    var old: String

    @Argument(help: ArgumentHelp("The new ledger's directory: absent or empty.", valueName: "NEW"))
    var new: String

    @Option(name: .customLong("key-file"), help: ArgumentHelp(
        "The new ledger's key file. Default: $PERMISSION_LEDGER_KEY_FILE, else ledger.key in NEW.", valueName: "FILE"))
    var keyFile: String?

    func run() throws {
        var options = Ledger.Options()
        options.keyFile = keyFile
        options.secrets = ToolSecrets.source
        let oldHead: LogHead
        do {
            oldHead = try Ledger.migrate(from: old, to: new, options: options)
        } catch {
            throw ToolFailure(error)
        }
        do {
            try writeOut("migrated \(oldHead.seq) events into \(new); the old ledger's head was seq \(oldHead.seq), hash \(oldHead.hash)")
        } catch {
            throw ToolFailure.outputFailed(errno: error.errno, saying: "the ledger was migrated; only this summary was not written")
        }
    }
}
