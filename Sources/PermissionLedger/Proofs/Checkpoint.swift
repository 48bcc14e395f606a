import Foundation
import PermissionModel

/// A C2SP `tlog-checkpoint`: the origin of a log, the size of its tree and the tree's root, signed as a C2SP
/// `signed-note` by the log's key (whose name is the origin).
///
/// A ledger's checkpoints have exactly the three lines and no extension line.
public struct Checkpoint: Hashable, Sendable {
    /// The log's origin: its signing key's name.
    public var origin: String
    /// The number of events the tree holds.
    public var size: UInt64
    /// The tree's root (RFC 9162 `MTH`).
    public var root: TreeHash

    /// The checkpoint of the tree of `size` leaves whose root is `root`, of the log named `origin`.
    public init(origin: String, size: UInt64, root: TreeHash) {
        self.origin = origin
        self.size = size
        self.root = root
    }

    /// The note's text: `ORIGIN`, `SIZE` and the base64 root, each followed by a newline.
    public var text: String { "\(origin)\n\(size)\n\(root.base64)\n" }

    /// The checkpoint signed by `signer`, whose name must be the origin.
    func signed(by signer: NoteSigner) throws(LedgerError) -> SignedCheckpoint {
        precondition(signer.name == origin, "a checkpoint is signed by the key named as its origin")
        return SignedCheckpoint(checkpoint: self, note: try SignedNote.sign(text, by: signer))
    }
}

/// A checkpoint with its signatures, as published.
public struct SignedCheckpoint: Hashable, Sendable {
    /// What it says: origin, size and root.
    public let checkpoint: Checkpoint
    /// The signed note that says it: its text and signature lines.
    public let note: SignedNote

    init(checkpoint: Checkpoint, note: SignedNote) {
        self.checkpoint = checkpoint
        self.note = note
    }

    /// The signed note: what `checkpoint` prints, and what proofs end with.
    public var serialized: String { note.serialized }

    /// Parses a signed checkpoint and checks that `verifier` signed it, its origin being the key's name.
    ///
    /// - Throws: ``ProofError`` naming what does not hold.
    public init(parsing text: String, verifier: NoteVerifier) throws(ProofError) {
        let note = try SignedNote(parsing: text, verifier: verifier)
        let lines = note.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard lines.count >= 3 else { throw ProofError("the checkpoint has \(lines.count) lines, not origin, size and root") }
        let origin = String(lines[0])
        guard origin == verifier.name else { throw ProofError("the checkpoint's origin \(quoted(origin)) is not the key's name \(quoted(verifier.name))") }
        let sizeText = lines[1]
        guard let size = UInt64(sizeText), String(size) == sizeText else {
            throw ProofError("the checkpoint's size \(quoted(String(sizeText))) is not a decimal number")
        }
        guard let root = TreeHash(base64: lines[2]) else { throw ProofError("the checkpoint's root is not the base64 of 32 bytes") }
        self.init(checkpoint: Checkpoint(origin: origin, size: size, root: root), note: note)
    }
}
