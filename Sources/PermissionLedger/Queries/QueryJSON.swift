import Foundation
import PermissionModel

/// The JSON forms of query results fixed by docs/spec/CLI.md. Keys are written in a fixed order.
public enum QueryJSON {
    /// `{"seq":N,"time":T}`: the point a query result answers for.
    public static func asOf(_ point: AsOfPoint) -> String {
        var w = JSONWriter()
        writeAsOf(point, to: &w)
        return w.text
    }

    static func writeAsOf(_ point: AsOfPoint, to w: inout JSONWriter) {
        w.raw("{\"seq\":"); w.integer(point.seq)
        w.raw(",\"time\":"); w.time(point.time)
        w.raw("}")
    }

    /// One question as `{"id":…,"subject":…,"topic":…,…,"error":…}`, with its `events` when `includeEvents`.
    public static func question(_ q: QuestionStatus, includeEvents: Bool) -> String {
        var w = JSONWriter()
        writeQuestion(q, includeEvents: includeEvents, to: &w)
        return w.text
    }

    static func writeQuestion(_ q: QuestionStatus, includeEvents: Bool, to w: inout JSONWriter) {
        w.raw("{")
        w.key("id", first: true); w.uuid(q.question.id)
        w.key("subject"); w.string(q.subject)
        w.key("topic"); w.string(q.question.topic.name)
        w.key("handles"); EventJSON.writeHandles(q.question.topic.handles, erased: q.erased, to: &w)
        w.key("description")
        switch q.appUpdateDescription {
        case .readable(let text): w.string(text)
        case .erased(let mark): w.raw("null"); EventJSON.writeErasure(mark, to: &w)
        case nil: w.raw("null")
        }
        w.key("actions"); w.raw("[")
        if case .communication(let topic) = q.question.topic {
            for (i, action) in topic.orderedActions.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(action.rawValue)
            }
        }
        w.raw("]")
        w.key("state"); w.string(q.state.rawValue)
        w.key("late"); w.bool(q.late)
        w.key("askedAt"); w.time(q.askedAt)
        w.key("resolvedAt"); w.optionalString(q.resolvedAt?.description)
        w.key("expiresAt"); w.optionalString(q.question.expiresAt?.description)
        w.key("choice")
        if let choice = q.choice { EventJSON.writeChoice(choice, erased: q.erased, to: &w) } else { w.raw("null") }
        w.key("via"); w.optionalString(q.via?.rawValue)
        w.key("error")
        if let error = q.error {
            w.raw("{\"code\":"); w.string(error.code.rawValue)
            w.raw(",\"message\":"); w.optionalString(q.errorMessage?.value)
            EventJSON.writeErasure(q.errorErased, to: &w)
            w.raw("}")
        } else {
            w.raw("null")
        }
        if includeEvents {
            w.key("events"); w.raw("[")
            for (i, e) in q.events.enumerated() {
                if i > 0 { w.raw(",") }
                w.raw("{\"seq\":"); w.integer(e.seq)
                w.raw(",\"type\":"); w.string(e.type.rawValue)
                w.raw(",\"id\":"); w.string(e.id)
                w.raw(",\"occurredAt\":"); w.time(e.occurredAt)
                w.raw(",\"recordedAt\":"); w.time(e.recordedAt)
                w.raw("}")
            }
            w.raw("]")
        }
        w.raw("}")
    }

    static func writeKnownHandle(_ h: KnownHandle, subject: String? = nil, to w: inout JSONWriter) {
        w.raw("{")
        if let subject { w.key("subject", first: true); w.string(subject); w.raw(",") }
        w.raw("\"value\":")
        if h.erased == nil { w.string(h.handle.value) } else { w.raw("null") }
        w.key("kind"); w.string(h.handle.kind.rawValue)
        EventJSON.writeErasure(h.erased, to: &w)
        w.key("since"); w.time(h.since)
        w.key("until"); w.optionalString(h.until?.description)
        w.key("source")
        writeSource(h.source, to: &w)
        w.raw("}")
    }

    /// `{"question":ID}` for an approval, `{"observation":SEQ}` for a `handles.observed` event.
    static func writeSource(_ source: HandleSource, to w: inout JSONWriter) {
        switch source {
        case .question(let id): w.raw("{\"question\":"); w.uuid(id); w.raw("}")
        case .observation(let seq): w.raw("{\"observation\":"); w.integer(seq); w.raw("}")
        }
    }

    static func writePermission(_ p: PermissionStatus, to w: inout JSONWriter) {
        w.raw("{\"permission\":"); w.string(p.permission.rawValue)
        w.key("state"); w.string(p.state.rawValue)
        w.key("since"); w.time(p.since)
        w.key("canPrompt"); w.bool(p.canPrompt)
        w.key("cause"); w.optionalString(p.cause?.rawValue)
        w.raw("}")
    }

    /// `{"asOf":…,"question":{…}}`, the `question` command's JSON.
    public static func questionResult(_ q: QuestionStatus, at point: AsOfPoint) -> String {
        var w = JSONWriter()
        w.raw("{\"asOf\":"); writeAsOf(point, to: &w)
        w.raw(",\"question\":"); writeQuestion(q, includeEvents: true, to: &w)
        w.raw("}")
        return w.text
    }

    /// `{"asOf":…,"questions":[…]}`, the `questions` command's JSON.
    public static func questionsResult(_ qs: [QuestionStatus], at point: AsOfPoint) -> String {
        collected { emit in questionsResult(qs, at: point, chunks: emit) }
    }

    /// ``questionsResult(_:at:)`` given to `emit` in chunks as it is written.
    public static func questionsResult<E: Error>(
        _ qs: [QuestionStatus], at point: AsOfPoint, chunks emit: ([UInt8]) throws(E) -> Void
    ) throws(E) {
        var w = JSONWriter(capacity: 1 << 16)
        w.raw("{\"asOf\":"); writeAsOf(point, to: &w)
        w.raw(",\"questions\":[")
        for (i, q) in qs.enumerated() {
            if i > 0 { w.raw(",") }
            writeQuestion(q, includeEvents: false, to: &w)
            try w.drain(into: emit)
        }
        w.raw("]}")
        try w.drain(ifOver: 0, into: emit)
    }

    /// The `known-handles` command's JSON.
    public static func knownHandlesResult(_ hs: [KnownHandle], subject: String, at point: AsOfPoint) -> String {
        collected { emit in knownHandlesResult(hs, subject: subject, at: point, chunks: emit) }
    }

    /// ``knownHandlesResult(_:subject:at:)`` given to `emit` in chunks as it is written.
    public static func knownHandlesResult<E: Error>(
        _ hs: [KnownHandle], subject: String, at point: AsOfPoint, chunks emit: ([UInt8]) throws(E) -> Void
    ) throws(E) {
        var w = JSONWriter(capacity: 1 << 16)
        w.raw("{\"asOf\":"); writeAsOf(point, to: &w)
        w.raw(",\"subject\":"); w.string(subject)
        w.raw(",\"handles\":[")
        for (i, h) in hs.enumerated() {
            if i > 0 { w.raw(",") }
            writeKnownHandle(h, to: &w)
            try w.drain(into: emit)
        }
        w.raw("]}")
        try w.drain(ifOver: 0, into: emit)
    }

    /// The text a chunked writer gives, as one string.
    static func collected(_ write: (([UInt8]) -> Void) -> Void) -> String {
        var bytes: [UInt8] = []
        write { bytes += $0 }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The `permissions` command's JSON; `require` is written only when given.
    public static func permissionsResult(
        _ ps: [PermissionStatus], subject: String, at point: AsOfPoint, require: [SystemPermission]?
    ) -> String {
        var w = JSONWriter()
        w.raw("{\"asOf\":"); writeAsOf(point, to: &w)
        w.raw(",\"subject\":"); w.string(subject)
        w.raw(",\"permissions\":[")
        for (i, p) in ps.enumerated() {
            if i > 0 { w.raw(",") }
            writePermission(p, to: &w)
        }
        w.raw("]")
        if let require {
            let missing = missingPermissions(require, in: ps)
            w.raw(",\"require\":{\"satisfied\":"); w.bool(missing.isEmpty)
            w.raw(",\"missing\":[")
            for (i, p) in missing.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(p.rawValue)
            }
            w.raw("]}")
        }
        w.raw("}")
        return w.text
    }

    /// The required permissions that are not `authorized`, `limited` or `provisional`, in the order given.
    public static func missingPermissions(_ require: [SystemPermission], in ps: [PermissionStatus]) -> [SystemPermission] {
        var seen = Set<SystemPermission>()
        return require.filter { p in
            seen.insert(p).inserted && !(ps.first { $0.permission == p }?.state.isGranted ?? false)
        }
    }
}
