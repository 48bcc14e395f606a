import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a key that signs checkpoints, and print its verifier key.",
        discussion: """
        Writes a new Ed25519 signing key named ORIGIN to FILE (mode 0600; FILE must not exist), in the text \
        form of Go's golang.org/x/mod/sumdb/note, and prints its verifier key, ORIGIN+KEYID+KEY, which auditors \
        use to check checkpoints. Keep FILE secret, apart from the ledger and its backups.

        Example:
          permission-ledger keygen --origin example.com/family-ledger --out signing.key > vkey
        """)

    @Option(help: ArgumentHelp("The log's name, in checkpoints and signatures: no spaces, no '+'.", valueName: "ORIGIN"))
    var origin: String

    @Option(help: ArgumentHelp("Where to write the signing key (a new file).", valueName: "FILE"))
    var out: String

    @OptionGroup var format: FormatOption

    func validate() throws {
        if out.isEmpty { throw ValidationError("--out: an empty path") }
    }

    func run() throws {
        guard NoteVerifier.isValidName(origin) else {
            throw ToolFailure(.usage, "usage: --origin \(quoted(origin)) is not a valid key name: 1 to 256 bytes of printable UTF-8, no spaces, no '+'")
        }
        let signer: CheckpointSigner
        do {
            signer = try CheckpointSigner.create(keyFile: out, origin: origin)
        } catch {
            throw ToolFailure(error)
        }
        let vkey = signer.signer.verifierKey
        switch format.resolved {
        case .table: try writeOut(vkey)
        case .json:
            var json = JSONObjectWriter()
            json.string("origin", origin)
            json.string("vkey", vkey)
            json.string("signingKeyFile", out)
            try writeOut(json.text)
        case .csv:
            var table = Table("origin", "vkey", "signingKeyFile")
            table.add(origin, vkey, out)
            try writeOut(table.csv(), terminator: "")
        }
    }
}
