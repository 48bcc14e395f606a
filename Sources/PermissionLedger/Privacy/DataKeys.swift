internal import Crypto
import Foundation
import PermissionModel

/// The keys a subject's data keys give, and the keyed hashes that find a handle without its value.
///
/// - A subject's events recorded on one UTC day share a **day key**, kept wrapped in the key store. In storage
///   format 3 the day key seals the personal fields of its events itself; in format 2 each event has its own
///   **event key**, derived from the day key and the event's `seq` with HKDF-SHA256 (``KeyUse``). An erasure of
///   the events before a time inside a day keeps the later events of that day readable under keys of their own
///   before the day key is destroyed.
/// - A subject's **lookup key**, also in the key store, gives the **handle tokens**: HMAC-SHA256 of the handle's
///   kind code and value, cut to 16 bytes, keyed by the lookup key itself (format 3) or by a key derived from it
///   (format 2). Tokens stand for handles in every table, so that a lookup by handle is one seek and no table
///   holds a value; an erasure destroys the lookup key, and what it keeps is hashed again under a new one.
package enum DataKeys {
    /// Microseconds in a day: day keys are by UTC day of `recordedAt`.
    static let microsecondsPerDay: Int64 = 86_400_000_000

    /// The UTC day (days since 1970-01-01) of `time`.
    package static func day(of time: Timestamp) -> Int64 {
        let (quotient, remainder) = time.microseconds.quotientAndRemainder(dividingBy: microsecondsPerDay)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// The first instant of `day`.
    package static func start(ofDay day: Int64) -> Timestamp { Timestamp(microseconds: day * microsecondsPerDay) }

    /// The key that seals the personal fields of the event at `seq`, from its day key, in a ledger of storage
    /// format 2: HKDF-SHA256 with an empty salt, the day key as input key material and the event's seq in the info.
    static func eventKey(dayKey: SymmetricKey, seq: UInt64) -> SymmetricKey {
        eventKeyBase(dayKey: dayKey).eventKey(seq: seq)
    }

    /// What gives the keys of the events that the day key `dayKey` covers, as `use` says.
    static func eventKeys(dayKey: SymmetricKey, _ use: KeyUse) -> EventKeys {
        switch use {
        case .derived: .derived(eventKeyBase(dayKey: dayKey))
        case .direct: .dayKey(dayKey)
        }
    }

    /// What ``eventKey(dayKey:seq:)`` needs of the day key alone, made once per day key and kept: HKDF's extract
    /// step, and HMAC keyed by its pseudorandom key for the expand step.
    static func eventKeyBase(dayKey: SymmetricKey) -> HKDFExpander {
        HKDFExpander(pseudoRandomKey: extract(dayKey))
    }

    /// HKDF-SHA256's extract step with an empty salt, of `inputKeyMaterial`: HMAC-SHA256 keyed by the salt, which
    /// RFC 5869 (section 2.2) sets to HashLen zero bytes when it is not given (HMAC pads a shorter key with zeros,
    /// so the empty salt and these are one key). It starts from a copy of HMAC's state keyed once: the same bytes
    /// as swift-crypto's `HKDF.extract` (DataKeysTests), without keying a new HMAC each time.
    static func extract(_ inputKeyMaterial: SymmetricKey) -> HashedAuthenticationCode<SHA256> {
        var hmac = EmptySalt.keyed
        inputKeyMaterial.withUnsafeBytes { hmac.update(data: $0) }
        return hmac.finalize()
    }

    /// HMAC-SHA256 keyed by HKDF's empty salt, set up once.
    private enum EmptySalt {
        static let keyed = HMAC<SHA256>(key: SymmetricKey(data: [UInt8](repeating: 0, count: SHA256.byteCount)))
    }

    /// The HMAC key of handle tokens, from a subject's lookup key, in a ledger of storage format 2: HKDF-SHA256
    /// with an empty salt (the same bytes as swift-crypto's `HKDF.deriveKey`, for less: ``HKDFExpander``).
    static func tokenKey(lookupKey: SymmetricKey) -> SymmetricKey {
        HKDFExpander(pseudoRandomKey: extract(lookupKey)).expand(info: Array("PermissionLedger handle token 1".utf8))
    }

    /// The HMAC key of handle tokens, from a subject's lookup key, as `use` says.
    static func tokenKey(lookupKey: SymmetricKey, _ use: KeyUse) -> SymmetricKey {
        switch use {
        case .derived: tokenKey(lookupKey: lookupKey)
        case .direct: lookupKey
        }
    }

    /// The length of a handle token.
    package static let tokenSize = 16

    /// The token of `handle` under `tokenKey`: HMAC-SHA256 of the kind's code and the value's UTF-8, first 16 bytes.
    static func token(_ handle: CommunicationHandle, tokenKey: SymmetricKey) -> [UInt8] {
        TokenHasher(tokenKey: tokenKey).token(handle)
    }

    /// A handle whose token is known and whose value is not (an erased event's): its token handle marked by a
    /// leading NUL, which no handle's value holds, so that the tables take it as it is instead of tokenizing it
    /// (``givenToken(_:)``). The rules compare marked handles as they compare values.
    static func markedTokenHandle(kind: CommunicationHandle.Kind, token: some Collection<UInt8>) -> CommunicationHandle {
        marked(tokenHandle(kind: kind, token: token))
    }

    /// A token handle (``tokenHandle(kind:token:)``) marked as given.
    static func marked(_ tokenHandle: CommunicationHandle) -> CommunicationHandle {
        CommunicationHandle(normalizedValue: "\u{0}" + tokenHandle.value, kind: tokenHandle.kind)
    }

    /// The token handle a marked handle (``markedTokenHandle(kind:token:)``) stands for; `nil` for any other.
    static func givenToken(_ handle: CommunicationHandle) -> CommunicationHandle? {
        guard handle.value.utf8.first == 0 else { return nil }
        return CommunicationHandle(normalizedValue: String(handle.value.dropFirst()), kind: handle.kind)
    }

    /// The handle of `kind` whose token is `token`, as a rebuild reads it from a record.
    static func tokenHandle(kind: CommunicationHandle.Kind, token: some Collection<UInt8>) -> CommunicationHandle {
        CommunicationHandle(normalizedValue: base64URL(token), kind: kind)
    }

    private static let base64URLAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in base64url without padding (RFC 4648, section 5): the text of a token handle.
    static func base64URL(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        return String(unsafeUninitializedCapacity: (input.count * 4 + 2) / 3) { output in
            var written = 0
            var index = 0
            while index < input.count {
                let remaining = input.count - index
                let b0 = UInt32(input[index])
                let b1 = remaining > 1 ? UInt32(input[index + 1]) : 0
                let b2 = remaining > 2 ? UInt32(input[index + 2]) : 0
                let triple = b0 << 16 | b1 << 8 | b2
                for position in 0..<min(4, remaining + 1) {
                    output[written] = base64URLAlphabet[Int(triple >> UInt32(18 - 6 * position) & 0x3F)]
                    written += 1
                }
                index += 3
            }
            return written
        }
    }
}

/// How a ledger uses its data keys, by storage format (docs/STORAGE.md, "Keys").
package enum KeyUse: Sendable {
    /// Storage format 2: each event's key is derived from its day key and seq, and the token key from the lookup
    /// key, with HKDF-SHA256.
    case derived
    /// Storage format 3: a day key seals its events itself, and a lookup key keys the tokens itself. Nothing is
    /// derived per event; an erasure of a time inside a day seals that day's later events again under keys of
    /// their own.
    case direct

    /// How a ledger of storage format `format` (2 or later) uses its keys.
    init(format: UInt8) { self = format == 2 ? .derived : .direct }
}

/// What gives the keys that seal the personal fields of the events of one day key's generation.
enum EventKeys: @unchecked Sendable {
    /// Format 3: the day key seals every event itself.
    case dayKey(SymmetricKey)
    /// Format 2: each event's key is derived from the day key and its seq.
    case derived(HKDFExpander)

    /// The key of the event at `seq`.
    func key(seq: UInt64) -> SymmetricKey {
        switch self {
        case .dayKey(let key): key
        case .derived(let base): base.eventKey(seq: seq)
        }
    }
}

/// HKDF-SHA256's expand step from one pseudorandom key (a day key's or a lookup key's extract step), for one
/// block of output: T(1) = HMAC-SHA256(PRK, info ‖ 0x01), as RFC 5869 defines it, computed from a copy of HMAC's
/// state keyed by the PRK, which is set up once. swift-crypto's `HKDF.expand` keys a new HMAC for each call, which costs more than
/// the rest of the derivation; the bytes are the same (DataKeysTests checks them against it).
struct HKDFExpander: @unchecked Sendable {
    private let keyed: HMAC<SHA256>

    init(pseudoRandomKey: HashedAuthenticationCode<SHA256>) {
        keyed = HMAC<SHA256>(key: SymmetricKey(data: pseudoRandomKey))
    }

    /// The key of the event at `seq`: ``expand(info:)`` of `PermissionLedger event key 1` ‖ `seq` (8 bytes,
    /// big-endian), the message written on the stack.
    func eventKey(seq: UInt64) -> SymmetricKey {
        var hmac = keyed
        let prefix = Self.eventKeyInfoPrefix
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: prefix.count + 9) { message in
            _ = message.initialize(fromContentsOf: prefix)
            for index in 0..<8 { message[prefix.count + index] = UInt8(truncatingIfNeeded: seq >> UInt64(56 - 8 * index)) }
            message[prefix.count + 8] = 1
            hmac.update(data: UnsafeRawBufferPointer(message))
        }
        return SymmetricKey(data: hmac.finalize())
    }

    /// The start of every event key's info, before its seq.
    private static let eventKeyInfoPrefix = Array("PermissionLedger event key 1".utf8)

    /// HKDF-Expand of the pseudorandom key with `info`, 32 bytes.
    func expand(info: [UInt8]) -> SymmetricKey {
        var hmac = keyed
        var message = info
        message.append(1)
        hmac.update(data: message)
        return SymmetricKey(data: hmac.finalize())
    }
}

