internal import Crypto
import Foundation

/// An event's personal fields as they are stored: encrypted, and committed to by a hash that reveals nothing of
/// them while its salt is secret.
///
/// - The **commitment** is HMAC-SHA256 keyed by a 32-byte secret salt over the fields' canonical bytes
///   (``PersonalFields/encoded()``). The chain hash covers it, not the fields: once the salt is gone, the
///   commitment cannot be checked against a guess (a phone number is one of about 10^10), and an erasure changes
///   no byte a hash covers. Given the salt and the fields, anyone can check it with any HMAC implementation.
/// - The **sealed box** is ChaChaPoly (ChaCha20-Poly1305) under the event's own key (``DataKeys``), over the salt
///   followed by the canonical bytes, authenticated with `additionalData` (the record's chained bytes), as
///   swift-crypto's `combined` form: nonce (12 bytes), ciphertext, tag (16 bytes). The salt lives only here.
package struct SealedFields: Hashable, Sendable {
    package static let saltSize = 32
    /// The length of a commitment: HMAC-SHA256's.
    package static let commitmentSize = 32

    /// The commitment to the fields (32 bytes).
    package var commitment: [UInt8]
    /// Nonce, ciphertext and tag.
    package var box: [UInt8]

    /// The commitment of `fields` under `salt`.
    package static func commitment(to fields: PersonalFields, salt: [UInt8]) -> [UInt8] {
        commitment(toEncoded: fields.encoded(), salt: salt)
    }

    static func commitment(toEncoded bytes: [UInt8], salt: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: SymmetricKey(data: salt)))
    }

    /// A salt and the commitment under it of fields encoded (``PersonalFields/encoded()``), for a record's chained
    /// bytes before they are sealed.
    static func commit(encoded: [UInt8], secrets: SecretSource, seq: UInt64) -> (salt: [UInt8], commitment: [UInt8]) {
        let salt = secrets.bytes(saltSize, for: "salt \(seq)")
        return (salt, commitment(toEncoded: encoded, salt: salt))
    }

    /// Seals `fields` with their `salt` under `key`, bound to `additionalData`.
    static func seal(_ fields: PersonalFields, salt: [UInt8], key: SymmetricKey, additionalData: [UInt8], secrets: SecretSource, seq: UInt64) throws -> [UInt8] {
        try sealing(fields, salt: salt, key: key, additionalData: additionalData, secrets: secrets, seq: seq).sealed()
    }

    /// What ``seal(_:salt:key:additionalData:secrets:seq:)`` seals, with its nonce drawn: sealed by
    /// ``Sealing/sealed()``, on whichever thread.
    static func sealing(_ fields: PersonalFields, salt: [UInt8], key: SymmetricKey, additionalData: [UInt8], secrets: SecretSource, seq: UInt64) throws -> Sealing {
        try sealing(encoded: fields.encoded(), salt: salt, key: key, additionalData: additionalData, secrets: secrets, seq: seq)
    }

    /// ``sealing(_:salt:key:additionalData:secrets:seq:)`` of fields already encoded (``PersonalFields/encoded()``).
    static func sealing(encoded: [UInt8], salt: [UInt8], key: SymmetricKey, additionalData: [UInt8], secrets: SecretSource, seq: UInt64) throws -> Sealing {
        let nonce = try ChaChaPoly.Nonce(data: secrets.bytes(12, for: "nonce \(seq)"))
        return Sealing(plaintext: salt + encoded, key: key, nonce: nonce, additionalData: additionalData)
    }

    /// The salt and fields to seal, the key, the nonce and the associated data: all that sealing them takes.
    struct Sealing: @unchecked Sendable {
        let plaintext: [UInt8]
        let key: SymmetricKey
        let nonce: ChaChaPoly.Nonce
        let additionalData: [UInt8]

        /// The sealed box: nonce, ciphertext and tag.
        func sealed() throws -> [UInt8] {
            Array(try ChaChaPoly.seal(plaintext, using: key, nonce: nonce, authenticating: additionalData).combined)
        }
    }

    /// What `box` holds, opened with `key`: the salt followed by the fields' canonical bytes.
    static func opened(_ box: UnsafeRawBufferPointer, key: SymmetricKey, additionalData: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> Data {
        do {
            return try ChaChaPoly.open(ChaChaPoly.SealedBox(combined: box), using: key, authenticating: additionalData)
        } catch {
            throw .init(reason: "the personal fields do not open with their key (damaged)")
        }
    }

    /// `box`, sealed under `key`, sealed again under `newKey` with a new nonce: the same salt and fields, bound to
    /// the same `additionalData`. What an erasure does to the events it keeps readable in a day whose key it
    /// destroys, in storage format 3.
    static func reseal(_ box: [UInt8], key: SymmetricKey, newKey: SymmetricKey, additionalData: [UInt8], secrets: SecretSource, seq: UInt64) throws -> [UInt8] {
        let plaintext = try box.withUnsafeBytes { box in
            additionalData.withUnsafeBytes { additionalData in
                Result { () throws(EventRecord.DecodingError) in try opened(box, key: key, additionalData: additionalData) }
            }
        }.get()
        let nonce = try ChaChaPoly.Nonce(data: secrets.bytes(12, for: "nonce \(seq) sealed again"))
        return Array(try ChaChaPoly.seal(plaintext, using: newKey, nonce: nonce, authenticating: additionalData).combined)
    }
}
