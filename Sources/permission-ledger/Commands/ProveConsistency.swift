import ArgumentParser
import Foundation
import PermissionLedger

struct ProveConsistency: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prove-consistency",
        abstract: "Prove that the ledger's tree only grew since a smaller one: an RFC 9162 consistency proof.",
        discussion: """
        Prints `old M`, the consistency proof (a base64 hash a line), a blank line, and the signed checkpoint \
        of the tree of --to events (default: the head), as the body of a C2SP tlog-witness add-checkpoint.

        Example:
          permission-ledger prove-consistency --ledger family.ledger --signing-key signing.key --from 1000
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The size of the older tree.", valueName: "M")) var from: String
    @Option(help: ArgumentHelp("The size of the newer tree (default: the head, or --as-of).", valueName: "N")) var to: String?
    @OptionGroup var asOf: AsOfHeadOption
    @OptionGroup var signingKey: SigningKeyOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let old = try parseSeq(from, option: "--from")
        let point = try treePoint(size: to, asOf: asOf, option: "--to")
        let (proof, signed) = try signedProof(ledger, at: point, signer: try signingKey.signer()) { try $0.consistencyProof(fromSize: old) }
        try writeProofOutput(proof.witnessBody(checkpoint: signed), format: format, checkpoint: signed.checkpoint) { json in
            json.integer("oldSize", proof.oldSize)
            json.json("hashes", jsonList(proof.hashes.map(\.base64)))
        }
    }
}
