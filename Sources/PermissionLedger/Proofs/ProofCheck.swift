/// Checks RFC 9162 proofs against roots (sections 2.1.3.2 and 2.1.4.2), as an auditor's own verifier does:
/// what `verify-bundle` and the tests use.
public enum ProofCheck {
    /// Whether `proof` shows that the leaf of hash `leaf` is leaf `index` of the tree of `size` leaves whose root
    /// is `root`.
    public static func inclusion(leaf: TreeHash, index: UInt64, size: UInt64, proof: [TreeHash], root: TreeHash) -> Bool {
        guard index < size else { return false }
        var fn = index
        var sn = size - 1
        var r = leaf
        for p in proof {
            guard sn > 0 else { return false }
            if fn & 1 == 1 || fn == sn {
                r = TreeHash.node(p, r)
                shiftToRightChild(&fn, &sn)
            } else {
                r = TreeHash.node(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && r == root
    }

    /// Whether `proof` shows that the tree of `newSize` leaves and root `newRoot` extends the tree of `oldSize`
    /// leaves and root `oldRoot`. Every tree extends the empty one, and a tree extends itself, each with an
    /// empty proof.
    public static func consistency(oldSize: UInt64, oldRoot: TreeHash, newSize: UInt64, newRoot: TreeHash, proof: [TreeHash]) -> Bool {
        guard oldSize <= newSize else { return false }
        if oldSize == 0 { return proof.isEmpty }
        if oldSize == newSize { return proof.isEmpty && oldRoot == newRoot }
        guard !proof.isEmpty else { return false }
        var path = proof
        if oldSize & (oldSize - 1) == 0 { path.insert(oldRoot, at: 0) }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var fr = path[0]
        var sr = path[0]
        for c in path.dropFirst() {
            guard sn > 0 else { return false }
            if fn & 1 == 1 || fn == sn {
                fr = TreeHash.node(c, fr)
                sr = TreeHash.node(c, sr)
                shiftToRightChild(&fn, &sn)
            } else {
                sr = TreeHash.node(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        return fr == oldRoot && sr == newRoot && sn == 0
    }

    /// RFC 9162's "if LSB(fn) is not set, right-shift both fn and sn equally until either LSB(fn) is set or fn
    /// is 0": up past the levels where the node is a left child with no right sibling.
    private static func shiftToRightChild(_ fn: inout UInt64, _ sn: inout UInt64) {
        while fn & 1 == 0 && fn != 0 {
            fn >>= 1
            sn >>= 1
        }
    }
}
