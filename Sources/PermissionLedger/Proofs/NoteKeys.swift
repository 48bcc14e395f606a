internal import Crypto
import Foundation
import PermissionModel

/// An Ed25519 key that signs notes as C2SP `signed-note` says, under a key name: a checkpoint's signer, the name
/// being the log's origin.
///
/// Its text form is that of Go's `golang.org/x/mod/sumdb/note` signer keys, so that either tool reads the other's
/// keys: `PRIVATE+KEY+NAME+KEYID+BASE64`, KEYID the key ID in 8 hex digits, BASE64 the standard base64 of the
/// signature type `0x01` followed by the key's 32-byte seed.
public struct NoteSigner: Sendable {
    /// The key name: the origin of the checkpoints it signs.
    public let name: String
    let key: Curve25519.Signing.PrivateKey

    /// A new key named `name`, from the system's random source.
    ///
    /// - Throws: ``ProofError`` when `name` is not a valid key name (``NoteVerifier/isValidName(_:)``).
    public static func generate(name: String) throws(ProofError) -> NoteSigner {
        try NoteSigner(name: name, key: Curve25519.Signing.PrivateKey())
    }

    init(name: String, key: Curve25519.Signing.PrivateKey) throws(ProofError) {
        guard NoteVerifier.isValidName(name) else {
            throw ProofError("\(quoted(name)) is not a valid key name: it must be 1 to 256 bytes of printable UTF-8 with no space and no '+'")
        }
        self.name = name
        self.key = key
    }

    /// Reads a signer key in its text form (`PRIVATE+KEY+NAME+KEYID+BASE64`), surrounding white space ignored.
    ///
    /// - Throws: ``ProofError`` saying what is wrong with it, without repeating the key.
    public init(signerKey text: String) throws(ProofError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        // The key's base64 may hold '+': the fifth part is the rest.
        let parts = trimmed.split(separator: "+", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "PRIVATE", parts[1] == "KEY" else {
            throw ProofError("not a signing key: it should read PRIVATE+KEY+NAME+KEYID+KEY")
        }
        guard let bytes = Data(base64Encoded: String(parts[4])), bytes.count == 33, bytes.first == 1,
              let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes.dropFirst()) else {
            throw ProofError("not an Ed25519 signing key (the part after its key ID)")
        }
        try self.init(name: String(parts[2]), key: key)
        guard parts[3] == Substring(NoteVerifier.hexKeyID(keyID)) else {
            throw ProofError("the signing key's key ID \(parts[3]) is not the one of its name and key (\(NoteVerifier.hexKeyID(keyID)))")
        }
    }

    /// The key's text form, secret: what its file holds.
    public var signerKey: String {
        "PRIVATE+KEY+\(name)+\(NoteVerifier.hexKeyID(keyID))+" + Data([1] + key.rawRepresentation).base64EncodedString()
    }

    /// The key that checks its signatures, in its text form (`NAME+KEYID+BASE64`).
    public var verifierKey: String { verifier.verifierKey }

    /// The key that checks its signatures.
    public var verifier: NoteVerifier { NoteVerifier(name: name, publicKey: key.publicKey) }

    /// The key ID: the first 4 bytes, big-endian, of `SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)`.
    public var keyID: UInt32 { verifier.keyID }

    /// `text` (a note's text: lines that each end with a newline, none empty) signed with this key, as a C2SP
    /// `signed-note`. Checkpoints are signed through ``CheckpointSigner``, which keeps the key from ever signing two
    /// of one size with different roots.
    public func sign(_ text: String) throws(LedgerError) -> SignedNote { try SignedNote.sign(text, by: self) }

    /// The signature line of `text` (a note's text, which ends with a newline): `— NAME BASE64(KEYID ‖ SIGNATURE)`
    /// and a newline.
    func signatureLine(_ text: String) throws(LedgerError) -> String {
        let signature: Data
        do {
            signature = try key.signature(for: Data(text.utf8))
        } catch {
            throw LedgerError(.storage, "the note could not be signed: \(error)")
        }
        return "— \(name) " + Data(NoteVerifier.bigEndian(keyID) + signature).base64EncodedString() + "\n"
    }
}

/// The public half of a ``NoteSigner``: it checks the signatures of one key name in signed notes.
public struct NoteVerifier: Hashable, Sendable {
    /// The key name.
    public let name: String
    let publicKeyBytes: [UInt8]

    init(name: String, publicKey: Curve25519.Signing.PublicKey) {
        self.name = name
        self.publicKeyBytes = Array(publicKey.rawRepresentation)
    }

    /// Reads a verifier key in its text form (`NAME+KEYID+BASE64`, as Go's `note.NewEd25519VerifierKey` writes it),
    /// surrounding white space ignored.
    ///
    /// - Throws: ``ProofError`` saying what is wrong with it.
    public init(verifierKey text: String) throws(ProofError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, Self.isValidName(String(parts[0])) else {
            throw ProofError("not a verifier key: it should read NAME+KEYID+KEY")
        }
        guard let bytes = Data(base64Encoded: String(parts[2])), bytes.count == 33, bytes.first == 1,
              (try? Curve25519.Signing.PublicKey(rawRepresentation: bytes.dropFirst())) != nil else {
            throw ProofError("not an Ed25519 verifier key (the part after its key ID)")
        }
        name = String(parts[0])
        publicKeyBytes = Array(bytes.dropFirst())
        guard parts[1] == Substring(Self.hexKeyID(keyID)) else {
            throw ProofError("the verifier key's key ID \(parts[1]) is not the one of its name and key (\(Self.hexKeyID(keyID)))")
        }
    }

    /// The key's text form: `NAME+KEYID+BASE64(0x01 ‖ public key)`.
    public var verifierKey: String { "\(name)+\(Self.hexKeyID(keyID))+" + Data([1] + publicKeyBytes).base64EncodedString() }

    /// The key ID: the first 4 bytes, big-endian, of `SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)`.
    public var keyID: UInt32 {
        let digest = Array(SHA256.hash(data: Array(name.utf8) + [0x0A, 0x01] + publicKeyBytes))
        return digest.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Whether `signature` (the bytes of a signature line, key ID and all) is this key's over `text`.
    func isValidSignature(_ signature: [UInt8], of text: String) -> Bool {
        guard signature.count == 68, Array(signature.prefix(4)) == Self.bigEndian(keyID),
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKeyBytes) else { return false }
        return key.isValidSignature(signature.dropFirst(4), for: Data(text.utf8))
    }

    /// Whether `name` may name a key: non-empty, with no white space and no `+` (as Go's `note` package requires),
    /// and no control or format character, so that a name printed never acts on a terminal.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && !name.contains("+") && !name.unicodeScalars.contains {
            $0.properties.isWhitespace || [.control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned]
                .contains($0.properties.generalCategory)
        }
    }

    static func hexKeyID(_ id: UInt32) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func bigEndian(_ id: UInt32) -> [UInt8] { [UInt8(id >> 24), UInt8(id >> 16 & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id & 0xFF)] }
}
