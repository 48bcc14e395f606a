import Foundation

/// The hashes of the Merkle tree's large complete subtrees that the readers of one open ledger have read, kept in
/// memory: every proof and root of a large tree goes through the few nodes of its upper levels, which the `tree`
/// table holds far apart, each a page of its own; from memory, a proof costs about the same whatever the log's
/// length.
///
/// A complete subtree's hash never changes: it is a function of its leaves, events that are never rewritten, and
/// a rebuild writes the same bytes again (`verify` checks that it does). So a hash read once from a committed
/// transaction holds for good. Only subtrees of at least `2^minimumLevel` leaves are kept.
///
/// Each level is one array of hashes by index, so that a lookup is one read at a known place: the upper levels of
/// a large tree are a few kilobytes that stay in the processor's caches, and only the lowest kept levels are large.
/// A level is kept while its indexes stay below ``limit`` (8 MB of hashes): a tree of more than `2^24` events
/// reads its lowest kept level's subtrees from the table each time.
///
/// A reader that serves many proofs (a server, a bundle) would read most of these nodes one cold page at a time.
/// Once readers have missed 64 times (``preloadAfterMisses``), the next one loads the `treeTop` table in one pass
/// (``preload(_:)``): a sequential read of a few megabytes, which a command that asks for one proof never pays.
final class TreeNodeCache: @unchecked Sendable {
    static let minimumLevel = StoredTree.upperLevel
    static let limit = 1 << 18

    /// How many lookups that missed make the next reader load the upper levels in one pass.
    let preloadAfterMisses: Int

    /// One level's hashes: 32 bytes at offset `32 · index`, and which indexes are set.
    private struct Level {
        var hashes = HashMemory(count: 0)
        var present: [UInt64] = []

        func hash(_ index: Int) -> TreeHash? {
            guard index < present.count * 64, present[index >> 6] & (1 << (index & 63)) != 0 else { return nil }
            return TreeHash(unchecked: Array(UnsafeRawBufferPointer(start: hashes.start + 32 * index, count: 32)))
        }

        mutating func set(_ index: Int, _ hash: TreeHash) {
            if index >= present.count * 64 {
                // Room for twice as many, so that a growing tree extends each level a few times only.
                let words = min(max((index >> 6) + 1, present.count * 2), TreeNodeCache.limit >> 6)
                present.append(contentsOf: repeatElement(0, count: words - present.count))
                let grown = HashMemory(count: 64 * words)
                grown.start.copyMemory(from: hashes.start, byteCount: 32 * hashes.count)
                hashes = grown
            }
            hash.bytes.withUnsafeBytes { (hashes.start + 32 * index).copyMemory(from: $0.baseAddress!, byteCount: 32) }
            present[index >> 6] |= 1 << (index & 63)
        }
    }

    /// The memory of one level's hashes, zeroed. A level of 2 MB or more is aligned to 2 MB and, on Linux, advised
    /// as transparent huge pages: a proof reads one hash at a random place of each large level, and with small pages
    /// each such read would also miss the processor's TLB (under a hypervisor, a walk of two page tables).
    private final class HashMemory {
        static let hugePage = 2 << 20
        let start: UnsafeMutableRawPointer
        /// The hashes it has room for.
        let count: Int

        init(count: Int) {
            self.count = count
            let size = max(32 * count, 64)
            let huge = size >= Self.hugePage
            let rounded = huge ? (size + Self.hugePage - 1) / Self.hugePage * Self.hugePage : size
            var memory: UnsafeMutableRawPointer?
            guard posix_memalign(&memory, huge ? Self.hugePage : 64, rounded) == 0, let memory else {
                fatalError("out of memory for \(rounded) bytes of Merkle tree hashes")
            }
            #if os(Linux)
            if huge { _ = madvise(memory, rounded, Int32(MADV_HUGEPAGE)) }
            #endif
            memory.initializeMemory(as: UInt8.self, repeating: 0, count: rounded)
            start = memory
        }

        deinit { free(start) }
    }

    private let lock = NSLock()
    private var levels: [Level] = []
    private var misses = 0
    private var preloaded = false

    init(preloadAfterMisses: Int = 64) { self.preloadAfterMisses = preloadAfterMisses }

    /// Whether readers missed often enough that loading the upper levels in one pass pays.
    var wantsPreload: Bool { lock.withLock { !preloaded && misses >= preloadAfterMisses } }

    /// Once readers have missed often enough, keeps the subtrees `load` reads (the upper levels as `treeTop` holds
    /// them). One reader loads them, outside the lock, so that the others' lookups do not wait on its reads.
    func preloadIfWanted(_ load: () -> [(level: Int, index: UInt64, hash: TreeHash)]) {
        let claimed = lock.withLock { () -> Bool in
            guard !preloaded, misses >= preloadAfterMisses else { return false }
            preloaded = true
            return true
        }
        if claimed { preload(load()) }
    }

    /// Keeps the subtrees `nodes` gives (the upper levels as `treeTop` holds them), those that a level keeps.
    func preload(_ nodes: some Sequence<(level: Int, index: UInt64, hash: TreeHash)>) {
        lock.withLock {
            for node in nodes { keep(node.hash, level: node.level, index: node.index) }
            preloaded = true
        }
    }

    /// The hash of the subtree of level `level` and index `index`, read by `read` the first time.
    func subtree(level: Int, index: UInt64, _ read: () throws -> TreeHash) rethrows -> TreeHash {
        guard level >= Self.minimumLevel, index < Self.limit else { return try read() }
        let known = lock.withLock { level - Self.minimumLevel < levels.count ? levels[level - Self.minimumLevel].hash(Int(index)) : nil }
        if let known { return known }
        let hash = try read()
        lock.withLock {
            keep(hash, level: level, index: index)
            misses += 1
        }
        return hash
    }

    /// Keeps `hash` as the subtree of `level` and `index`, when the cache keeps that level and index. The caller
    /// holds the lock.
    private func keep(_ hash: TreeHash, level: Int, index: UInt64) {
        guard level >= Self.minimumLevel, level < 64, index < Self.limit, hash.bytes.count == 32 else { return }
        while levels.count <= level - Self.minimumLevel { levels.append(Level()) }
        levels[level - Self.minimumLevel].set(Int(index), hash)
    }
}
