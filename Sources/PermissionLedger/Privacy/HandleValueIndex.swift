import Foundation
import PermissionModel

/// A subject's handle values (``HandleDirectory``) ordered as the tables order its token handles: by kind, then by
/// the token's text. A value is found by binary search, comparing words, with no hashing.
struct HandleValueIndex {
    /// Where a handle sorts: its kind's place in the order of kinds, then its token.
    private struct Key: Comparable {
        var kindRank: UInt8
        var token: HandleToken

        static func < (a: Key, b: Key) -> Bool {
            a.kindRank != b.kindRank ? a.kindRank < b.kindRank : a.token < b.token
        }
    }

    private let keys: [Key]
    /// Every handle, in the index's order.
    let handles: [CommunicationHandle]

    /// The index of `entries`, each a token and the handle it stands for; of two entries of one token and kind,
    /// the later one holds.
    init(_ entries: [(token: HandleToken, handle: CommunicationHandle)]) {
        let keyed = entries.enumerated().map { (key: Key(kindRank: PackedHandleSet.rank($1.handle.kind), token: $1.token), position: $0) }
        let order = keyed.sorted { $0.key < $1.key || ($0.key == $1.key && $0.position < $1.position) }
        var keys: [Key] = []
        var handles: [CommunicationHandle] = []
        keys.reserveCapacity(order.count)
        handles.reserveCapacity(order.count)
        for item in order {
            if keys.last == item.key {
                handles[handles.count - 1] = entries[item.position].handle
            } else {
                keys.append(item.key)
                handles.append(entries[item.position].handle)
            }
        }
        self.keys = keys
        self.handles = handles
    }

    /// The handle of `kind` whose token is `token`, if the index holds it.
    func handle(kind: CommunicationHandle.Kind, token: HandleToken) -> CommunicationHandle? {
        let key = Key(kindRank: PackedHandleSet.rank(kind), token: token)
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == key ? handles[low] : nil
    }
}
