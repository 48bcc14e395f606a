import Foundation

/// The proof, in an audit report, that the child's records are the ones the ledger holds: the Merkle tree's root
/// at the report's point (signed when a signing key was given), and the result of checking each of the child's
/// events against it, as the audit bundle's proofs let an auditor check it again with tools that are not ours.
public struct ReportIntegrity: Hashable, Sendable {
    /// The tree's size (the report's point) and root; `nil` for a ledger of format 1, which keeps no tree.
    public var tree: Checkpoint?
    /// The signed checkpoint (a C2SP signed note), when the report was made with a signing key.
    public var signedCheckpoint: String?
    /// The signing key's verifier key, when the report was made with a signing key.
    public var verifierKey: String?
    /// The child's events whose leaf and inclusion proof were checked against the tree's root.
    public var checkedEvents: Int
    /// The first check that failed, or `nil` when every one passed.
    public var problem: String?
    /// The result of a whole-ledger ``Ledger/verify(progress:)``, when the report's maker ran one.
    public var verification: VerificationReport?

    /// Whether the child's events were checked and every check passed (and the whole ledger's, when it ran).
    public var isIntact: Bool { tree != nil && problem == nil && verification?.isIntact != false }

    init(view: LedgerView, seqs: [UInt64], signer: CheckpointSigner?, verification: VerificationReport?) throws {
        self.verification = verification
        checkedEvents = 0
        guard view.tables.tree != nil else {
            tree = nil
            problem = "this ledger keeps no Merkle tree (format 1): run permission-ledger migrate"
            return
        }
        if let signer {
            let signed = try signer.sign(view)
            tree = signed.checkpoint
            signedCheckpoint = signed.serialized
            verifierKey = signer.signer.verifierKey
        } else {
            let (size, root) = try view.treeHead()
            tree = Checkpoint(origin: "", size: size, root: root)
        }
        let root = tree!.root
        for seq in seqs {
            do {
                let leaf = TreeHash.leaf(try view.leafData(seq: seq))
                let proof = try view.inclusionProof(seq: seq)
                guard ProofCheck.inclusion(leaf: leaf, index: seq - 1, size: proof.size, proof: proof.hashes, root: root) else {
                    problem = "seq \(seq): its inclusion proof does not lead to the tree's root"
                    return
                }
            } catch let error as LedgerError {
                problem = "seq \(seq): \(error.message)"
                return
            }
            checkedEvents += 1
        }
    }
}
