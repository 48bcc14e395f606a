internal import Crypto
import Foundation

/// Where the ledger's new secrets come from: keys, salts and nonces.
///
/// In use, always the system's secure random generator (``system``). For tests only, ``seeded(_:)`` derives
/// every secret from a fixed seed and a counter (HKDF-SHA256), so that a replay writes the same bytes each
/// time. A seeded source makes every secret guessable by whoever knows the seed: it must never hold real data.
package final class SecretSource: @unchecked Sendable {
    /// The system's secure random generator.
    package static let system = SecretSource(seed: nil)

    /// Secrets derived from `seed` in the order they are asked for: for tests only.
    package static func seeded(_ seed: String) -> SecretSource {
        SecretSource(seed: SymmetricKey(data: Array(seed.utf8)))
    }

    private let seed: SymmetricKey?
    private let lock = NSLock()
    private var counter: UInt64 = 0

    private init(seed: SymmetricKey?) { self.seed = seed }

    /// Whether the secrets come from a fixed seed (tests only).
    package var isSeeded: Bool { seed != nil }

    /// `count` new secret bytes.
    package func bytes(_ count: Int) -> [UInt8] {
        guard let seed else {
            // swift-crypto's key generation: the platform's secure random generator.
            return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
        }
        let n = lock.withLock {
            counter += 1
            return counter
        }
        var info = Array("PermissionLedger seeded secret".utf8)
        info.appendSeq(n)
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: seed, info: info, outputByteCount: count).withUnsafeBytes { Array($0) }
    }

    /// A new 256-bit key.
    func key() -> SymmetricKey { SymmetricKey(data: bytes(32)) }
}
