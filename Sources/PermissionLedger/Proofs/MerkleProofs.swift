/// RFC 9162's Merkle tree hashes and proofs (section 2.1), computed from the hashes of complete subtrees.
///
/// A tree stores the hash of each complete subtree it has: the subtree of `2^level` leaves starting at leaf
/// `index × 2^level`. The root of any size, and any inclusion or consistency proof, is made of such subtrees
/// and of nodes over them, so it takes `O(log n)` of them (`O(log² n)` at worst for a proof), never the leaves.
struct MerkleProofs {
    /// The hash of the complete subtree of `2^level` leaves starting at leaf `index << level`.
    let subtree: (_ level: Int, _ index: UInt64) throws -> TreeHash

    /// The root of the tree of the first `size` leaves (RFC 9162 `MTH(D[0:size])`).
    func root(size: UInt64) throws -> TreeHash {
        size == 0 ? TreeHash.empty : try hash(start: 0, count: size)
    }

    /// `MTH(D[start:start+count])`, `count` > 0, for the ranges the RFC's recursions meet: `start` is a multiple of
    /// the largest power of two not above `count`, so each complete part is a stored subtree.
    private func hash(start: UInt64, count: UInt64) throws -> TreeHash {
        if count & (count - 1) == 0 {
            let level = count.trailingZeroBitCount
            precondition(start & (count - 1) == 0, "a subtree of \(count) leaves cannot start at leaf \(start)")
            return try subtree(level, start >> level)
        }
        let split = Self.largestPowerOfTwo(below: count)
        return TreeHash.node(try hash(start: start, count: split), try hash(start: start + split, count: count - split))
    }

    /// The inclusion proof of leaf `index` in the tree of `size` leaves (RFC 9162 section 2.1.3.1, `PATH`), from
    /// the leaf up. `index` < `size`.
    func inclusionProof(index: UInt64, size: UInt64) throws -> [TreeHash] {
        precondition(index < size, "leaf \(index) is not in a tree of \(size)")
        var proof: [TreeHash] = []
        try path(index, start: 0, count: size, into: &proof)
        return proof
    }

    private func path(_ index: UInt64, start: UInt64, count: UInt64, into proof: inout [TreeHash]) throws {
        guard count > 1 else { return }
        let split = Self.largestPowerOfTwo(below: count)
        if index < split {
            try path(index, start: start, count: split, into: &proof)
            proof.append(try hash(start: start + split, count: count - split))
        } else {
            try path(index - split, start: start + split, count: count - split, into: &proof)
            proof.append(try hash(start: start, count: split))
        }
    }

    /// The consistency proof that the tree of `newSize` leaves extends the tree of `oldSize` (RFC 9162 section
    /// 2.1.4.1, `PROOF`): empty when `oldSize` is 0 or equals `newSize`. `oldSize` ≤ `newSize`.
    func consistencyProof(oldSize: UInt64, newSize: UInt64) throws -> [TreeHash] {
        precondition(oldSize <= newSize, "a tree of \(newSize) cannot extend one of \(oldSize)")
        guard oldSize > 0, oldSize < newSize else { return [] }
        var proof: [TreeHash] = []
        try subproof(oldSize, start: 0, count: newSize, startsTree: true, into: &proof)
        return proof
    }

    private func subproof(_ old: UInt64, start: UInt64, count: UInt64, startsTree: Bool, into proof: inout [TreeHash]) throws {
        if old == count {
            if !startsTree { proof.append(try hash(start: start, count: count)) }
            return
        }
        let split = Self.largestPowerOfTwo(below: count)
        if old <= split {
            try subproof(old, start: start, count: split, startsTree: startsTree, into: &proof)
            proof.append(try hash(start: start + split, count: count - split))
        } else {
            try subproof(old - split, start: start + split, count: count - split, startsTree: false, into: &proof)
            proof.append(try hash(start: start, count: split))
        }
    }

    /// The largest power of two smaller than `n` (> 1): RFC 9162's `k`.
    static func largestPowerOfTwo(below n: UInt64) -> UInt64 {
        UInt64(1) << (63 - (n - 1).leadingZeroBitCount)
    }
}
