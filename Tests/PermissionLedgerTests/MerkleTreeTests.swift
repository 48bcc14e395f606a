import Crypto
import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// RFC 9162's Merkle tree: the test vectors of transparency-dev/merkle (the 8 leaves of the RFC 6962 test data, as
/// C2SP's and Go's tests use them), and every root and proof of trees up to 64 leaves compared with the RFC's own
/// recursive definitions, written out here from the RFC alone.
@Suite struct MerkleTreeTests {
    /// The leaves of the RFC 6962 / transparency-dev test data.
    static let leaves: [[UInt8]] = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"].map(bytes)

    /// The roots of the trees of 0 to 8 of those leaves.
    static let roots = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
        "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
        "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
        "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
        "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
    ]

    @Test func theRootsOfTheTestVectorsAreReproduced() throws {
        let tree = TestTree(leaves: Self.leaves)
        for (size, root) in Self.roots.enumerated() {
            #expect(try tree.proofs.root(size: UInt64(size)).description == root, "size \(size)")
        }
        #expect(try tree.proofs.root(size: 7).base64 == "3bib5AOAnjJXUNPSY814kpwpQreUKjS3fhIslZSnTIw=")
        #expect(try tree.proofs.root(size: 8).base64 == "XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=")
    }

    @Test func theInclusionProofsOfTheTestVectorsAreReproduced() throws {
        let tree = TestTree(leaves: Self.leaves)
        let l1 = "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"
        let l4 = "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"
        let n01 = "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"
        let n11 = "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"
        let n31 = "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"
        let n02 = "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"
        let n12 = "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"
        let vectors: [(index: UInt64, size: UInt64, proof: [String])] = [
            (0, 8, [l1, n11, n12]),
            (5, 8, [l4, n31, n02]),
            (2, 3, [n01]),
            (1, 5, ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d", n11, l4]),
            (0, 1, []),
        ]
        for vector in vectors {
            let proof = try tree.proofs.inclusionProof(index: vector.index, size: vector.size)
            #expect(proof.map(\.description) == vector.proof, "leaf \(vector.index) of \(vector.size)")
        }
    }

    @Test func theConsistencyProofsOfTheTestVectorsAreReproduced() throws {
        let tree = TestTree(leaves: Self.leaves)
        let vectors: [(old: UInt64, new: UInt64, proof: [String])] = [
            (1, 1, []),
            (1, 8, ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
                    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
            (6, 8, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
            (2, 5, ["5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
                    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
            (6, 7, ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
                    "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
                    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
        ]
        for vector in vectors {
            let proof = try tree.proofs.consistencyProof(oldSize: vector.old, newSize: vector.new)
            #expect(proof.map(\.description) == vector.proof, "\(vector.old) → \(vector.new)")
            #expect(ProofCheck.consistency(
                oldSize: vector.old, oldRoot: try tree.proofs.root(size: vector.old),
                newSize: vector.new, newRoot: try tree.proofs.root(size: vector.new), proof: proof))
        }
    }

    /// Every root, inclusion proof and consistency proof of trees of 1 to 64 leaves: equal to the RFC's recursive
    /// definitions, accepted by the checks, and refused with one hash changed or the wrong index or size.
    @Test func everyProofOfTreesUpTo64LeavesIsTheRFCsAndVerifies() throws {
        let leaves = (0..<64).map { Array("leaf \($0)".utf8) }
        let tree = TestTree(leaves: leaves)
        let hashes = leaves.map { TreeHash.leaf($0) }
        for size in 1...64 {
            let root = try tree.proofs.root(size: UInt64(size))
            #expect(root == Reference.mth(hashes[0..<size]), "root of \(size)")
            for index in 0..<size {
                let proof = try tree.proofs.inclusionProof(index: UInt64(index), size: UInt64(size))
                #expect(proof == Reference.path(index, hashes[0..<size]), "leaf \(index) of \(size)")
                #expect(ProofCheck.inclusion(leaf: hashes[index], index: UInt64(index), size: UInt64(size), proof: proof, root: root))
                #expect(!ProofCheck.inclusion(leaf: TreeHash.leaf([1]), index: UInt64(index), size: UInt64(size), proof: proof, root: root))
                if size > 1 {
                    #expect(!ProofCheck.inclusion(leaf: hashes[index], index: UInt64((index + 1) % size), size: UInt64(size), proof: proof, root: root))
                    #expect(!ProofCheck.inclusion(leaf: hashes[index], index: UInt64(index), size: UInt64(size), proof: tampered(proof), root: root))
                }
            }
            for old in 1...size {
                let proof = try tree.proofs.consistencyProof(oldSize: UInt64(old), newSize: UInt64(size))
                let oldRoot = try tree.proofs.root(size: UInt64(old))
                #expect(proof == (old == size ? [] : Reference.proof(old, hashes[0..<size])), "\(old) → \(size)")
                #expect(ProofCheck.consistency(oldSize: UInt64(old), oldRoot: oldRoot, newSize: UInt64(size), newRoot: root, proof: proof))
                if old < size {
                    #expect(!ProofCheck.consistency(oldSize: UInt64(old), oldRoot: oldRoot, newSize: UInt64(size), newRoot: root, proof: tampered(proof)))
                    #expect(!ProofCheck.consistency(oldSize: UInt64(old), oldRoot: TreeHash.leaf([2]), newSize: UInt64(size), newRoot: root, proof: proof))
                }
            }
        }
    }

    @Test func aTreeAppendedOneLeafAtATimeStoresWhatTheTestTreeHolds() throws {
        let leaves = (0..<100).map { TreeHash.leaf(Array("leaf \($0)".utf8)) }
        var entries: [UInt64: [UInt8]] = [:]
        var appender = TreeAppender()
        for (index, leaf) in leaves.enumerated() {
            let seq = UInt64(index + 1)
            entries[seq] = appender.entry(leaf: leaf, seq: seq) { _, _ in preconditionFailure("the appender holds the edge") }
        }
        // Another appender that starts in the middle reads the edge it does not hold from what was stored.
        var late = TreeAppender()
        let stored: (Int, UInt64) throws -> TreeHash = { level, index in
            let entry = entries[(index + 1) << level]!
            return TreeHash(bytes: entry[(32 * level)..<(32 * level + 32)])!
        }
        for seq in UInt64(65)...100 {
            #expect(try late.entry(leaf: leaves[Int(seq) - 1], seq: seq, stored: stored) == entries[seq])
        }
        let proofs = MerkleProofs(subtree: stored)
        for size in 1...100 {
            #expect(try proofs.root(size: UInt64(size)) == Reference.mth(leaves[0..<size]))
        }
    }

    private func tampered(_ proof: [TreeHash]) -> [TreeHash] {
        guard !proof.isEmpty else { return [TreeHash.leaf([3])] }
        var changed = proof
        var bytes = changed[changed.count / 2].bytes
        bytes[7] ^= 1
        changed[changed.count / 2] = TreeHash(bytes: bytes)!
        return changed
    }
}

/// RFC 9162 section 2.1's definitions, as recursions over the leaf hashes.
enum Reference {
    static func mth(_ leaves: ArraySlice<TreeHash>) -> TreeHash {
        if leaves.isEmpty { return TreeHash.empty }
        if leaves.count == 1 { return leaves.first! }
        let k = largestPowerOfTwo(below: leaves.count)
        return TreeHash.node(mth(leaves.prefix(k)), mth(leaves.dropFirst(k)))
    }

    static func path(_ m: Int, _ leaves: ArraySlice<TreeHash>) -> [TreeHash] {
        if leaves.count == 1 { return [] }
        let k = largestPowerOfTwo(below: leaves.count)
        return m < k
            ? path(m, leaves.prefix(k)) + [mth(leaves.dropFirst(k))]
            : path(m - k, leaves.dropFirst(k)) + [mth(leaves.prefix(k))]
    }

    static func proof(_ m: Int, _ leaves: ArraySlice<TreeHash>) -> [TreeHash] { subproof(m, leaves, true) }

    static func subproof(_ m: Int, _ leaves: ArraySlice<TreeHash>, _ b: Bool) -> [TreeHash] {
        if m == leaves.count { return b ? [] : [mth(leaves)] }
        let k = largestPowerOfTwo(below: leaves.count)
        return m <= k
            ? subproof(m, leaves.prefix(k), b) + [mth(leaves.dropFirst(k))]
            : subproof(m - k, leaves.dropFirst(k), false) + [mth(leaves.prefix(k))]
    }

    static func largestPowerOfTwo(below n: Int) -> Int {
        var k = 1
        while k * 2 < n { k *= 2 }
        return k
    }
}

/// A tree of given leaves whose complete subtrees are computed by ``Reference/mth(_:)``.
struct TestTree {
    let hashes: [TreeHash]

    init(leaves: [[UInt8]]) { hashes = leaves.map { TreeHash.leaf($0) } }

    var proofs: MerkleProofs {
        MerkleProofs { level, index in
            let start = Int(index) << level
            return Reference.mth(hashes[start..<(start + (1 << level))])
        }
    }
}

private func bytes(_ hex: String) -> [UInt8] {
    stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
}
