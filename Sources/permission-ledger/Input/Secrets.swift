import Foundation
import PermissionLedger

/// Where the tool's new keys, salts and nonces come from: the system's secure generator, or, when
/// `PERMISSION_LEDGER_TEST_SEED` is set, that seed (for tests only: whoever knows the seed can derive every key
/// of a ledger made with it, so `stats` says so).
enum ToolSecrets {
    static let variable = "PERMISSION_LEDGER_TEST_SEED"

    /// The seed of `PERMISSION_LEDGER_TEST_SEED`, when it is set and not empty.
    static var seed: String? {
        ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The tool's source of new secrets.
    static var source: SecretSource { seed.map(SecretSource.seeded) ?? .system }
}