/// The keyed hash that gives handle tokens under one token key (``DataKeys/token(_:tokenKey:)``), its key set up
/// once: HMAC is a value, so each token starts from a copy of the keyed state.
struct TokenHasher: @unchecked Sendable {
    private let keyed: HMAC<SHA256>

    init(tokenKey: SymmetricKey) { keyed = HMAC<SHA256>(key: tokenKey) }

    /// The token of `handle`: HMAC-SHA256 of the kind's code and the value's UTF-8, first 16 bytes.
    func token(_ handle: CommunicationHandle) -> [UInt8] {
        var hmac = keyed
        // One update of one buffer: each of swift-crypto's `update` calls costs more than hashing a handle.
        var message = [Codes.kind(handle.kind)]
        message.append(contentsOf: handle.value.utf8)
        hmac.update(data: message)
        return hmac.finalize().withUnsafeBytes { Array($0.prefix(DataKeys.tokenSize)) }
    }

    /// `handle` with its value replaced by its token in base64url without padding (22 characters, none of them
    /// NUL, which keys use as a separator): how the tables of a ledger whose personal fields are sealed hold a
    /// handle. The rules compare handles by value, and tokens are equal exactly when values are (under one token
    /// key), so they run alike on either.
    func tokenHandle(_ handle: CommunicationHandle) -> CommunicationHandle {
        DataKeys.tokenHandle(kind: handle.kind, token: token(handle))
    }
}
