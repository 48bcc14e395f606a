import Foundation
import PermissionModel

extension PermissionEvent {
    /// Checks the text rules of docs/spec/EVENTS.md "Text", which every event appended from now on meets, however it was
    /// made (read from JSON Lines or built in Swift): identifiers (`id`, `subject`, handle values, choice ids,
    /// `choiceId`) hold no character of the general categories Cc, Cf, Zl and Zp; free text (names, choice
    /// titles, a description, an error's message) holds no control character other than tab and line feed.
    ///
    /// Events already stored are not checked against these rules: they are read as they were accepted.
    ///
    /// - Throws: ``/PermissionModel/PermissionModelError`` naming the field by its path in the JSON form and the
    ///   offending character by its code point, never the value.
    func checkText() throws(PermissionModelError) {
        try validateIdentifier(id, field: "id", maxBytes: 128)
        try validateIdentifier(subject, field: "subject", maxBytes: 256)
        switch payload {
        case .questionAsked(let question):
            switch question.topic {
            case .communication(let topic):
                for (index, person) in topic.personInformation.enumerated() {
                    // Each path is spelled only for the message of a field that fails.
                    try Self.checkHandle(person.handle, path: "question.topic.communication.people[\(index)].handle")
                    if let name = person.nameComponents { try Self.checkName(name, path: "question.topic.communication.people[\(index)].name") }
                }
            case .significantAppUpdate(let update):
                try validateFreeText(update.description, field: "question.topic.significantAppUpdate.description")
            }
            for (index, choice) in question.choices.enumerated() {
                try validateIdentifier(choice.id, field: "question.choices[\(index)].id")
                try validateFreeText(choice.title, field: "question.choices[\(index)].title")
            }
        case .questionAskFailed(_, let error):
            if let message = error.message { try validateFreeText(message, field: "error.message") }
        case .questionAnswered(_, let choiceID, _):
            try validateIdentifier(choiceID, field: "choiceId")
        case .handlesObserved(let checked, let known):
            for (index, handle) in checked.enumerated() { try Self.checkHandle(handle, path: "checked[\(index)]") }
            for (index, handle) in known.enumerated() { try Self.checkHandle(handle, path: "known[\(index)]") }
        case .subjectErased(let erasure):
            if let reference = erasure.reference { try validateIdentifier(reference, field: "erasure.reference", maxBytes: 128) }
        case .questionSendCanceled, .questionExpired, .permissionChanged:
            break
        }
    }

    /// A handle's value is an identifier whatever its kind: a valid phone number or email address holds no
    /// control, format or separator character either.
    private static func checkHandle(_ handle: CommunicationHandle, path: @autoclosure () -> String) throws(PermissionModelError) {
        try validateIdentifier(handle.value, field: path() + ".value", maxBytes: handle.kind == .custom ? 256 : .max)
    }

    private static func checkName(_ name: PersonNameComponents, path: @autoclosure () -> String) throws(PermissionModelError) {
        func check(_ value: String?, _ field: String) throws(PermissionModelError) {
            if let value { try validateFreeText(value, field: path() + "." + field) }
        }
        try check(name.namePrefix, "namePrefix")
        try check(name.givenName, "givenName")
        try check(name.middleName, "middleName")
        try check(name.familyName, "familyName")
        try check(name.nameSuffix, "nameSuffix")
        try check(name.nickname, "nickname")
    }
}
