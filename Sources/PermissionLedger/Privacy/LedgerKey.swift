internal import Crypto
import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The ledger's own key: it wraps every data key of the key store (``KeyStore``), and nothing else.
///
/// It lives in a file of mode 0600, given with `--key-file` or `PERMISSION_LEDGER_KEY_FILE`, or, when none is
/// given, in `ledger.key` inside the ledger's directory, so that a ledger works with no set-up. Kept apart from
/// the directory (another disk, a secrets manager's mount), it makes a copy of the directory or of a backup
/// unreadable. The file is one line: `permission-ledger-key-1 ` then the 32 key bytes in standard base64.
package struct LedgerKey: Sendable {
    /// Where the key file is, and how it was found: what `stats` reports and errors name.
    package struct Location: Hashable, Sendable, CustomStringConvertible {
        /// How the key file was named.
        package enum Origin: String, Hashable, Sendable {
            /// Given by the program (`--key-file`, ``Ledger/Options``).
            case given = "given"
            /// Named by `PERMISSION_LEDGER_KEY_FILE`.
            case environment = "PERMISSION_LEDGER_KEY_FILE"
            /// The default: `ledger.key` in the ledger's directory.
            case ledgerDirectory = "in the ledger's directory"
        }

        package var path: String
        package var origin: Origin

        package var description: String {
            switch origin {
            case .given: path
            case .environment: "\(path) (from PERMISSION_LEDGER_KEY_FILE)"
            case .ledgerDirectory: "\(path) (the default, in the ledger's directory)"
            }
        }

        /// The key file of the ledger at `ledgerPath`: `given` when there is one, else the environment's
        /// `PERMISSION_LEDGER_KEY_FILE` when set and not empty, else `ledger.key` in the ledger's directory.
        package static func of(ledgerPath: String, given: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> Location {
            if let given { return Location(path: given, origin: .given) }
            if let named = environment[environmentVariable], !named.isEmpty { return Location(path: named, origin: .environment) }
            return Location(path: ledgerPath + "/" + defaultFileName, origin: .ledgerDirectory)
        }
    }

    /// The environment variable that names the key file.
    package static let environmentVariable = "PERMISSION_LEDGER_KEY_FILE"
    /// The key file's name inside the ledger's directory, when no other is named.
    package static let defaultFileName = "ledger.key"
    private static let prefix = "permission-ledger-key-1 "

    let key: SymmetricKey
    /// Where the key was read from.
    package let location: Location

    /// Reads the key at `location`; `nil` when there is no file there. A writer's read (`removingLeftover`) removes
    /// the temporary name a creation killed midway leaves beside the file (``OwnerOnlyFile/openExisting(_:writable:removingLeftover:)``).
    package static func read(at location: Location, removingLeftover: Bool = false) throws(LedgerError) -> LedgerKey? {
        do throws(OwnerOnlyFile.Problem) {
            guard let fd = try OwnerOnlyFile.openExisting(location.path, writable: false, removingLeftover: removingLeftover) else { return nil }
            defer { close(fd) }
            let bytes = try OwnerOnlyFile.read(fd, path: location.path, limit: 1024)
            guard let key = parse(bytes) else {
                throw OwnerOnlyFile.Problem(path: location.path, reason: "is not a ledger key file (it must be one line: \(prefix)and 32 bytes in base64)")
            }
            return LedgerKey(key: key, location: location)
        } catch {
            throw LedgerError(.notALedger, "key file \(error.description)")
        }
    }

    /// Reads the key at `location`, or creates it there with a new key from `secrets` when there is no file.
    /// Two processes that create it at once end with the same key: the first file written wins.
    package static func readOrCreate(at location: Location, secrets: SecretSource) throws(LedgerError) -> LedgerKey {
        if let key = try read(at: location, removingLeftover: true) { return key }
        let key = secrets.key(for: "ledger key")
        let line = prefix + key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        do throws(OwnerOnlyFile.Problem) {
            if try OwnerOnlyFile.create(location.path, contents: Array(line.utf8)) { return LedgerKey(key: key, location: location) }
        } catch {
            throw LedgerError(.storage, "key file \(error.description)")
        }
        guard let existing = try read(at: location) else {
            throw LedgerError(.storage, "key file \(location.path): was created and removed by another process meanwhile")
        }
        return existing
    }

    /// The key of a file's bytes, or `nil` when they are not one line of the expected form.
    static func parse(_ bytes: [UInt8]) -> SymmetricKey? {
        guard let text = String(validating: bytes, as: UTF8.self), text.hasPrefix(prefix) else { return nil }
        var encoded = text.dropFirst(prefix.count)
        if encoded.hasSuffix("\n") { encoded = encoded.dropLast() }
        guard let data = Data(base64Encoded: String(encoded)), data.count == 32 else { return nil }
        return SymmetricKey(data: data)
    }
}
