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
}
