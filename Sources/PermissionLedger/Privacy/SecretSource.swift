internal import Crypto
import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Where the ledger's new secrets come from: keys, salts and nonces.
///
/// In use, always the system's secure random generator (``system``). For tests only, ``seeded(_:)`` derives
/// every secret from a fixed seed and what the secret is for (HKDF-SHA256 with the context as info: the salt of
/// the event at seq 7, the day key of a subject's day, ...), so that the same events give the same bytes
/// however they are batched, and across reopenings. A seeded source makes every secret guessable by whoever
/// knows the seed, and gives the same nonce to whatever shares a context: it must never hold real data.
package final class SecretSource: @unchecked Sendable {
    /// The system's secure random generator.
    package static let system = SecretSource(seed: nil)

    /// The seed of the secrets of test ledgers: the testing kit's replays, the tool's `replay`, and fixtures'
    /// expected results (`PERMISSION_LEDGER_TEST_SEED` in Tools/check-fixtures.sh), so that they all give the
    /// same hashes for the same events.
    package static let testSeed = "permission-ledger fixtures"

    /// Secrets derived from `seed` and what each is for: for tests only.
    package static func seeded(_ seed: String) -> SecretSource {
        SecretSource(seed: SymmetricKey(data: Array(seed.utf8)))
    }

    private let seed: SymmetricKey?
    private let pool = RandomPool()

    private init(seed: SymmetricKey?) { self.seed = seed }

    /// Whether the secrets come from a fixed seed (tests only).
    package var isSeeded: Bool { seed != nil }

    /// `count` new secret bytes for `context` (which only a seeded source reads).
    package func bytes(_ count: Int, for context: @autoclosure () -> String) -> [UInt8] {
        guard let seed else { return pool.take(count) }
        let info = Array("PermissionLedger seeded secret: \(context())".utf8)
        return HKDF<SHA256>.deriveKey(inputKeyMaterial: seed, info: info, outputByteCount: count).withUnsafeBytes { Array($0) }
    }

    /// A new 256-bit key for `context`.
    func key(for context: @autoclosure () -> String) -> SymmetricKey { SymmetricKey(data: bytes(32, for: context())) }
}

/// Bytes of the system's secure random generator, drawn a few kilobytes at a time: an append needs a salt and a
/// nonce or two per event, and asking the kernel for each costs more than sealing the event. Each byte is handed
/// out once, and zeroed in the pool as it is.
final class RandomPool: @unchecked Sendable {
    private static let size = 4096
    private let lock = NSLock()
    private var bytes = [UInt8](repeating: 0, count: RandomPool.size)
    private var used = RandomPool.size

    /// `count` new random bytes.
    func take(_ count: Int) -> [UInt8] {
        guard count <= Self.size / 4 else { return Self.fresh(count) }
        return lock.withLock {
            if used + count > Self.size {
                bytes = Self.fresh(Self.size)
                used = 0
            }
            defer {
                for index in used..<(used + count) { bytes[index] = 0 }
                used += count
            }
            return Array(bytes[used..<(used + count)])
        }
    }

    /// `count` bytes from the kernel's secure generator, `getentropy`'s most (256) at a time. (swift-crypto's own
    /// draws eight bytes per system call.)
    private static func fresh(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { buffer in
            var filled = 0
            while filled < count {
                let length = min(256, count - filled)
                guard getentropy(buffer.baseAddress! + filled, length) == 0 else {
                    fatalError("the system's secure random generator failed: \(String(cString: strerror(errno)))")
                }
                filled += length
            }
        }
        return result
    }
}
