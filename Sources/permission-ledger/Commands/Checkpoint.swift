import ArgumentParser
import Foundation
import PermissionLedger

struct CheckpointCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Print the signed checkpoint of the ledger's Merkle tree at a point of the log.",
        discussion: """
        A C2SP tlog-checkpoint signed as a C2SP signed-note (Ed25519): the origin, the number of events, the \
        base64 root of the RFC 9162 tree over them, a blank line and the signature line. The key never signs \
        two checkpoints of one size with different roots: each one is first proved consistent with the \
        largest it signed before, recorded in FILE.signed beside the key.

        Example:
          permission-ledger checkpoint --ledger family.ledger --signing-key signing.key > checkpoint
        """)

    @OptionGroup var ledger: LedgerOption
    @OptionGroup var asOf: AsOfHeadOption
    @OptionGroup var signingKey: SigningKeyOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let signer = try signingKey.signer()
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let signed: SignedCheckpoint
        do {
            signed = try opened.checkpoint(asOf: point ?? .seq(opened.head().seq), signer: signer)
        } catch {
            throw ToolFailure(error)
        }
        try writeProofOutput(signed.serialized, format: format, checkpoint: signed.checkpoint) { _ in }
    }
}
