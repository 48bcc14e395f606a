internal import LMDB

/// The Merkle tree over the log as the `tree` table holds it (docs/STORAGE.md, "The Merkle tree").
///
/// The entry of `seq` (8 bytes, big-endian) holds the hash of each complete subtree whose last leaf is the
/// event at `seq`, smallest first: its leaf's hash, then, for each level `L` ≥ 1 at which `2^L` divides `seq`, the
/// subtree of the `2^L` leaves ending there — 32 bytes each. The subtree of level `L` and index `j` (leaves
/// `j·2^L` to `(j+1)·2^L − 1`, leaf `i` being the event at `seq` `i + 1`) is so at offset `32·L` of the entry of
/// `seq` `(j+1)·2^L`. An event adds one entry, of one hash in two and of two or more in the rest: about 64 bytes
/// on average.
enum StoredTree {
    /// The lowest level whose subtrees the `treeTop` table holds too: one event in 64 completes one.
    static let upperLevel = 6

    /// The `treeTop` key of the subtree of level `level` and index `index`: the level, then the index (8 bytes,
    /// big-endian), so that each level's subtrees are neighbours.
    static func upperKey(level: Int, index: UInt64) -> [UInt8] {
        var key = [UInt8(level)]
        key.appendSeq(index)
        return key
    }

    /// The hash of the complete subtree of `2^level` leaves starting at leaf `index << level`, as `txn` sees it:
    /// from `top` for the levels it holds.
    static func subtree(_ txn: ReadTransaction, _ tree: Database, top: Database?, level: Int, index: UInt64) throws -> TreeHash {
        guard level >= upperLevel, let top else { return try subtree(txn, tree, level: level, index: index) }
        guard let hash = try txn.get(top, key: upperKey(level: level, index: index)), hash.count == 32 else {
            throw LedgerError(.damaged, "the Merkle tree's upper levels lack the subtree of level \(level) ending at the event", seq: (index + 1) << level)
        }
        return TreeHash(unchecked: Array(hash))
    }

    /// The hash of the complete subtree of `2^level` leaves starting at leaf `index << level`, as `txn` sees it.
    static func subtree(_ txn: ReadTransaction, _ tree: Database, level: Int, index: UInt64) throws -> TreeHash {
        let seq = (index + 1) << level
        return try hash(in: try txn.get(tree, key: Keys.seq(seq)), level: level, seq: seq)
    }

    /// The subtree of level `level` in the entry of `seq` (`nil`: there is none).
    private static func hash(in entry: UnsafeRawBufferPointer?, level: Int, seq: UInt64) throws -> TreeHash {
        guard let entry else {
            throw LedgerError(.damaged, "the Merkle tree has no entry for the event", seq: seq)
        }
        guard entry.count >= 32 * (level + 1), entry.count % 32 == 0 else {
            throw LedgerError(.damaged, "the Merkle tree's entry holds \(entry.count) bytes, not the hashes of its subtrees", seq: seq)
        }
        return TreeHash(unchecked: Array(entry[(32 * level)..<(32 * level + 32)]))
    }

    /// The tree's roots and proofs as `txn` sees it, its upper levels kept in `cache`.
    static func proofs(_ txn: ReadTransaction, _ tree: Database, top: Database?, cache: TreeNodeCache) -> MerkleProofs {
        if let top {
            // Highest levels first; of a very large tree, as many as its levels of fewer than `limit` nodes hold.
            cache.preloadIfWanted { (try? txn.cursor(top)).map { Array(UpperNodes(cursor: $0).prefix(2 * TreeNodeCache.limit)) } ?? [] }
        }
        // The levels the `tree` table alone holds are read through one cursor: a proof's lookups there fall on a
        // page or two near its leaf, which LMDB then searches without descending the tree again.
        let lower = LowerLevels(txn: txn, tree: tree)
        return MerkleProofs { level, index in
            try cache.subtree(level: level, index: index) {
                guard level < upperLevel || top == nil else { return try subtree(txn, tree, top: top, level: level, index: index) }
                return try lower.subtree(level: level, index: index)
            }
        }
    }

