import ArgumentParser
import Foundation
import PermissionLedger

struct Prove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prove that an event is in the ledger's Merkle tree: a C2SP tlog-proof.",
        discussion: """
        Prints `c2sp.org/tlog-proof@v1`, `index N-1`, the RFC 9162 inclusion proof (a base64 hash a line), a \
        blank line, and the signed checkpoint of the tree of --size events (default: the head).

        Example:
          permission-ledger prove --ledger family.ledger --signing-key signing.key --seq 12 > 12.proof
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The event to prove.", valueName: "N")) var seq: String
    @Option(help: ArgumentHelp("The size of the tree to prove it in (default: the head, or --as-of).", valueName: "M")) var size: String?
    @OptionGroup var asOf: AsOfHeadOption
    @OptionGroup var signingKey: SigningKeyOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let seq = try parseSeq(seq, option: "--seq")
        let point = try treePoint(size: size, asOf: asOf)
        let (proof, signed) = try signedProof(ledger, at: point, signer: try signingKey.signer()) { try $0.inclusionProof(seq: seq) }
        try writeProofOutput(proof.tlogProof(checkpoint: signed), format: format, checkpoint: signed.checkpoint) { json in
            json.integer("seq", seq)
            json.integer("index", proof.index)
            json.json("hashes", jsonList(proof.hashes.map(\.base64)))
        }
    }
}
