import Foundation
internal import LMDB

extension LedgerView {
    /// The Merkle tree over the log up to the point: its size (the point's `seq`) and root.
    ///
    /// - Throws: ``LedgerError`` when the ledger keeps no tree: one of format 1, or one made by an older
    ///   PermissionLedger and not yet opened for writing.
    public func treeHead() throws -> (size: UInt64, root: TreeHash) {
        (point.seq, try proofs().root(size: point.seq))
    }

    /// The proof that the event at `seq` is in the tree up to the point.
    ///
    /// - Throws: ``LedgerError`` (`.notFound` when `seq` is 0 or after the point).
    public func inclusionProof(seq: UInt64) throws -> InclusionProof {
        guard seq >= 1, seq <= point.seq else {
            throw LedgerError(.notFound, "seq \(seq) is not in the tree of \(point.seq) events")
        }
        return InclusionProof(index: seq - 1, size: point.seq, hashes: try proofs().inclusionProof(index: seq - 1, size: point.seq))
    }

    /// The proof that the tree up to the point extends the tree of its first `oldSize` events.
    ///
    /// - Throws: ``LedgerError`` (`.notFound` when `oldSize` is after the point).
    public func consistencyProof(fromSize oldSize: UInt64) throws -> ConsistencyProof {
        guard oldSize <= point.seq else {
            throw LedgerError(.notFound, "a tree of \(oldSize) events is larger than the tree of \(point.seq) it would be proved in")
        }
        return ConsistencyProof(oldSize: oldSize, newSize: point.seq, hashes: try proofs().consistencyProof(oldSize: oldSize, newSize: point.seq))
    }

    /// The proof that the tree of the first `newSize` events extends the tree of the first `oldSize`, both within the
    /// log (the point aside).
    func consistencyProof(oldSize: UInt64, newSize: UInt64) throws -> [TreeHash] {
        precondition(oldSize <= newSize && newSize <= head.seq, "both trees are within the log")
        return try proofs().consistencyProof(oldSize: oldSize, newSize: newSize)
    }

    /// The leaf data of the event at `seq` (docs/STORAGE.md, "Leaf data"), made again from its record and checked
    /// against the leaf hash the tree holds.
    ///
    /// - Throws: ``LedgerError`` (`.notFound` for an event after the point, `.damaged` when the tree does not
    ///   hold the leaf the record gives).
    public func leafData(seq: UInt64) throws -> [UInt8] {
        let tree = try storedTree()
        guard seq >= 1, seq <= point.seq else { throw LedgerError(.notFound, "seq \(seq) is not in the tree of \(point.seq) events") }
        guard let stored = try txn.get(tables.events, key: Keys.seq(seq)), stored.count > 32 else {
            throw LedgerError(.damaged, "event missing from the log", seq: seq)
        }
        let record = [UInt8](UnsafeRawBufferPointer(rebasing: stored[32...]))
        let data = try LeafData.of(storedRecord: record, seq: seq) { subject in
            try txn.latest(tables.subjectEvents, Keys.subjectPrefix(subject), atMost: seq - 1)?.seq
        }
        guard let data else {
            throw LedgerError(.notFound, "a ledger of format 1 keeps no Merkle tree")
        }
        guard try StoredTree.subtree(txn, tree, level: 0, index: seq - 1) == .leaf(data) else {
            throw LedgerError(.damaged, "the Merkle tree's leaf is not the one of the event's record", seq: seq)
        }
        return data
    }

    /// The `tree` table: absent in a ledger of format 1, and in one made by an older PermissionLedger and not yet
    /// opened for writing (which rebuilds its projections, tree and all).
    func storedTree() throws -> Database {
        guard let tree = tables.tree else {
            guard tables.keys != nil else {
                throw LedgerError(.notFound, "a ledger of format 1 keeps no Merkle tree: migrate it to the current format first (permission-ledger migrate OLD NEW)")
            }
            throw LedgerError(.notFound, "the ledger keeps no Merkle tree yet: an older PermissionLedger made it; open it for writing once (an import) to build it")
        }
        return tree
    }

    private func proofs() throws -> MerkleProofs { StoredTree.proofs(txn, try storedTree(), top: tables.treeTop, cache: tables.treeNodes) }
}
