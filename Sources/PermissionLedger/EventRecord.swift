import Foundation
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif
import PermissionModel

/// The compact binary form in which events are stored (format version 1). See `docs/STORAGE.md`.
///
/// The chain hash is computed over exactly these bytes, so an encoding, once written, never changes:
/// a later version adds a new version byte and keeps decoding version 1 forever.
@_spi(StorageEngine) public enum EventRecord {
    static let version: UInt8 = 1

    public struct DecodingError: Error, CustomStringConvertible {
        public var reason: String
        public init(reason: String) { self.reason = reason }
        public var description: String { "damaged event record: \(reason)" }
    }

    // Type tags: fixed forever, never renumbered.
    static func tag(_ type: EventType) -> UInt8 {
        switch type {
        case .questionAsked: 1
        case .questionSendCanceled: 2
        case .questionAskFailed: 3
        case .questionAnswered: 4
        case .questionExpired: 5
        case .handlesObserved: 6
        case .permissionChanged: 7
        }
    }

    public static func encode(_ event: PermissionEvent, recordedAt: Timestamp) -> [UInt8] {
        var w = RecordWriter()
        w.byte(version)
        w.byte(tag(event.type))
        w.signed(event.occurredAt.microseconds)
        w.signed(recordedAt.microseconds)
        w.text(event.id)
        w.text(event.subject)
        switch event.payload {
        case .questionAsked(let q):
            w.uuid(q.id)
            switch q.topic {
            case .communication(let topic):
                w.byte(1)
                w.unsigned(UInt64(topic.personInformation.count))
                for person in topic.personInformation {
                    w.handle(person.handle)
                    w.name(person.nameComponents)
                }
                w.unsigned(Codes.actionMask(topic.actions))
            case .significantAppUpdate(let topic):
                w.byte(2)
                w.text(topic.description)
            }
            w.unsigned(UInt64(q.choices.count))
            for choice in q.choices {
                w.text(choice.id)
                w.text(choice.title)
                w.byte(choice.answer == .approval ? 1 : 2)
                w.unsigned(choice.grantSeconds.map(UInt64.init) ?? 0)
            }
            w.text(q.defaultChoiceID)
            w.optionalTime(q.expiresAt)
        case .questionSendCanceled(let id), .questionExpired(let id):
            w.uuid(id)
        case .questionAskFailed(let id, let error):
            w.uuid(id)
            w.byte(Codes.askError(error.code))
            w.optionalText(error.message)
        case .questionAnswered(let id, let choiceID, let via):
            w.uuid(id)
            w.text(choiceID)
            w.byte(Codes.via(via))
        case .handlesObserved(let checked, let known):
            w.unsigned(UInt64(checked.count))
            for handle in checked { w.handle(handle) }
            w.unsigned(UInt64(known.count))
            for handle in known { w.handle(handle) }
        case .permissionChanged(let permission, let state, let cause):
            w.byte(Codes.permission(permission))
            w.byte(Codes.state(state))
            w.byte(cause.map(Codes.cause) ?? 0)
        }
        return w.bytes
    }

    /// The fields every record starts with: what a reader needs of an event it only names or places in time.
    public struct Header {
        /// The event's type.
        public var type: EventType
        /// When it happened.
        public var occurredAt: Timestamp
        /// When the ledger recorded it.
        public var recordedAt: Timestamp
        /// The event's id; empty when decoded with `id: false`.
        public var id: String
    }

    /// Decodes a record's header and nothing after it (with `id: false`, not the id either): as-of points,
    /// the head and event lists read no more of a record. The payload is left unchecked; ``decode(_:)``
    /// reads and checks the whole record.
    public static func decodeHeader(_ bytes: UnsafeRawBufferPointer, id: Bool = true) throws(DecodingError) -> Header {
        var r = RecordReader(bytes)
        return try readHeader(&r, id: id)
    }

    /// Reads the header that starts every record: what ``decodeHeader(_:id:)`` returns and ``decode(_:)`` begins with.
    private static func readHeader(_ r: inout RecordReader, id: Bool) throws(DecodingError) -> Header {
        let v = try r.byte()
        guard v == version else { throw DecodingError(reason: "unknown format version \(v)") }
        let tag = try r.byte()
        guard let type = Self.types[Int(tag)] else { throw DecodingError(reason: "unknown event type tag \(tag)") }
        let occurredAt = Timestamp(microseconds: try r.signed())
        let recordedAt = Timestamp(microseconds: try r.signed())
        return Header(type: type, occurredAt: occurredAt, recordedAt: recordedAt, id: id ? try r.text() : "")
    }

