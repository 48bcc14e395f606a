import Foundation
import PermissionModel

/// The personal fields of one event (docs/spec/PRIVACY.md, "Personal fields"), in the order the event holds them:
/// what is encrypted at rest, what a commitment covers, and what an erasure makes unreadable.
///
/// Everything else of an event (its envelope) stays readable for good. Its canonical bytes, which the commitment
/// covers, are each entry in order as a one-byte ``Field`` code, then the value's UTF-8 length as an unsigned
/// LEB128 varint, then the UTF-8 bytes (docs/STORAGE.md, "Personal fields").
package struct PersonalFields: Hashable, Sendable {
    /// Which personal field an entry is. The codes are fixed forever.
    package enum Field: UInt8, Hashable, Sendable {
        /// A handle's `value` (in a question's people, or an observation's `checked` or `known`).
        case handleValue = 1
        /// A person has a name: its components follow (an empty text, so that an empty name stays one).
        case name = 2
        case namePrefix = 3
        case givenName = 4
        case middleName = 5
        case familyName = 6
        case nameSuffix = 7
        case nickname = 8
        /// A significant app update's `description`.
        case description = 9
        /// A choice's `title`.
        case choiceTitle = 10
        /// An ask failure's `message`.
        case errorMessage = 11

        static let nameComponents: [Field] = [.namePrefix, .givenName, .middleName, .familyName, .nameSuffix, .nickname]
    }

    /// One personal value and where it belongs.
    package struct Entry: Hashable, Sendable {
        package var field: Field
        package var value: String
    }

    /// The values, in the event's order.
    package var entries: [Entry]

    package var isEmpty: Bool { entries.isEmpty }

    /// The personal fields of `event`.
    package init(of event: PermissionEvent) {
        var entries: [Entry] = []
        func add(_ field: Field, _ value: String) { entries.append(Entry(field: field, value: value)) }
        switch event.payload {
        case .questionAsked(let question):
            switch question.topic {
            case .communication(let topic):
                for person in topic.personInformation {
                    add(.handleValue, person.handle.value)
                    if let name = person.nameComponents {
                        add(.name, "")
                        for (field, part) in zip(Field.nameComponents, EventJSON.nameParts(name)) {
                            if let value = part.1 { add(field, value) }
                        }
                    }
                }
            case .significantAppUpdate(let topic):
                add(.description, topic.description)
            }
            for choice in question.choices { add(.choiceTitle, choice.title) }
        case .questionAskFailed(_, let error):
            if let message = error.message { add(.errorMessage, message) }
        case .handlesObserved(let checked, let known):
            for handle in checked + known { add(.handleValue, handle.value) }
        case .questionSendCanceled, .questionAnswered, .questionExpired, .permissionChanged, .subjectErased:
            break
        }
        self.entries = entries
    }

    package init(entries: [Entry]) { self.entries = entries }

    /// The canonical bytes: each entry as its code, its length (varint) and its UTF-8.
    package func encoded() -> [UInt8] {
        var w = RecordWriter(capacity: 16 * entries.count)
        for entry in entries {
            w.byte(entry.field.rawValue)
            w.text(entry.value)
        }
        return w.bytes
    }

    /// Reads canonical bytes back, refusing an unknown code, bad UTF-8 or a cut entry.
    package init(decoding bytes: UnsafeRawBufferPointer) throws(EventRecord.DecodingError) {
        var r = RecordReader(bytes)
        var entries: [Entry] = []
        while !r.isAtEnd {
            let code = try r.byte()
            guard let field = Field(rawValue: code) else { throw .init(reason: "unknown personal field \(code)") }
            entries.append(Entry(field: field, value: try r.text()))
        }
        self.entries = entries
    }

    /// `event` with its personal values replaced by these, in order: `event` is an event decoded from its
    /// envelope alone (its personal values empty, its people without names), and these its personal fields.
    ///
    /// - Throws: when the entries do not fit the event (too few, too many, out of place): the record is damaged.
    package func restoring(_ event: PermissionEvent) throws(EventRecord.DecodingError) -> PermissionEvent {
        var next = entries.makeIterator()
        var pending = next.next()
        func take(_ field: Field) throws(EventRecord.DecodingError) -> String {
            guard let entry = pending, entry.field == field else {
                throw .init(reason: "personal fields do not fit the event: expected \(field), found \(pending.map { "\($0.field)" } ?? "none")")
            }
            pending = next.next()
            return entry.value
        }
        func takeIf(_ field: Field) -> String? {
            guard let entry = pending, entry.field == field else { return nil }
            pending = next.next()
            return entry.value
        }
        func handle(_ h: CommunicationHandle) throws(EventRecord.DecodingError) -> CommunicationHandle {
            let value = try take(.handleValue)
            guard !value.isEmpty else { throw .init(reason: "an empty handle") }
            return CommunicationHandle(normalizedValue: value, kind: h.kind)
        }
        var restored = event
        switch event.payload {
        case .questionAsked(let question):
            let topic: QuestionTopic
            switch question.topic {
            case .communication(let communication):
                var people: [PersonInformation] = []
                for person in communication.personInformation {
                    let h = try handle(person.handle)
                    var name: PersonNameComponents?
                    if takeIf(.name) != nil {
                        var components = PersonNameComponents()
                        components.namePrefix = takeIf(.namePrefix)
                        components.givenName = takeIf(.givenName)
                        components.middleName = takeIf(.middleName)
                        components.familyName = takeIf(.familyName)
                        components.nameSuffix = takeIf(.nameSuffix)
                        components.nickname = takeIf(.nickname)
                        name = components
                    }
                    people.append(PersonInformation(handle: h, nameComponents: name))
                }
                topic = .communication(CommunicationTopic(uncheckedPersonInformation: people, actions: communication.actions))
            case .significantAppUpdate:
                topic = .significantAppUpdate(SignificantAppUpdateTopic(uncheckedDescription: try take(.description)))
            }
            var choices: [PermissionChoice] = []
            for choice in question.choices {
                choices.append(PermissionChoice(uncheckedID: choice.id, title: try take(.choiceTitle), answer: choice.answer, grantSeconds: choice.grantSeconds))
            }
            guard let q = PermissionQuestion(uncheckedID: question.id, topic: topic, choices: choices, defaultChoiceID: question.defaultChoiceID, expiresAt: question.expiresAt) else {
                throw .init(reason: "the default choice is not among the question's choices")
            }
            restored.payload = .questionAsked(q)
        case .questionAskFailed(let id, let error):
            restored.payload = .questionAskFailed(questionID: id, error: AskError(code: error.code, message: takeIf(.errorMessage)))
        case .handlesObserved(let checked, let known):
            var restoredChecked: [CommunicationHandle] = []
            for h in checked { restoredChecked.append(try handle(h)) }
            var restoredKnown: [CommunicationHandle] = []
            for h in known { restoredKnown.append(try handle(h)) }
            restored.payload = .handlesObserved(checked: restoredChecked, known: restoredKnown)
        case .questionSendCanceled, .questionAnswered, .questionExpired, .permissionChanged, .subjectErased:
            break
        }
        guard pending == nil else { throw .init(reason: "personal fields left over after the event's last one") }
        return restored
    }
}
