import Foundation
import PermissionModel

extension EventJSON {
    /// The event as one JSON line (without `\n`), keys in a fixed order:
    /// `seq`, `type`, `id`, `subject`, `occurredAt`, `recordedAt`, the payload's fields, `salt` (or, erased,
    /// `commitment` and `tokens`), `hash`.
    /// Absent optional fields are left out.
    public static func encode(_ event: PermissionEvent) -> String {
        var w = JSONWriter()
        write(event, to: &w)
        return w.text
    }

    static func write(_ event: PermissionEvent, to w: inout JSONWriter) {
        writeMembers(event, form: event.erased.map(PersonalValueForm.erased) ?? .shown, to: &w)
        if let salt = event.salt { w.key("salt"); w.string(hexString(salt)) }
        if let erased = event.erasedFields {
            w.key("commitment"); w.string(hexString(erased.commitment))
            if !erased.tokens.isEmpty {
                w.key("tokens"); w.raw("[")
                for (i, token) in erased.tokens.enumerated() {
                    if i > 0 { w.raw(",") }
                    w.string(hexString(token))
                }
                w.raw("]")
            }
        }
        if let hash = event.hash { w.key("hash"); w.string(hash.description) }
        w.raw("}")
    }

    /// How an encoding writes an event's personal values (docs/spec/PRIVACY.md, "Personal fields").
    enum PersonalValueForm {
        /// As they are.
        case shown
        /// `null`, in an object that says which erasure erased them (a person's name left out).
        case erased(ErasureMark)
        /// Left out, members and all: a Merkle leaf's form (docs/STORAGE.md, "Leaf data").
        case withheld

        var erasure: ErasureMark? {
            if case .erased(let mark) = self { mark } else { nil }
        }
    }

    /// The event's opening brace and its members up to its payload's, in the order of ``encode(_:)``, its personal
    /// values in `form`; the caller writes the members that follow, and the closing brace.
    static func writeMembers(_ event: PermissionEvent, form: PersonalValueForm, to w: inout JSONWriter) {
        w.raw("{")
        var first = true
        if let seq = event.seq {
            w.key("seq", first: true)
            w.integer(seq)
            first = false
        }
        w.key("type", first: first)
        w.string(event.type.rawValue)
        w.key("id"); w.string(event.id)
        w.key("subject"); w.string(event.subject)
        w.key("occurredAt"); w.time(event.occurredAt)
        if let recordedAt = event.recordedAt { w.key("recordedAt"); w.time(recordedAt) }
        switch event.payload {
        case .questionAsked(let question):
            w.key("question")
            writeQuestion(question, form: form, to: &w)
        case .questionSendCanceled(let id), .questionExpired(let id):
            w.key("questionId"); w.uuid(id)
        case .questionAskFailed(let id, let error):
            w.key("questionId"); w.uuid(id)
            w.key("error"); w.raw("{")
            w.key("code", first: true); w.string(error.code.rawValue)
            switch form {
            case .shown:
                if let message = error.message { w.key("message"); w.string(message) }
            case .erased(let mark):
                // An ask failure's one personal field is its message: an erased one had it.
                w.key("message"); w.raw("null"); writeErasure(mark, to: &w)
            case .withheld:
                break
            }
            w.raw("}")
        case .questionAnswered(let id, let choiceID, let via):
            w.key("questionId"); w.uuid(id)
            w.key("choiceId"); w.string(choiceID)
            w.key("via"); w.string(via.rawValue)
        case .handlesObserved(let checked, let known):
            w.key("checked"); writeHandles(checked, form: form, to: &w)
            w.key("known"); writeHandles(known, form: form, to: &w)
        case .permissionChanged(let permission, let state, let cause):
            w.key("permission"); w.string(permission.rawValue)
            w.key("state"); w.string(state.rawValue)
            if let cause { w.key("cause"); w.string(cause.rawValue) }
        case .subjectErased(let erasure):
            w.key("erasure"); w.raw("{")
            w.key("basis", first: true); w.string(erasure.basis.rawValue)
            if let reference = erasure.reference { w.key("reference"); w.string(reference) }
            if let before = erasure.before { w.key("before"); w.time(before) }
            w.raw("}")
        }
    }

    /// A handle; erased (`erased` set), its value is `null` and the object says which erasure erased it.
    static func writeHandle(_ handle: CommunicationHandle, erased: ErasureMark? = nil, to w: inout JSONWriter) {
        writeHandle(handle, form: erased.map(PersonalValueForm.erased) ?? .shown, to: &w)
    }