    /// The event type of each record tag (`nil` for a byte that is no tag), made from ``tag(_:)``.
    private static let types: [EventType?] = {
        var types = [EventType?](repeating: nil, count: 256)
        for type in EventType.allCases { types[Int(tag(type))] = type }
        return types
    }()

    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> PermissionEvent {
        var r = RecordReader(bytes)
        let header = try readHeader(&r, id: true)
        let subject = try r.text()
        let payload: PermissionEvent.Payload
        switch header.type {
        case .questionAsked:
            let qid = try r.uuid()
            let topic: QuestionTopic
            switch try r.byte() {
            case 1:
                let count = try r.count()
                var people: [PersonInformation] = []
                people.reserveCapacity(count)
                for _ in 0..<count { people.append(PersonInformation(handle: try r.handle(), nameComponents: try r.name())) }
                let actions = try Codes.actions(mask: try r.unsigned())
                guard !people.isEmpty else { throw DecodingError(reason: "a communication topic without people") }
                topic = .communication(CommunicationTopic(uncheckedPersonInformation: people, actions: actions))
            case 2:
                topic = .significantAppUpdate(SignificantAppUpdateTopic(uncheckedDescription: try r.text()))
            case let other: throw DecodingError(reason: "unknown topic \(other)")
            }
            let count = try r.count()
            var choices: [PermissionChoice] = []
            choices.reserveCapacity(count)
            for _ in 0..<count {
                let cid = try r.text()
                let title = try r.text()
                let answer: PermissionChoice.Answer
                switch try r.byte() {
                case 1: answer = .approval
                case 2: answer = .denial
                case let other: throw DecodingError(reason: "unknown answer \(other)")
                }
                let grant = try r.unsigned()
                guard grant <= UInt64(Int64.max), grant == 0 || answer == .approval else { throw DecodingError(reason: "invalid choice") }
                choices.append(PermissionChoice(uncheckedID: cid, title: title, answer: answer, grantSeconds: grant == 0 ? nil : Int64(grant)))
            }
            let defaultID = try r.text()
            let expiresAt = try r.optionalTime()
            guard let q = PermissionQuestion(uncheckedID: qid, topic: topic, choices: choices, defaultChoiceID: defaultID, expiresAt: expiresAt) else {
                throw DecodingError(reason: "the default choice is not among the question's choices")
            }
            payload = .questionAsked(q)
        case .questionSendCanceled: payload = .questionSendCanceled(questionID: try r.uuid())
        case .questionAskFailed:
            let qid = try r.uuid()
            let code = try Codes.askError(try r.byte())
            payload = .questionAskFailed(questionID: qid, error: AskError(code: code, message: try r.optionalText()))
        case .questionAnswered:
            let qid = try r.uuid()
            let choice = try r.text()
            payload = .questionAnswered(questionID: qid, choiceID: choice, via: try Codes.via(try r.byte()))
        case .questionExpired: payload = .questionExpired(questionID: try r.uuid())
        case .handlesObserved:
            var checked: [CommunicationHandle] = []
            let checkedCount = try r.count()
            checked.reserveCapacity(checkedCount)
            for _ in 0..<checkedCount { checked.append(try r.handle()) }
            var known: [CommunicationHandle] = []
            let knownCount = try r.count()
            known.reserveCapacity(knownCount)
            for _ in 0..<knownCount { known.append(try r.handle()) }
            payload = .handlesObserved(checked: checked, known: known)
        case .permissionChanged:
            let permission = try Codes.permission(try r.byte())
            let state = try Codes.state(try r.byte())
            let causeCode = try r.byte()
            payload = .permissionChanged(permission, state: state, cause: causeCode == 0 ? nil : try Codes.cause(causeCode))
        }
        guard r.isAtEnd else { throw DecodingError(reason: "\(r.remaining) unexpected trailing bytes") }
        return PermissionEvent(id: header.id, subject: subject, occurredAt: header.occurredAt, recordedAt: header.recordedAt, payload: payload)
    }
}

