import ArgumentParser
import Foundation
import PermissionLedger

/// The point a proof's tree ends at: `seq:M` from `--size` (or `--to`), else `--as-of`, else `nil` (the head).
/// Both given is wrong usage.
func treePoint(size: String?, asOf: AsOfHeadOption, option: String = "--size") throws -> AsOf? {
    let point = try asOf.point()
    guard let size else { return point }
    guard point == nil else { throw ToolFailure(.usage, "usage: give \(option) or --as-of, not both") }
    return .seq(try parseSeq(size, option: option))
}

/// A proof made by `prove` in the tree up to `point` (default: the head), with the checkpoint of that tree, signed.
func signedProof<Proof>(
    _ ledger: LedgerOption, at point: AsOf?, signer: CheckpointSigner, _ prove: (LedgerView) throws -> Proof
) throws -> (Proof, SignedCheckpoint) {
    let opened = try ledger.openForReading()
    do {
        let signed = try opened.checkpoint(asOf: try point ?? .seq(opened.head().seq), signer: signer)
        return (try opened.read(asOf: .seq(signed.checkpoint.size), retries: Ledger.readRetries, prove), signed)
    } catch {
        throw ToolFailure(error)
    }
}

/// Writes a proof's or checkpoint's text: as it is (`table`, the default), as a JSON object that holds it with
/// the checkpoint's fields and `more`, or as one CSV row of the checkpoint's fields.
func writeProofOutput(_ text: String, format: FormatOption, checkpoint: Checkpoint, more: (inout JSONObjectWriter) -> Void) throws {
    switch format.resolved {
    case .table:
        try writeOut(text, terminator: "")
    case .json:
        var json = JSONObjectWriter()
        json.string("origin", checkpoint.origin)
        json.integer("size", checkpoint.size)
        json.string("root", checkpoint.root.base64)
        more(&json)
        json.string("text", text)
        try writeOut(json.text)
    case .csv:
        var table = Table("origin", "size", "root")
        table.add(checkpoint.origin, String(checkpoint.size), checkpoint.root.base64)
        try writeOut(table.csv(), terminator: "")
    }
}

func jsonList(_ values: [String]) -> String {
    "[" + values.map(JSONObjectWriter.string).joined(separator: ",") + "]"
}
