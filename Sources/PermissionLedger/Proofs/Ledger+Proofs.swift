import Foundation

extension Ledger {
    /// The checkpoint of the tree as of `asOf` (of the events up to that point), signed by `signer` once it is
    /// proved of one history with every checkpoint the key signed before (``CheckpointSigner``).
    ///
    /// ```swift
    /// let signer = try CheckpointSigner(keyFile: "/etc/ledger/signing.key")
    /// let checkpoint = try ledger.checkpoint(signer: signer)
    /// print(checkpoint.serialized, terminator: "")   // origin, size, root, blank line, signature
    /// ```
    ///
    /// - Throws: ``LedgerError``: `.damaged` when the key signed a checkpoint this ledger's tree does not extend.
    public func checkpoint(asOf: AsOf = .now, signer: CheckpointSigner) throws -> SignedCheckpoint {
        try read(asOf: asOf) { try signer.sign($0) }
    }

    /// The proof that the event at `seq` is in the tree of the first `size` events (default: the head).
    public func inclusionProof(seq: UInt64, size: UInt64? = nil) throws -> InclusionProof {
        try read(asOf: size.map { .seq($0) } ?? .now) { try $0.inclusionProof(seq: seq) }
    }

    /// The proof that the tree of the first `newSize` events (default: the head) extends the tree of the first
    /// `oldSize`.
    public func consistencyProof(from oldSize: UInt64, to newSize: UInt64? = nil) throws -> ConsistencyProof {
        try read(asOf: newSize.map { .seq($0) } ?? .now) { try $0.consistencyProof(fromSize: oldSize) }
    }

    /// The leaf data of the event at `seq` (docs/STORAGE.md, "Leaf data").
    public func leafData(seq: UInt64) throws -> [UInt8] {
        try read { try $0.leafData(seq: seq) }
    }
}