/// The fixed numeric codes of every enumeration in stored records. Never renumber; only append.
enum Codes {
    private static let actionOrder: [CommunicationTopic.Action] = [
        .message, .audioCall, .videoCall, .call, .chat, .follow, .beFollowed, .friend, .connect, .communicate,
    ]
    static func actionMask(_ actions: Set<CommunicationTopic.Action>) -> UInt64 {
        var mask: UInt64 = 0
        for (bit, action) in actionOrder.enumerated() where actions.contains(action) { mask |= 1 << UInt64(bit) }
        return mask
    }
    static func actions(mask: UInt64) throws(EventRecord.DecodingError) -> Set<CommunicationTopic.Action> {
        guard mask >> UInt64(actionOrder.count) == 0 else { throw .init(reason: "unknown action bits") }
        return actionSets[Int(mask)]
    }

    /// The set of actions of every mask, made once: building a set hashes each action, and every
    /// `question.asked` read back from the log needs one.
    private static let actionSets: [Set<CommunicationTopic.Action>] = (0..<(1 << actionOrder.count)).map { mask in
        Set(actionOrder.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element))
    }

    private static let kinds: [CommunicationHandle.Kind] = [.phoneNumber, .emailAddress, .custom]
    static func kind(_ kind: CommunicationHandle.Kind) -> UInt8 { UInt8(kinds.firstIndex(of: kind)! + 1) }
    static func kind(_ code: UInt8) throws(EventRecord.DecodingError) -> CommunicationHandle.Kind {
        try lookup(kinds, code, "handle kind")
    }

    private static let askErrors: [AskError.Code] = [
        .communicationLimitsNotEnabled, .contactSyncNotSetup, .invalidQuestion, .notAvailable, .systemError, .unknown,
    ]
    static func askError(_ code: AskError.Code) -> UInt8 { UInt8(askErrors.firstIndex(of: code)! + 1) }
    static func askError(_ code: UInt8) throws(EventRecord.DecodingError) -> AskError.Code { try lookup(askErrors, code, "ask error") }

    private static let vias: [AnswerVia] = [.messages, .inPerson, .default]
    static func via(_ via: AnswerVia) -> UInt8 { UInt8(vias.firstIndex(of: via)! + 1) }
    static func via(_ code: UInt8) throws(EventRecord.DecodingError) -> AnswerVia { try lookup(vias, code, "via") }

    private static let permissions: [SystemPermission] = [
        .camera, .microphone, .contacts, .photoLibrary, .photoLibraryAddOnly, .locationWhenInUse, .locationAlways,
        .notifications, .calendars, .reminders, .motion, .health, .bluetooth, .speechRecognition, .siri, .mediaLibrary,
        .tracking, .localNetwork,
    ]
    static func permission(_ p: SystemPermission) -> UInt8 { UInt8(permissions.firstIndex(of: p)! + 1) }
    static func permission(_ code: UInt8) throws(EventRecord.DecodingError) -> SystemPermission { try lookup(permissions, code, "permission") }

    private static let states: [SystemPermission.State] = [
        .notDetermined, .askAgain, .doNotAskAgain, .authorized, .denied, .restricted, .limited, .provisional, .unsupported,
    ]
    static func state(_ s: SystemPermission.State) -> UInt8 { UInt8(states.firstIndex(of: s)! + 1) }
    static func state(_ code: UInt8) throws(EventRecord.DecodingError) -> SystemPermission.State { try lookup(states, code, "permission state") }

    private static let causes: [SystemPermission.Cause] = [.prePrompt, .systemPrompt, .settings, .reset, .inferred]
    static func cause(_ c: SystemPermission.Cause) -> UInt8 { UInt8(causes.firstIndex(of: c)! + 1) }
    static func cause(_ code: UInt8) throws(EventRecord.DecodingError) -> SystemPermission.Cause { try lookup(causes, code, "cause") }

    private static func lookup<T>(_ table: [T], _ code: UInt8, _ what: String) throws(EventRecord.DecodingError) -> T {
        guard code >= 1, Int(code) <= table.count else { throw .init(reason: "unknown \(what) code \(code)") }
        return table[Int(code) - 1]
    }
}

/// Appends the primitives of stored records: LEB128 varints, zigzag for signed, length-prefixed UTF-8.
struct RecordWriter {
    var bytes: [UInt8] = []

