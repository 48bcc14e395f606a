import ArgumentParser
import Foundation
import PermissionLedger

/// `--signing-key`, else `PERMISSION_LEDGER_SIGNING_KEY`: the key that signs checkpoints (docs/spec/PROOFS.md).
struct SigningKeyOption: ParsableArguments {
    static let variable = "PERMISSION_LEDGER_SIGNING_KEY"

    @Option(name: .customLong("signing-key"), help: ArgumentHelp(
        "The checkpoint signing key (made by keygen). Default: $PERMISSION_LEDGER_SIGNING_KEY.", valueName: "FILE"))
    var signingKey: String?

    func validate() throws {
        if signingKey == "" { throw ValidationError("--signing-key: an empty path") }
    }

    /// The key, read from its file: wrong usage (exit 2) when none is named, exit 3 when it cannot be used.
    func signer() throws -> CheckpointSigner {
        guard let signer = try optionalSigner() else {
            throw ToolFailure(.usage, "usage: no signing key: give --signing-key FILE or set \(Self.variable) (make one with permission-ledger keygen)")
        }
        return signer
    }

    /// The key when one is named, else `nil`; exit 3 when the one named cannot be used.
    func optionalSigner() throws -> CheckpointSigner? {
        guard let path = signingKey ?? ProcessInfo.processInfo.environment[Self.variable].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return nil
        }
        do {
            return try CheckpointSigner(keyFile: path)
        } catch {
            throw ToolFailure(error)
        }
    }
}
