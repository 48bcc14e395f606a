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
        public var description: String { "damaged record: \(reason)" }
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
        case .subjectErased: 8
        }
    }

    public static func encode(_ event: PermissionEvent, recordedAt: Timestamp) -> [UInt8] {
        var w = RecordWriter()
        w.byte(version)
        write(event, recordedAt: recordedAt, into: &w, envelope: false)
        return w.bytes
    }

    /// The fields of `event` after the version byte; with `envelope`, without its personal fields (format
    /// version 2: handles keep their kind, and names, descriptions, titles and messages are left out).
    static func write(_ event: PermissionEvent, recordedAt: Timestamp, into w: inout RecordWriter, envelope: Bool) {
        func handle(_ h: CommunicationHandle) {
            if envelope { w.byte(Codes.kind(h.kind)) } else { w.handle(h) }
        }
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
                    handle(person.handle)
                    if !envelope { w.name(person.nameComponents) }
                }
                w.unsigned(Codes.actionMask(topic.actions))
            case .significantAppUpdate(let topic):
                w.byte(2)
                if !envelope { w.text(topic.description) }
            }
            w.unsigned(UInt64(q.choices.count))
            for choice in q.choices {
                w.text(choice.id)
                if !envelope { w.text(choice.title) }
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
            if !envelope { w.optionalText(error.message) }
        case .questionAnswered(let id, let choiceID, let via):
            w.uuid(id)
            w.text(choiceID)
            w.byte(Codes.via(via))
        case .handlesObserved(let checked, let known):
            w.unsigned(UInt64(checked.count))
            for h in checked { handle(h) }
            w.unsigned(UInt64(known.count))
            for h in known { handle(h) }
        case .permissionChanged(let permission, let state, let cause):
            w.byte(Codes.permission(permission))
            w.byte(Codes.state(state))
            w.byte(cause.map(Codes.cause) ?? 0)
        case .subjectErased(let erasure):
            w.byte(Codes.basis(erasure.basis))
            w.optionalText(erasure.reference)
            w.optionalTime(erasure.before)
        }
    }

    /// The fields every record starts with: what a reader needs of an event it only names or places in time.
    public struct Header {
        /// The record's format version: 1, or 2 for a record whose personal fields are sealed apart (``SealedRecord``).
        public var version: UInt8
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
    static func readHeader(_ r: inout RecordReader, id: Bool) throws(DecodingError) -> Header {
        let v = try r.byte()
        guard v == version || v == SealedRecord.version else { throw DecodingError(reason: "unknown format version \(v)") }
        let tag = try r.byte()
        guard let type = Self.types[Int(tag)] else { throw DecodingError(reason: "unknown event type tag \(tag)") }
        let occurredAt = Timestamp(microseconds: try r.signed())
        let recordedAt = Timestamp(microseconds: try r.signed())
        return Header(version: v, type: type, occurredAt: occurredAt, recordedAt: recordedAt, id: id ? try r.text() : "")
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
        guard header.version == version else { throw DecodingError(reason: "a version \(header.version) record read as version \(version)") }
        var personal = PersonalValueSource.inline
        let event = try readBody(header, from: &r, personal: &personal)
        guard r.isAtEnd else { throw DecodingError(reason: "\(r.remaining) unexpected trailing bytes") }
        return event
    }

    /// The event after its header, its personal values taken from `personal`: from the record (version 1), or,
    /// for the envelope ``write(_:recordedAt:into:envelope:)`` wrote without them, from the opened personal fields
    /// or nowhere (left empty: handles with an empty value, no names, empty texts, no message).
    static func readBody(_ header: Header, from r: inout RecordReader, personal: inout PersonalValueSource) throws(DecodingError) -> PermissionEvent {
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
                for _ in 0..<count { people.append(PersonInformation(handle: try personal.handle(&r), nameComponents: try personal.name(&r))) }
                let actions = try Codes.actions(mask: try r.unsigned())
                guard !people.isEmpty else { throw DecodingError(reason: "a communication topic without people") }
                topic = .communication(CommunicationTopic(uncheckedPersonInformation: people, actions: actions))
            case 2:
                topic = .significantAppUpdate(SignificantAppUpdateTopic(uncheckedDescription: try personal.text(&r, .description)))
            case let other: throw DecodingError(reason: "unknown topic \(other)")
            }
            let count = try r.count()
            var choices: [PermissionChoice] = []
            choices.reserveCapacity(count)
            for _ in 0..<count {
                let cid = try r.text()
                let title = try personal.text(&r, .choiceTitle)
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
            payload = .questionAskFailed(questionID: qid, error: AskError(code: code, message: try personal.optionalText(&r, .errorMessage)))
        case .questionAnswered:
            let qid = try r.uuid()
            let choice = try r.text()
            payload = .questionAnswered(questionID: qid, choiceID: choice, via: try Codes.via(try r.byte()))
        case .questionExpired: payload = .questionExpired(questionID: try r.uuid())
        case .handlesObserved:
            var checked: [CommunicationHandle] = []
            let checkedCount = try r.count()
            checked.reserveCapacity(checkedCount)
            for _ in 0..<checkedCount { checked.append(try personal.handle(&r)) }
            var known: [CommunicationHandle] = []
            let knownCount = try r.count()
            known.reserveCapacity(knownCount)
            for _ in 0..<knownCount { known.append(try personal.handle(&r)) }
            payload = .handlesObserved(checked: checked, known: known)
        case .permissionChanged:
            let permission = try Codes.permission(try r.byte())
            let state = try Codes.state(try r.byte())
            let causeCode = try r.byte()
            payload = .permissionChanged(permission, state: state, cause: causeCode == 0 ? nil : try Codes.cause(causeCode))
        case .subjectErased:
            let basis = try Codes.basis(try r.byte())
            payload = .subjectErased(Erasure(basis: basis, reference: try r.optionalText(), before: try r.optionalTime()))
        }
        return PermissionEvent(id: header.id, subject: subject, occurredAt: header.occurredAt, recordedAt: header.recordedAt, payload: payload)
    }
}