    init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func unsigned(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func text(_ s: String) {
        var copy = s
        copy.withUTF8 { utf8 in
            unsigned(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optionalText(_ s: String?) {
        if let s { byte(1); text(s) } else { byte(0) }
    }

    mutating func optionalTime(_ t: Timestamp?) {
        if let t { byte(1); signed(t.microseconds) } else { byte(0) }
    }

    mutating func uuid(_ id: UUID) {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
    }

    mutating func handle(_ h: CommunicationHandle) {
        byte(Codes.kind(h.kind))
        text(h.value)
    }

    mutating func name(_ name: PersonNameComponents?) {
        guard let name else { byte(0); return }
        let parts = EventJSON.nameParts(name)
        var mask: UInt8 = 0x80
        for (bit, part) in parts.enumerated() where part.1 != nil { mask |= 1 << UInt8(bit) }
        byte(mask)
        for part in parts { if let value = part.1 { text(value) } }
    }
}

/// The text `bytes` hold, or `nil` when they are not valid UTF-8.
///
/// `String(validating:as:)` runs unspecialized on this toolchain, looking up generic metadata on every
/// call: the largest single cost of decoding a handle row. Decoding repairs invalid bytes instead, and its
/// result is always valid UTF-8, so it equals its input byte for byte exactly when the input was valid.
func validUTF8(_ bytes: UnsafeRawBufferPointer) -> String? {
    let text = String(decoding: bytes, as: UTF8.self)
    guard text.utf8.count == bytes.count else { return nil }
    guard let start = bytes.baseAddress, !bytes.isEmpty else { return text }
    let same = text.utf8.withContiguousStorageIfAvailable { memcmp($0.baseAddress!, start, bytes.count) == 0 }
    return same ?? text.utf8.elementsEqual(bytes) ? text : nil
}

/// Reads what ``RecordWriter`` wrote, checking every bound: damaged bytes throw, never trap.
struct RecordReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { index == bytes.count }
    var remaining: Int { bytes.count - index }

    mutating func byte() throws(EventRecord.DecodingError) -> UInt8 {
        guard index < bytes.count else { throw .init(reason: "record ends early") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func unsigned() throws(EventRecord.DecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64, !(shift == 63 && b > 1) else { throw .init(reason: "number too large") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func signed() throws(EventRecord.DecodingError) -> Int64 {
        let u = try unsigned()
        return Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1)))
    }

    mutating func count() throws(EventRecord.DecodingError) -> Int {
        let n = try unsigned()
        guard n <= UInt64(remaining) else { throw .init(reason: "count \(n) exceeds the record") }
        return Int(n)
    }

    mutating func raw(_ n: Int) throws(EventRecord.DecodingError) -> UnsafeRawBufferPointer {
        guard n <= remaining else { throw .init(reason: "record ends early") }
        defer { index += n }
        return UnsafeRawBufferPointer(rebasing: bytes[index..<index + n])
    }

    mutating func text() throws(EventRecord.DecodingError) -> String {
        guard let s = validUTF8(try raw(try count())) else { throw .init(reason: "text is not UTF-8") }
        return s
    }

    mutating func optionalText() throws(EventRecord.DecodingError) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try text()
        case let other: throw .init(reason: "bad presence flag \(other)")
        }
    }

    mutating func optionalTime() throws(EventRecord.DecodingError) -> Timestamp? {
        switch try byte() {
        case 0: return nil
        case 1: return Timestamp(microseconds: try signed())
        case let other: throw .init(reason: "bad presence flag \(other)")
        }
    }

    mutating func uuid() throws(EventRecord.DecodingError) -> UUID {
        let s = try raw(16)
        return UUID(uuid: (s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]))
    }

    mutating func handle() throws(EventRecord.DecodingError) -> CommunicationHandle {
        let kind = try Codes.kind(try byte())
        let value = try text()
        guard !value.isEmpty else { throw .init(reason: "an empty handle") }
        return CommunicationHandle(normalizedValue: value, kind: kind)
    }

    mutating func name() throws(EventRecord.DecodingError) -> PersonNameComponents? {
        let mask = try byte()
        if mask == 0 { return nil }
        guard mask & 0x80 != 0, mask & 0x40 == 0 else { throw .init(reason: "bad name mask") }
        var n = PersonNameComponents()
        if mask & 1 != 0 { n.namePrefix = try text() }
        if mask & 2 != 0 { n.givenName = try text() }
        if mask & 4 != 0 { n.middleName = try text() }
        if mask & 8 != 0 { n.familyName = try text() }
        if mask & 16 != 0 { n.nameSuffix = try text() }
        if mask & 32 != 0 { n.nickname = try text() }
        return n
    }
}
