import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// The in-memory upper levels of the Merkle tree (`TreeNodeCache`): what they give is what the tables hold, read
/// once, and loaded in one pass once readers have missed enough.
@Suite struct TreeNodeCacheTests {
    /// The complete subtrees of a tree of `count` leaves, as an appender stores them, and a lookup into them that
    /// counts the reads of kept levels.
    final class StoredSubtrees: @unchecked Sendable {
        var entries: [UInt64: [UInt8]] = [:]
        var upperReads = 0

        init(count: Int) {
            var appender = TreeAppender()
            for seq in UInt64(1)...UInt64(count) {
                entries[seq] = appender.entry(leaf: .leaf(Array("leaf \(seq)".utf8)), seq: seq) { _, _ in preconditionFailure() }
            }
        }

        func subtree(_ level: Int, _ index: UInt64) -> TreeHash {
            if level >= TreeNodeCache.minimumLevel { upperReads += 1 }
            return uncounted(level, index)
        }

        /// The same, not counted: the proofs the cached ones are compared with.
        func uncounted(_ level: Int, _ index: UInt64) -> TreeHash {
            let entry = entries[(index + 1) << level]!
            return TreeHash(bytes: entry[(32 * level)..<(32 * level + 32)])!
        }

        /// Every kept subtree, highest level first, as the `treeTop` table gives them read from its end.
        var upperNodes: [(level: Int, index: UInt64, hash: TreeHash)] {
            entries.keys.sorted().flatMap { seq in
                StoredTree.upperRows(of: entries[seq]!, seq: seq).map { row in
                    (Int(row.key[0]), Keys.decodeSeq(row.key.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[1...]) }), TreeHash(bytes: row.hash)!)
                }
            }.sorted { ($0.level, $0.index) > ($1.level, $1.index) }
        }
    }

    /// A level that grows as a log does, one index after the other, past the 2 MB from which its memory is advised
    /// as huge pages: each growth keeps every hash kept before it.
    @Test func aLevelKeepsItsHashesAsItGrows() {
        let cache = TreeNodeCache()
        let level = TreeNodeCache.minimumLevel
        func hash(_ index: UInt64) -> TreeHash { .leaf(Array("node \(index)".utf8)) }
        let count: UInt64 = 70_000  // 2.1 MB of hashes
        for index in 0..<count {
            #expect(cache.subtree(level: level, index: index) { hash(index) } == hash(index))
        }
        var reads = 0
        for index in 0..<count where cache.subtree(level: level, index: index, { reads += 1; return TreeHash.empty }) != hash(index) {
            Issue.record("index \(index) of level \(level) is not the hash kept for it")
            break
        }
        #expect(reads == 0)
    }

    @Test func proofsThroughTheCacheAreTheTreesAndReadEachUpperSubtreeOnce() throws {
        let stored = StoredSubtrees(count: 5_000)
        let direct = MerkleProofs { level, index in stored.uncounted(level, index) }
        let cache = TreeNodeCache()
        let cached = MerkleProofs { level, index in cache.subtree(level: level, index: index) { stored.subtree(level, index) } }
        for seq in stride(from: UInt64(1), through: 5_000, by: 97) {
            #expect(try cached.inclusionProof(index: seq - 1, size: 5_000) == direct.inclusionProof(index: seq - 1, size: 5_000))
            #expect(try cached.consistencyProof(oldSize: seq, newSize: 5_000) == direct.consistencyProof(oldSize: seq, newSize: 5_000))
        }
        // Read again, no upper subtree is read twice.
        stored.upperReads = 0
        for seq in stride(from: UInt64(1), through: 5_000, by: 97) {
            _ = try cached.inclusionProof(index: seq - 1, size: 5_000)
            _ = try cached.consistencyProof(oldSize: seq, newSize: 5_000)
        }
        #expect(stored.upperReads == 0)
        #expect(cache.wantsPreload)
    }

    @Test func afterThePreloadNoUpperSubtreeIsReadAndEveryProofIsTheTrees() throws {
        let stored = StoredSubtrees(count: 5_000)
        let direct = MerkleProofs { level, index in stored.uncounted(level, index) }
        let cache = TreeNodeCache(preloadAfterMisses: 3)
        #expect(!cache.wantsPreload)
        let cached = MerkleProofs { level, index in cache.subtree(level: level, index: index) { stored.subtree(level, index) } }
        _ = try cached.inclusionProof(index: 4_321, size: 5_000)
        #expect(cache.wantsPreload)
        cache.preload(stored.upperNodes)
        #expect(!cache.wantsPreload)
        stored.upperReads = 0
        for seq in UInt64(1)...5_000 {
            #expect(try cached.inclusionProof(index: seq - 1, size: 5_000) == direct.inclusionProof(index: seq - 1, size: 5_000))
        }
        #expect(try cached.root(size: 4_096) == direct.root(size: 4_096))
        #expect(stored.upperReads == 0)
    }

    @Test func aSubtreeWhoseIndexIsBeyondTheLimitIsReadEachTime() {
        let cache = TreeNodeCache()
        var reads = 0
        let hash = TreeHash.leaf([1])
        for _ in 0..<2 {
            #expect(cache.subtree(level: TreeNodeCache.minimumLevel, index: UInt64(TreeNodeCache.limit)) { reads += 1; return hash } == hash)
            #expect(cache.subtree(level: TreeNodeCache.minimumLevel - 1, index: 0) { reads += 1; return hash } == hash)
            #expect(cache.subtree(level: 20, index: 3) { reads += 1; return hash } == hash)
        }
        #expect(reads == 5)
    }

    /// A ledger's own `treeTop`, read from its end, fills a cache whose proofs are those of the `tree` table alone.
    @Test func aLedgersUpperLevelsLoadedInOnePassGiveItsProofs() async throws {
        try await withTemporaryDirectory { directory in
            let ledger = try Ledger(path: directory + "/ledger", options: .seeded())
            try ledger.appendSynchronously(StreamedAppendTests.permissionEvents(count: 700))
            try ledger.read { view in
                let tree = try #require(view.tables.tree)
                let direct = MerkleProofs { level, index in try StoredTree.subtree(view.txn, tree, level: level, index: index) }
                let cache = TreeNodeCache(preloadAfterMisses: 0)
                let cached = StoredTree.proofs(view.txn, tree, top: view.tables.treeTop, cache: cache)
                #expect(!cache.wantsPreload)
                // Every complete subtree of 64 leaves or more is in memory: a lookup of one reads nothing.
                var reads = 0
                for level in 6...9 {
                    for index in 0..<UInt64(700 >> level) {
                        _ = cache.subtree(level: level, index: index) { reads += 1; return TreeHash.empty }
                    }
                }
                #expect(reads == 0)
                for seq in UInt64(1)...700 {
                    #expect(try cached.inclusionProof(index: seq - 1, size: 700) == direct.inclusionProof(index: seq - 1, size: 700))
                }
            }
        }
    }
}
