internal import Crypto
import Foundation

/// A hash of RFC 9162's Merkle tree (section 2.1.1): of a leaf, of an inner node, or the root of a tree.
///
/// Leaves and inner nodes are hashed with different prefixes, so that no leaf can pass for a node:
/// a leaf's hash is `SHA-256(0x00 ‖ data)`, a node's `SHA-256(0x01 ‖ left ‖ right)`.
public struct TreeHash: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes.
    public let bytes: [UInt8]

    /// The hash from its 32 bytes; `nil` when there are not 32.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        self.bytes = Array(bytes)
    }

    init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    /// The hash from its standard base64 form (RFC 4648 section 4, with padding), as checkpoints and proofs
    /// write it; `nil` when it is not exactly that form of 32 bytes.
    public init?(base64: some StringProtocol) {
        guard let data = Data(base64Encoded: String(base64)), data.count == 32,
              data.base64EncodedString() == base64 else { return nil }
        self.bytes = Array(data)
    }

    /// Standard base64 with padding: 44 characters.
    public var base64: String { Data(bytes).base64EncodedString() }

    /// 64 lowercase hex digits.
    public var description: String { hexString(bytes) }

    /// The hash of the leaf whose data is `data`: `SHA-256(0x00 ‖ data)`.
    public static func leaf(_ data: some DataProtocol) -> TreeHash {
        var hasher = SHA256()
        hasher.update(data: [0])
        hasher.update(data: data)
        return TreeHash(unchecked: Array(hasher.finalize()))
    }

    /// The hash of the inner node over `left` and `right`: `SHA-256(0x01 ‖ left ‖ right)`.
    public static func node(_ left: TreeHash, _ right: TreeHash) -> TreeHash {
        var hasher = SHA256()
        hasher.update(data: [1])
        hasher.update(data: left.bytes)
        hasher.update(data: right.bytes)
        return TreeHash(unchecked: Array(hasher.finalize()))
    }

    /// The root of the empty tree: `SHA-256` of no bytes.
    public static let empty = TreeHash(unchecked: Array(SHA256.hash(data: [UInt8]())))
}
