import Crypto
import Foundation
import PermissionModel

/// Where a question stands.
public enum QuestionState: String, Hashable, Sendable, CaseIterable {
    /// Asked, and not yet answered, canceled, failed or expired.
    case pending
    /// The guardian picked an approval.
    case approved
    /// The guardian picked a denial.
    case denied
    /// The child canceled the send flow: the guardian never saw it.
    case canceled
    /// `AskCenter.ask` threw: it was never sent.
    case failed
    /// The app stopped waiting (a `question.expired` event), or its `expiresAt` passed while pending. A late
    /// answer still moves it on to `approved` or `denied`.
    case expired

    /// Every state but `pending` and `expired` is final.
    public var isFinal: Bool { self != .pending && self != .expired }
}

/// Where a known handle came from.
public enum HandleSource: Hashable, Sendable {
    /// An approval of this question.
    case question(UUID)
    /// The `handles.observed` event with this `seq`.
    case observation(UInt64)
}

/// A version of one question's projected state, stored under (question id, seq).
@_spi(StorageEngine) public struct QuestionRow: Hashable {
    public var askedSeq: UInt64
    public var subject: String
    public var askedAt: Timestamp
    public var expiresAt: Timestamp?
    public var state: QuestionState
    public var late = false
    public var expiredByEvent = false
    public var resolvedAt: Timestamp?
    public var choiceID: String?
    public var via: AnswerVia?
    public var error: AskError?

    private static let states: [QuestionState] = [.pending, .approved, .denied, .canceled, .failed, .expired]

    public func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 64)
        w.byte(1)
        w.unsigned(askedSeq)
        w.text(subject)
        w.signed(askedAt.microseconds)
        w.optionalTime(expiresAt)
        w.byte(UInt8(Self.states.firstIndex(of: state)! + 1))
        w.byte((late ? 1 : 0) | (expiredByEvent ? 2 : 0))
        w.optionalTime(resolvedAt)
        w.optionalText(choiceID)
        w.byte(via.map(Codes.via) ?? 0)
        w.byte(error.map { Codes.askError($0.code) } ?? 0)
        if let error { w.optionalText(error.message) }
        return w.bytes
    }

    public init(askedSeq: UInt64, subject: String, askedAt: Timestamp, expiresAt: Timestamp?, state: QuestionState) {
        self.askedSeq = askedSeq
        self.subject = subject
        self.askedAt = askedAt
        self.expiresAt = expiresAt
        self.state = state
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown question row version") }
        askedSeq = try r.unsigned()
        subject = try r.text()
        askedAt = Timestamp(microseconds: try r.signed())
        expiresAt = try r.optionalTime()
        let s = try r.byte()
        guard s >= 1, Int(s) <= Self.states.count else { throw .init(reason: "unknown question state \(s)") }
        state = Self.states[Int(s) - 1]
        let flags = try r.byte()
        guard flags <= 3 else { throw .init(reason: "bad question flags") }
        late = flags & 1 != 0
        expiredByEvent = flags & 2 != 0
        resolvedAt = try r.optionalTime()
        choiceID = try r.optionalText()
        let v = try r.byte()
        via = v == 0 ? nil : try Codes.via(v)
        let e = try r.byte()
        error = e == 0 ? nil : AskError(code: try Codes.askError(e), message: try r.optionalText())
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in question row") }
    }
}

/// A version of what the ledger knows about one handle of one subject.
@_spi(StorageEngine) public struct HandleRow: Hashable {
    public var handle: CommunicationHandle
    public var known: Bool
    public var since: Timestamp
    public var until: Timestamp?
    public var source: HandleSource

