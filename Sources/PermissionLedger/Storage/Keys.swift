internal import Crypto
import Foundation
import PermissionModel

/// The keys of every table. Versioned tables key an entity followed by the 8-byte big-endian `seq`
/// of the event that wrote the version; entity keys are prefix-free so that versions of one entity
/// are contiguous and a seek finds the latest version at or before any `seq` in one step.
///
/// Every key is built in one array, sized for all its parts and for a `seq` after them, so that
/// ``versioned(_:_:)`` appends in place: a key costs one allocation, however many parts it has.
enum Keys {
    static func seq(_ s: UInt64) -> [UInt8] {
        var key = key(capacity: 0)
        key.appendSeq(s)
        return key
    }

    /// `entity ‖ seq`: the key of a version of `entity`, made in `entity`'s own array.
    static func versioned(_ entity: consuming [UInt8], _ s: UInt64) -> [UInt8] {
        var key = consume entity
        key.appendSeq(s)
        return key
    }

    static func decodeSeq(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var v: UInt64 = 0
        for b in bytes.suffix(8) { v = v << 8 | UInt64(b) }
        return v
    }

    /// A time as 8 bytes that sort like the time: the sign bit flipped, big-endian.
    static func time(_ t: Timestamp) -> [UInt8] {
        var key = key(capacity: 8)
        key.appendTime(t)
        return key
    }

    static func uuid(_ id: UUID) -> [UInt8] {
        var key = key(capacity: 16)
        key.appendUUID(id)
        return key
    }

    static func decodeUUID(_ s: UnsafeRawBufferPointer) -> UUID {
        UUID(uuid: (s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]))
    }

    /// A subject followed by a NUL: subjects hold no control characters, so this is prefix-free.
    static func subjectPrefix(_ subject: String) -> [UInt8] {
        var key = key(capacity: subject.utf8.count + 1)
        key.appendSubject(subject)
        return key
    }

    /// `expiresAt ‖ question id`: the key of a pending question in `expiries`.
    static func expiry(_ expiresAt: Timestamp, question id: UUID) -> [UInt8] {
        var key = key(capacity: 24)
        key.appendTime(expiresAt)
        key.appendUUID(id)
        return key
    }

    /// `askedAt ‖ question id`: the key of a question in `questionsByAsked`.
    static func asked(_ askedAt: Timestamp, question id: UUID) -> [UInt8] { expiry(askedAt, question: id) }

    /// The longest handle value a key holds as it is; a longer one is keyed by its hash.
    static let longestPlainHandle = 200

    /// `kind value NUL`; a value over 200 bytes is replaced by 0xFF and its SHA-256, which keeps keys
    /// under LMDB's 511-byte limit (rows hold the full handle). Kinds order as custom < emailAddress < phoneNumber.
    static func handleOnly(_ handle: CommunicationHandle) -> [UInt8] {
        var key = key(capacity: handleLength(handle))
        key.appendHandle(handle)
        return key
    }

    /// `subject NUL` then the handle: all of a subject's handles are contiguous.
    static func handle(subject: String, _ handle: CommunicationHandle) -> [UInt8] {
        var key = key(capacity: subject.utf8.count + 1 + handleLength(handle))
        key.appendSubject(subject)
        key.appendHandle(handle)
        return key
    }

    /// The `handleSubjects` key: the handle, then the subject.
    static func handleSubject(_ handle: CommunicationHandle, subject: String) -> [UInt8] {
        var key = key(capacity: handleLength(handle) + subject.utf8.count)
        key.appendHandle(handle)
        key.appendUTF8(subject)
        return key
    }

    static func permission(subject: String, _ permission: SystemPermission) -> [UInt8] {
        var key = key(capacity: subject.utf8.count + 1 + permission.rawValue.utf8.count + 1)
        key.appendSubject(subject)
        key.appendUTF8(permission.rawValue)
        key.append(0)
        return key
    }

    /// An empty key with room for `capacity` bytes and a `seq` after them.
    private static func key(capacity: Int) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(capacity + 8)
        return key
    }

    /// The bytes ``handleOnly(_:)`` gives for `handle`.
    private static func handleLength(_ handle: CommunicationHandle) -> Int {
        let count = handle.value.utf8.count
        return count <= longestPlainHandle ? count + 2 : 34
    }
}

extension [UInt8] {
    mutating func appendSeq(_ s: UInt64) { Swift.withUnsafeBytes(of: s.bigEndian) { append(contentsOf: $0) } }

    mutating func appendTime(_ t: Timestamp) { appendSeq(UInt64(bitPattern: t.microseconds) ^ (1 << 63)) }

    mutating func appendUUID(_ id: UUID) { Swift.withUnsafeBytes(of: id.uuid) { append(contentsOf: $0) } }

    mutating func appendUTF8(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    mutating func appendSubject(_ subject: String) {
        appendUTF8(subject)
        append(0)
    }

    mutating func appendHandle(_ handle: CommunicationHandle) {
        append(Codes.kindOrder(handle.kind))
        var value = handle.value
        value.withUTF8 { utf8 in
            if utf8.count <= Keys.longestPlainHandle {
                append(contentsOf: utf8)
                append(0)
            } else {
                append(0xFF)
                append(contentsOf: SHA256.hash(data: UnsafeRawBufferPointer(utf8)))
            }
        }
    }
}

extension Codes {
    /// Handle kinds in output order (by name): custom, emailAddress, phoneNumber.
    static func kindOrder(_ kind: CommunicationHandle.Kind) -> UInt8 {
        switch kind {
        case .custom: 1
        case .emailAddress: 2
        case .phoneNumber: 3
        }
    }
}
