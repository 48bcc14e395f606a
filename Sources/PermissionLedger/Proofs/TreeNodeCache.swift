import Foundation

/// The hashes of the Merkle tree's large complete subtrees that the readers of one open ledger have read, kept in
/// memory: every proof and root of a large tree goes through the few nodes of its upper levels, which the `tree`
/// table holds far apart, each a page of its own; from memory, a proof costs about the same whatever the log's
/// length.
///
/// A complete subtree's hash never changes: it is a function of its leaves, events that are never rewritten, and
/// a rebuild writes the same bytes again (`verify` checks that it does). So a hash read once from a committed
/// transaction holds for good. Only subtrees of at least `2^minimumLevel` leaves are kept, at most `limit` of
/// them (some 40 MB): when it is full, it is emptied and fills again with what readers use.
final class TreeNodeCache: @unchecked Sendable {
    static let minimumLevel = 8
    static let limit = 1 << 18

    private let lock = NSLock()
    private var nodes: [UInt64: TreeHash] = [:]

    /// The hash of the subtree of level `level` and index `index`, read by `read` the first time.
    func subtree(level: Int, index: UInt64, _ read: () throws -> TreeHash) rethrows -> TreeHash {
        guard level >= Self.minimumLevel else { return try read() }
        // Levels below 64 in the top 6 bits; an index of a level of 8 or more is below 2^56.
        let key = UInt64(level) << 58 | index
        if let known = lock.withLock({ nodes[key] }) { return known }
        let hash = try read()
        lock.withLock {
            if nodes.count >= Self.limit { nodes.removeAll(keepingCapacity: true) }
            nodes[key] = hash
        }
        return hash
    }
}