    /// Lookups in the `tree` table through one cursor, opened at the first.
    final class LowerLevels {
        let txn: ReadTransaction
        let tree: Database
        private var cursor: Cursor?

        init(txn: ReadTransaction, tree: Database) {
            self.txn = txn
            self.tree = tree
        }

        func subtree(level: Int, index: UInt64) throws -> TreeHash {
            let seq = (index + 1) << level
            if cursor == nil { cursor = try txn.cursor(tree) }
            return try hash(in: try cursor!.seek(Keys.seq(seq))?.value, level: level, seq: seq)
        }
    }

    /// The subtrees the `treeTop` table holds, from its last entry back (highest levels first); rows that are not
    /// a level, an index and a hash are passed over, for the lookups that read them one by one to report.
    struct UpperNodes: Sequence, IteratorProtocol {
        let cursor: Cursor
        private var started = false

        init(cursor: Cursor) { self.cursor = cursor }

        mutating func next() -> (level: Int, index: UInt64, hash: TreeHash)? {
            while let entry = try? (started ? cursor.previous() : cursor.last()) {
                started = true
                guard entry.key.count == 9, entry.value.count == 32 else { continue }
                let index = Keys.decodeSeq(UnsafeRawBufferPointer(rebasing: entry.key[1...]))
                return (Int(entry.key[0]), index, TreeHash(unchecked: Array(entry.value)))
            }
            return nil
        }
    }

    /// The `treeTop` rows of an entry (``TreeAppender/entry(leaf:seq:stored:)``) of the event at `seq`: one for each
    /// subtree of level ``upperLevel`` or more that it completes.
    static func upperRows(of entry: [UInt8], seq: UInt64) -> [(key: [UInt8], hash: ArraySlice<UInt8>)] {
        guard entry.count > 32 * upperLevel else { return [] }
        return (upperLevel..<(entry.count / 32)).map { level in
            (upperKey(level: level, index: (seq >> level) - 1), entry[(32 * level)..<(32 * level + 32)])
        }
    }

    /// The number of hashes the entry of `seq` holds: one, and one per level `L` ≥ 1 at which `2^L` divides it.
    static func hashCount(seq: UInt64) -> Int { seq.trailingZeroBitCount + 1 }
}

/// What adds events' leaves to the tree, one after the other: it keeps the right edge of the tree (the last complete
/// subtree of each level), so that an event's subtrees are hashed without reading the ones before.
struct TreeAppender {
    /// Per level: the seq that ends the last complete subtree of that level made, and its hash.
    private var edge: [(seq: UInt64, hash: TreeHash)] = []

    /// The entry of the event at `seq` (``StoredTree``), whose leaf hash is `leaf`: the leaf, then each subtree it
    /// completes. `stored` gives a subtree of an earlier event (level, index) that this appender did not make.
    mutating func entry(leaf: TreeHash, seq: UInt64, stored: (_ level: Int, _ index: UInt64) throws -> TreeHash) rethrows -> [UInt8] {
        var bytes = leaf.bytes
        var node = leaf
        for level in 1..<StoredTree.hashCount(seq: seq) {
            // The left sibling: the subtree of level `level - 1` that ends just before this one's right child.
            let leftEnd = seq - (UInt64(1) << (level - 1))
            let left = level - 1 < edge.count && edge[level - 1].seq == leftEnd
                ? edge[level - 1].hash
                : try stored(level - 1, (leftEnd >> (level - 1)) - 1)
            node = TreeHash.node(left, node)
            bytes += node.bytes
        }
        for level in 0..<(bytes.count / 32) {
            let hash = TreeHash(unchecked: Array(bytes[(32 * level)..<(32 * level + 32)]))
            if level < edge.count { edge[level] = (seq, hash) } else { edge.append((seq, hash)) }
        }
        return bytes
    }
}
