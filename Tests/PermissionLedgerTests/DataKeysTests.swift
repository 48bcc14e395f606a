import Crypto
import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// The derived keys and tokens, each checked against the one-step computation that docs/STORAGE.md describes:
/// what is kept to make them faster must give the same bytes.
@Suite struct DataKeysTests {
    let secrets = SecretSource.seeded("data-keys-tests")

    @Test func anEventKeyFromTheKeptBaseIsHKDFOfTheDayKey() {
        for name in ["day", "another day"] {
            let dayKey = secrets.key(for: name)
            let base = DataKeys.eventKeyBase(dayKey: dayKey)
            for seq: UInt64 in [1, 2, 255, 256, 1 << 40, .max] {
                var info = Array("PermissionLedger event key 1".utf8)
                withUnsafeBytes(of: seq.bigEndian) { info += $0 }
                let expected = HKDF<SHA256>.deriveKey(inputKeyMaterial: dayKey, info: info, outputByteCount: 32)
                // Twice: each key starts from a copy of the keyed state, which the first must not change.
                #expect(base.eventKey(seq: seq) == expected)
                #expect(base.eventKey(seq: seq) == expected)
                #expect(DataKeys.eventKey(dayKey: dayKey, seq: seq) == expected)
            }
        }
    }

    @Test func eachFormatGivesTheEventKeysOfItsOwn() {
        let dayKey = secrets.key(for: "day")
        for seq: UInt64 in [1, 2, 1 << 40] {
            // Format 3: the day key seals every event of its generation itself.
            #expect(DataKeys.eventKeys(dayKey: dayKey, .direct).key(seq: seq) == dayKey)
            // Format 2: each event's key is derived from the day key and its seq.
            #expect(DataKeys.eventKeys(dayKey: dayKey, .derived).key(seq: seq) == DataKeys.eventKey(dayKey: dayKey, seq: seq))
            #expect(DataKeys.eventKeys(dayKey: dayKey, .derived).key(seq: seq) != dayKey)
        }
        #expect(KeyUse(format: 2) == .derived && KeyUse(format: 3) == .direct)
    }

    @Test func eachFormatGivesTheTokenKeyOfItsOwn() {
        let lookupKey = secrets.key(for: "lookup")
        #expect(DataKeys.tokenKey(lookupKey: lookupKey, .direct) == lookupKey)
        #expect(DataKeys.tokenKey(lookupKey: lookupKey, .derived) == DataKeys.tokenKey(lookupKey: lookupKey))
    }

    @Test func theExtractStepIsSwiftCryptosWithAnEmptySalt() {
        for name in ["day", "lookup", "values"] {
            let key = secrets.key(for: name)
            let expected = HKDF<SHA256>.extract(inputKeyMaterial: key, salt: [UInt8]())
            // Twice: each starts from a copy of the keyed state, which the first must not change.
            #expect(Array(DataKeys.extract(key)) == Array(expected))
            #expect(Array(DataKeys.extract(key)) == Array(expected))
        }
    }

    @Test func theTokenKeyIsHKDFOfTheLookupKey() {
        for name in ["lookup", "another lookup"] {
            let lookupKey = secrets.key(for: name)
            let expected = HKDF<SHA256>.deriveKey(inputKeyMaterial: lookupKey, info: Array("PermissionLedger handle token 1".utf8), outputByteCount: 32)
            #expect(DataKeys.tokenKey(lookupKey: lookupKey) == expected)
        }
    }

    @Test func aTokenIsTheFirst16BytesOfHMACOfTheKindCodeAndTheValue() throws {
        let tokenKey = secrets.key(for: "token")
        let hasher = TokenHasher(tokenKey: tokenKey)
        let handles = [
            try CommunicationHandle(value: "+15551234567", kind: .phoneNumber),
            try CommunicationHandle(value: "ana@example.com", kind: .emailAddress),
            try CommunicationHandle(value: "Zoë 🦊", kind: .custom),
        ]
        for handle in handles {
            let message = [Codes.kind(handle.kind)] + Array(handle.value.utf8)
            let expected = Array(HMAC<SHA256>.authenticationCode(for: message, using: tokenKey).prefix(16))
            // Twice: each token starts from a copy of the keyed state, which the first must not change.
            #expect(hasher.token(handle) == expected)
            #expect(hasher.token(handle) == expected)
            #expect(DataKeys.token(handle, tokenKey: tokenKey) == expected)
        }
    }

    @Test func aTokenHandleIsBase64URLWithoutPadding() {
        #expect(DataKeys.base64URL([UInt8]()) == "")
        for count in 1..<40 {
            let bytes = secrets.bytes(count, for: "bytes \(count)")
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(DataKeys.base64URL(bytes) == expected)
        }
        #expect(DataKeys.base64URL([0xFB, 0xFF]) == "-_8")
    }

    @Test func aTokenReadFromItsTextIsTheTokenOfItsBytes() {
        var random = SystemRandomNumberGenerator()
        var tokens: [HandleToken] = []
        for _ in 0..<500 {
            let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            var text = DataKeys.base64URL(bytes)
            let token = text.withUTF8 { HandleToken(text: UnsafeRawBufferPointer($0)) }
            #expect(token == HandleToken(bytes: bytes), "\(text)")
            tokens.append(HandleToken(bytes: bytes))
        }
        // 500 distinct tokens: no two equal once sorted.
        let sorted = tokens.sorted()
        #expect(tokens.count == 500 && zip(sorted, sorted.dropFirst()).allSatisfy { $0 < $1 })
        // Tokens that differ in one byte only, at each end: different tokens.
        for index in [0, 7, 8, 15] {
            var other = [UInt8](repeating: 0xAB, count: 16)
            other[index] ^= 1
            #expect(HandleToken(bytes: other) != HandleToken(bytes: [UInt8](repeating: 0xAB, count: 16)), "byte \(index)")
        }
        // Not a token's text: a length other than 22.
        for length in [0, 21, 23, 44] {
            let text = [UInt8](repeating: UInt8(ascii: "A"), count: length)
            #expect(text.withUnsafeBytes { HandleToken(text: $0) } == nil)
        }
    }
}