    public func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 48)
        w.byte(1)
        w.handle(handle)
        w.byte(known ? 1 : 0)
        w.signed(since.microseconds)
        w.optionalTime(until)
        switch source {
        case .question(let id): w.byte(1); w.uuid(id)
        case .observation(let seq): w.byte(2); w.unsigned(seq)
        }
        return w.bytes
    }

    public init(handle: CommunicationHandle, known: Bool, since: Timestamp, until: Timestamp?, source: HandleSource) {
        self.handle = handle
        self.known = known
        self.since = since
        self.until = until
        self.source = source
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown handle row version") }
        handle = try r.handle()
        let k = try r.byte()
        guard k <= 1 else { throw .init(reason: "bad known flag") }
        known = k == 1
        since = Timestamp(microseconds: try r.signed())
        until = try r.optionalTime()
        switch try r.byte() {
        case 1: source = .question(try r.uuid())
        case 2: source = .observation(try r.unsigned())
        case let other: throw .init(reason: "unknown handle source \(other)")
        }
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in handle row") }
    }
}

/// A version of one system permission's state for one subject.
@_spi(StorageEngine) public struct PermissionRow: Hashable {
    public var permission: SystemPermission
    public var state: SystemPermission.State
    public var since: Timestamp
    public var cause: SystemPermission.Cause?

    public func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 16)
        w.byte(1)
        w.byte(Codes.permission(permission))
        w.byte(Codes.state(state))
        w.signed(since.microseconds)
        w.byte(cause.map(Codes.cause) ?? 0)
        return w.bytes
    }

    public init(permission: SystemPermission, state: SystemPermission.State, since: Timestamp, cause: SystemPermission.Cause?) {
        self.permission = permission
        self.state = state
        self.since = since
        self.cause = cause
    }

    public init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown permission row version") }
        permission = try Codes.permission(try r.byte())
        state = try Codes.state(try r.byte())
        since = Timestamp(microseconds: try r.signed())
        let c = try r.byte()
        cause = c == 0 ? nil : try Codes.cause(c)
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in permission row") }
    }
}

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

    /// `subject NUL seq` then the handle: the `handleChanges` key.
    static func handleChange(subject: String, seq: UInt64, _ handle: CommunicationHandle) -> [UInt8] {
        var key = key(capacity: subject.utf8.count + 9 + handleLength(handle))
        key.appendSubject(subject)
        key.appendSeq(seq)
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

/// A subject's whole handle set at one seq: every handle's latest row, ordered by key. Written every
/// ``interval`` handle changes of the subject, so that the set as of any point is one checkpoint plus
/// at most that many changes away.
enum HandleCheckpoint {
    static let interval = 32

    static func encode(_ rows: [(key: ByteKey, row: HandleRow)]) -> [UInt8] {
        encode(inKeyOrder: rows.sorted(by: { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }).map(\.row))
    }

    /// The same bytes as ``encode(_:)``, from rows ordered by handle (``HandleSets/sortedRows(_:_:subjectPrefix:atMost:)``).
    /// Handle order is key order unless a value is over 200 bytes (keyed by its hash): only then are keys made and sorted.
    static func encode(sortedRows rows: [HandleRow]) -> [UInt8] {
        guard rows.allSatisfy({ $0.handle.value.utf8.count <= Keys.longestPlainHandle }) else {
            return encode(rows.map { (ByteKey(Keys.handleOnly($0.handle)), $0) })
        }
        return encode(inKeyOrder: rows)
    }

    private static func encode(inKeyOrder rows: [HandleRow]) -> [UInt8] {
        var w = RecordWriter(capacity: 64 * rows.count + 8)
        w.byte(1)
        w.unsigned(UInt64(rows.count))
        for row in rows {
            let bytes = row.encoded()
            w.unsigned(UInt64(bytes.count))
            w.bytes.append(contentsOf: bytes)
        }
        return w.bytes
    }

    /// The rows in the order they are stored: by key.
    static func decodeRows(_ bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) -> [HandleRow] {
        var r = RecordReader(bytes)
        guard try r.byte() == 1 else { throw .init(reason: "unknown handle checkpoint version") }
        let count = try r.count()
        var rows: [HandleRow] = []
        rows.reserveCapacity(count)
        for _ in 0..<count { rows.append(try HandleRow(decoding: try r.raw(try r.count()))) }
        guard r.isAtEnd else { throw .init(reason: "trailing bytes in handle checkpoint") }
        return rows
    }
}
