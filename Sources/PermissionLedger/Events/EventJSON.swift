import Foundation
import PermissionModel

/// Reads and writes events in the JSON Lines form of docs/spec/EVENTS.md.
public enum EventJSON {
    /// The longest line accepted, in bytes.
    public static let maxLineBytes = 1 << 20

    /// Parses one line (without its `\n`; a trailing `\r` is tolerated).
    ///
    /// - Returns: `nil` for a blank line or a `#` comment.
    /// - Throws: ``EventRejection`` naming the field and the reason.
    public static func decode(line: some Collection<UInt8>) throws(EventRejection) -> PermissionEvent? {
        var bytes = Array(line)
        if bytes.last == 0x0D { bytes.removeLast() }
        if let tooLong = rejection(forLineOfLength: bytes.count) { throw tooLong }
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return nil }
        if bytes[first] == UInt8(ascii: "#") { return nil }
        let value: JSONValue
        do {
            value = try bytes.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in try JSONReader.parse(buffer) }
        } catch {
            throw EventRejection(error.description)
        }
        return try decode(value)
    }

    /// The rejection `decode(line:)` gives a line of `length` bytes (without its `\n` and a trailing
    /// `\r`) that is longer than ``maxLineBytes``, else `nil`: lets a reader that stops keeping the bytes
    /// of an over-long line report it all the same.
    public static func rejection(forLineOfLength length: Int) -> EventRejection? {
        guard length > maxLineBytes else { return nil }
        return EventRejection("the line is \(length) bytes long; at most \(maxLineBytes) (1 MiB) are allowed")
    }

    /// Parses one line of text.
    public static func decode(line: String) throws(EventRejection) -> PermissionEvent? {
        try decode(line: Array(line.utf8))
    }

    static func decode(_ value: JSONValue) throws(EventRejection) -> PermissionEvent {
        guard case .object(let members) = value else {
            throw EventRejection("expected a JSON object, got \(value.typeName)")
        }
        var typeName: String?
        if let member = members.first(where: { $0.key == "type" }), case .string(let name) = member.value { typeName = name }
        do {
            return try decodeEvent(members)
        } catch {
            throw EventRejection(error.description, eventType: typeName.flatMap { EventType(rawValue: $0) != nil ? $0 : nil })
        }
    }

    private static let envelope: Set<String> = ["type", "id", "subject", "occurredAt", "recordedAt", "seq", "salt", "commitment", "tokens", "hash"]
    private static let payloadFields: [EventType: Set<String>] = [
        .questionAsked: ["question"],
        .questionSendCanceled: ["questionId"],
        .questionAskFailed: ["questionId", "error"],
        .questionAnswered: ["questionId", "choiceId", "via"],
        .questionExpired: ["questionId"],
        .handlesObserved: ["checked", "known"],
        .permissionChanged: ["permission", "state", "cause"],
        .subjectErased: ["erasure"],
    ]

    private static func decodeEvent(_ members: [(key: String, value: JSONValue)]) throws(PermissionModelError) -> PermissionEvent {
        let fields = Fields(members, path: "")
        let type = try fields.enumeration("type", EventType.self)
        try fields.rejectUnknown(allowed: envelope.union(payloadFields[type]!))
        let id = try fields.string("id")
        try validateIdentifier(id, field: "id", maxBytes: 128)
        let subject = try fields.string("subject")
        try validateIdentifier(subject, field: "subject", maxBytes: 256)
        let occurredAt = try fields.time("occurredAt")
        let recordedAt = try fields.optionalTime("recordedAt")
        var seq: UInt64?
        if let raw = try fields.optionalInteger("seq") {
            guard raw >= 1 else { throw PermissionModelError("must be 1 or more, not \(raw)", field: "seq") }
            seq = UInt64(raw)
        }
        var hash: ChainHash?
        if let text = try fields.optionalString("hash") {
            guard let parsed = ChainHash(hex: text) else {
                throw PermissionModelError("must be 64 lowercase hex digits", field: "hash")
            }
            hash = parsed
        }
        var salt: [UInt8]?
        if let text = try fields.optionalString("salt") {
            guard let parsed = ChainHash(hex: text) else {
                throw PermissionModelError("must be 64 lowercase hex digits", field: "salt")
            }
            salt = parsed.bytes
        }
        // An erased event's exported form: its personal fields null, each holder naming the erasure.
        let erased = try fields.has("commitment") ? ErasedReading(fields) : nil
        let payload: PermissionEvent.Payload
        switch type {
        case .questionAsked:
            let object = try fields.object("question")
            payload = .questionAsked(try question(object, occurredAt: occurredAt, erased: erased))
        case .questionSendCanceled:
            payload = .questionSendCanceled(questionID: try fields.uuid("questionId"))
        case .questionExpired:
            payload = .questionExpired(questionID: try fields.uuid("questionId"))
        case .questionAskFailed:
            let questionID = try fields.uuid("questionId")
            let error = try fields.object("error")
            try error.rejectUnknown(allowed: erased == nil ? ["code", "message"] : ["code", "message", "erased"])
            let code = try error.enumeration("code", AskError.Code.self)
            var message: String?
            if let erased {
                // Erased, the message is gone, as a stored erased event has none.
                _ = try erased.text(error, "message")
            } else {
                message = try error.optionalString("message")
                if let message { try validateFreeText(message, field: error.path + "message") }
            }
            payload = .questionAskFailed(questionID: questionID, error: AskError(code: code, message: message))
        case .questionAnswered:
            let questionID = try fields.uuid("questionId")
            let choiceID = try fields.string("choiceId")
            try validateIdentifier(choiceID, field: "choiceId")
            let via = try fields.optionalEnumeration("via", AnswerVia.self) ?? .messages
            payload = .questionAnswered(questionID: questionID, choiceID: choiceID, via: via)
        case .handlesObserved:
            let checked = try fields.array("checked") { (value: JSONValue, path: String) throws(PermissionModelError) in
                try handle(value, path: path, erased: erased)
            }
            let known = try fields.array("known") { (value: JSONValue, path: String) throws(PermissionModelError) in
                try handle(value, path: path, erased: erased)
            }
            // Erased handles are told apart by their tokens, which the ledger puts in their place.
            payload = try erased == nil ? .handlesObserved(checking: checked, known: known) : .handlesObserved(checked: checked, known: known)
        case .permissionChanged:
            let permission = try fields.enumeration("permission", SystemPermission.self)
            let state = try fields.enumeration("state", SystemPermission.State.self)
            let cause = try fields.optionalEnumeration("cause", SystemPermission.Cause.self)
            payload = .permissionChanged(permission, state: state, cause: cause)
        case .subjectErased:
            let object = try fields.object("erasure")
            try object.rejectUnknown(allowed: ["basis", "reference", "before"])
            let basis = try object.enumeration("basis", Erasure.Basis.self)
            let reference = try object.optionalString("reference")
            if let reference { try validateIdentifier(reference, field: object.path + "reference", maxBytes: 128) }
            payload = .subjectErased(Erasure(basis: basis, reference: reference, before: try object.optionalTime("before")))
        }
        var event = PermissionEvent(
            id: id, subject: subject, occurredAt: occurredAt, recordedAt: recordedAt, seq: seq, hash: hash, payload: payload)
        event.salt = salt
        if let erased {
            guard salt == nil else { throw PermissionModelError("an erased event has no salt", field: "salt") }
            (event.erased, event.erasedFields) = try erased.finish()
        }
        return event
    }

    private static func question(_ fields: Fields, occurredAt: Timestamp, erased: ErasedReading?) throws(PermissionModelError) -> PermissionQuestion {
        try fields.rejectUnknown(allowed: ["id", "topic", "choices", "defaultChoice", "expiresAt"])
        let id = try fields.uuid("id")
        let topicFields = try fields.object("topic")
        try topicFields.rejectUnknown(allowed: ["communication", "significantAppUpdate"])
        let topic: QuestionTopic
        switch (topicFields.has("communication"), topicFields.has("significantAppUpdate")) {
        case (true, false):
            let object = try topicFields.object("communication")
            try object.rejectUnknown(allowed: ["people", "actions"])
            let people = try object.array("people") { (value: JSONValue, path: String) throws(PermissionModelError) in
                try person(value, path: path, erased: erased)
            }
            let actions = try object.optionalArray("actions") { (value: JSONValue, path: String) throws(PermissionModelError) in
                try enumerationValue(value, CommunicationTopic.Action.self, path: path)
            } ?? []
            do throws(PermissionModelError) {
                if erased == nil {
                    topic = .communication(try CommunicationTopic(personInformation: people, actions: Set(actions)))
                } else {
                    // Erased people's handles are all empty until the ledger puts their tokens in their place.
                    guard !people.isEmpty else { throw PermissionModelError("must list at least one person", field: "people") }
                    topic = .communication(CommunicationTopic(uncheckedPersonInformation: people, actions: Set(actions)))
                }
            } catch {
                throw error.nested(in: object.path.dropLastDot)
            }
        case (false, true):
            let object = try topicFields.object("significantAppUpdate")
            try object.rejectUnknown(allowed: erased == nil ? ["description"] : ["description", "erased"])
            do throws(PermissionModelError) {
                if let erased {
                    _ = try erased.text(object, "description")
                    topic = .significantAppUpdate(SignificantAppUpdateTopic(uncheckedDescription: ""))
                } else {
                    topic = .significantAppUpdate(try SignificantAppUpdateTopic(description: try object.string("description")))
                }
            } catch {
                throw error.nested(in: object.path.dropLastDot)
            }
        case (true, true):
            throw PermissionModelError("must hold exactly one of communication and significantAppUpdate, not both", field: topicFields.path.dropLastDot)
        case (false, false):
            throw PermissionModelError("must hold one of communication and significantAppUpdate", field: topicFields.path.dropLastDot)
        }
        let choices = try fields.optionalArray("choices") { (value: JSONValue, path: String) throws(PermissionModelError) in
            try choice(value, path: path, erased: erased)
        }
        if let choices, choices.isEmpty {
            throw PermissionModelError("must offer at least one approval and one denial", field: fields.path + "choices")
        }
        let defaultChoice = try fields.optionalString("defaultChoice")
        let expiresAt = try fields.optionalTime("expiresAt")
        if let expiresAt, expiresAt <= occurredAt {
            throw PermissionModelError(
                "\(expiresAt) is not later than occurredAt \(occurredAt)", field: fields.path + "expiresAt")
        }
        do {
            return try PermissionQuestion(
                id: id, topic: topic, choices: choices ?? [.approve, .decline], defaultChoiceID: defaultChoice, expiresAt: expiresAt)
        } catch {
            throw error.nested(in: fields.path.dropLastDot)
        }
    }

    private static func person(_ value: JSONValue, path: String, erased: ErasedReading?) throws(PermissionModelError) -> PersonInformation {
        let fields = try Fields(value, path: path)
        // An erased person's name is gone with its handle's value, and nothing says whether there was one.
        try fields.rejectUnknown(allowed: erased == nil ? ["handle", "name"] : ["handle"])
        let handleValue = try fields.required("handle")
        let handle = try handle(handleValue, path: fields.path + "handle", erased: erased)
        var name: PersonNameComponents?
        if fields.has("name") {
            let nameFields = try fields.object("name")
            let keys = ["namePrefix", "givenName", "middleName", "familyName", "nameSuffix", "nickname"]
            try nameFields.rejectUnknown(allowed: Set(keys))
            var components = PersonNameComponents()
            components.namePrefix = try nameFields.optionalString("namePrefix")
            components.givenName = try nameFields.optionalString("givenName")
            components.middleName = try nameFields.optionalString("middleName")
            components.familyName = try nameFields.optionalString("familyName")
            components.nameSuffix = try nameFields.optionalString("nameSuffix")
            components.nickname = try nameFields.optionalString("nickname")
            for (key, value) in zip(keys, [components.namePrefix, components.givenName, components.middleName,
                                           components.familyName, components.nameSuffix, components.nickname]) {
                if let value { try validateFreeText(value, field: nameFields.path + key) }
            }
            name = components
        }
        return PersonInformation(handle: handle, nameComponents: name)
    }

    static func handle(_ value: JSONValue, path: String, erased: ErasedReading? = nil) throws(PermissionModelError) -> CommunicationHandle {
        let fields = try Fields(value, path: path)
        try fields.rejectUnknown(allowed: erased == nil ? ["value", "kind"] : ["value", "kind", "erased"])
        let kind = try fields.enumeration("kind", CommunicationHandle.Kind.self)
        if let erased {
            _ = try erased.text(fields, "value")
            return CommunicationHandle(normalizedValue: "", kind: kind)
        }
        let raw = try fields.string("value")
        do {
            return try CommunicationHandle(value: raw, kind: kind)
        } catch {
            throw error.nested(in: path)
        }
    }

    private static func choice(_ value: JSONValue, path: String, erased: ErasedReading?) throws(PermissionModelError) -> PermissionChoice {
        let fields = try Fields(value, path: path)
        try fields.rejectUnknown(allowed: erased == nil ? ["id", "title", "answer", "grantSeconds"] : ["id", "title", "answer", "grantSeconds", "erased"])
        let id = try fields.string("id")
        let title = if let erased { try erased.text(fields, "title") } else { try fields.string("title") }
        let answer = try fields.enumeration("answer", PermissionChoice.Answer.self)
        let grant = try fields.optionalInteger("grantSeconds")
        do {
            guard erased == nil else {
                // Checked with a title in place of the erased one, kept empty.
                let checked = try PermissionChoice(id: id, title: "erased", answer: answer, grantSeconds: grant)
                return PermissionChoice(uncheckedID: checked.id, title: "", answer: answer, grantSeconds: grant)
            }
            return try PermissionChoice(id: id, title: title, answer: answer, grantSeconds: grant)
        } catch {
            throw error.nested(in: path)
        }
    }

    static func enumerationValue<E: RawRepresentable & CaseIterable>(
        _ value: JSONValue, _: E.Type, path: String
    ) throws(PermissionModelError) -> E where E.RawValue == String {
        guard case .string(let text) = value else {
            throw PermissionModelError("expected a string, got \(value.typeName)", field: path)
        }
        guard let result = E(rawValue: text) else {
            throw PermissionModelError(
                "\(quoted(text)) is not one of \(E.allCases.map(\.rawValue).joined(separator: ", "))", field: path)
        }
        return result
    }
}