    static func writeHandle(_ handle: CommunicationHandle, form: PersonalValueForm, to w: inout JSONWriter) {
        switch form {
        case .shown: w.raw("{\"value\":"); w.string(handle.value); w.raw(",")
        case .erased: w.raw("{\"value\":null,")
        case .withheld: w.raw("{")
        }
        w.raw("\"kind\":")
        w.string(handle.kind.rawValue)
        writeErasure(form.erasure, to: &w)
        w.raw("}")
    }

    static func writeHandles(_ handles: [CommunicationHandle], erased: ErasureMark? = nil, to w: inout JSONWriter) {
        writeHandles(handles, form: erased.map(PersonalValueForm.erased) ?? .shown, to: &w)
    }

    static func writeHandles(_ handles: [CommunicationHandle], form: PersonalValueForm, to w: inout JSONWriter) {
        w.raw("[")
        for (i, handle) in handles.enumerated() {
            if i > 0 { w.raw(",") }
            writeHandle(handle, form: form, to: &w)
        }
        w.raw("]")
    }

    /// `,"erased":{"seq":N,"basis":BASIS}` in an object that held an erased value (docs/spec/PRIVACY.md).
    static func writeErasure(_ erased: ErasureMark?, to w: inout JSONWriter) {
        guard let erased else { return }
        w.key("erased"); w.raw("{")
        w.key("seq", first: true); w.integer(erased.seq)
        w.key("basis"); w.string(erased.basis.rawValue)
        w.raw("}")
    }

    static func writeChoice(_ choice: PermissionChoice, erased: ErasureMark? = nil, to w: inout JSONWriter) {
        writeChoice(choice, form: erased.map(PersonalValueForm.erased) ?? .shown, to: &w)
    }

    static func writeChoice(_ choice: PermissionChoice, form: PersonalValueForm, to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true); w.string(choice.id)
        switch form {
        case .shown: w.key("title"); w.string(choice.title)
        case .erased(let mark): w.key("title"); w.raw("null"); writeErasure(mark, to: &w)
        case .withheld: break
        }
        w.key("answer"); w.string(choice.answer.rawValue)
        if let grant = choice.grantSeconds { w.key("grantSeconds"); w.integer(grant) }
        w.raw("}")
    }

    private static func writeQuestion(_ question: PermissionQuestion, form: PersonalValueForm, to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true); w.uuid(question.id)
        w.key("topic"); w.raw("{")
        switch question.topic {
        case .communication(let topic):
            w.key("communication", first: true)
            w.raw("{\"people\":[")
            for (i, person) in topic.personInformation.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"handle\":")
                writeHandle(person.handle, form: form, to: &w)
                if case .shown = form, let name = person.nameComponents {
                    w.raw(",\"name\":{")
                    var firstName = true
                    for (key, part) in nameParts(name) {
                        if let part {
                            if !firstName { w.raw(",") }
                            firstName = false
                            w.string(key); w.raw(":"); w.string(part)
                        }
                    }
                    w.raw("}")
                }
                w.raw("}")
            }
            w.raw("],\"actions\":[")
            for (i, action) in topic.orderedActions.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(action.rawValue)
            }
            w.raw("]}")
        case .significantAppUpdate(let topic):
            w.key("significantAppUpdate", first: true)
            switch form {
            case .shown: w.raw("{\"description\":"); w.string(topic.description); w.raw("}")
            case .erased(let mark): w.raw("{\"description\":null"); writeErasure(mark, to: &w); w.raw("}")
            case .withheld: w.raw("{}")
            }
        }
        w.raw("}")
        w.key("choices"); w.raw("[")
        for (i, choice) in question.choices.enumerated() {
            if i > 0 { w.raw(",") }
            writeChoice(choice, form: form, to: &w)
        }
        w.raw("]")
        w.key("defaultChoice"); w.string(question.defaultChoiceID)
        if let expiresAt = question.expiresAt { w.key("expiresAt"); w.time(expiresAt) }
        w.raw("}")
    }

    static func nameParts(_ name: PersonNameComponents) -> [(String, String?)] {
        [("namePrefix", name.namePrefix), ("givenName", name.givenName), ("middleName", name.middleName),
         ("familyName", name.familyName), ("nameSuffix", name.nameSuffix), ("nickname", name.nickname)]
    }
}
