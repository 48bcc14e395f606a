import Foundation
import PermissionModel

extension QueryJSON {
    /// `{"events":[…]}`: each event as `export` writes it.
    public static func historyResult(_ events: [RecordedEvent]) -> String {
        collected { emit in historyResult(events, chunks: emit) }
    }

    /// ``historyResult(_:)`` given to `emit` in chunks as it is written.
    public static func historyResult<E: Error>(_ events: [RecordedEvent], chunks emit: ([UInt8]) throws(E) -> Void) throws(E) {
        var w = JSONWriter(capacity: 1 << 16)
        w.raw("{\"events\":[")
        for (i, e) in events.enumerated() {
            if i > 0 { w.raw(",") }
            EventJSON.write(e.event, to: &w)
            try w.drain(into: emit)
        }
        w.raw("]}")
        try w.drain(ifOver: 0, into: emit)
    }

    /// The `diff` command's JSON; `subject` is written on each handle and permission when `includeSubject`.
    public static func diffResult(_ diff: LedgerDiff, includeSubject: Bool) -> String {
        var w = JSONWriter()
        w.raw("{\"from\":"); writeAsOf(diff.from, to: &w)
        w.raw(",\"to\":"); writeAsOf(diff.to, to: &w)
        w.raw(",\"questions\":[")
        for (i, q) in diff.questions.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"id\":"); w.string(q.id.uuidString)
            w.raw(",\"subject\":"); w.string(q.subject)
            w.raw(",\"from\":"); w.optionalString(q.from?.rawValue)
            w.raw(",\"to\":"); w.optionalString(q.to?.rawValue)
            w.raw("}")
        }
        w.raw("],\"handles\":{\"added\":[")
        for (i, h) in diff.handlesAdded.enumerated() {
            if i > 0 { w.raw(",") }
            writeKnownHandle(h.handle, subject: includeSubject ? h.subject : nil, to: &w)
        }
        w.raw("],\"removed\":[")
        for (i, h) in diff.handlesRemoved.enumerated() {
            if i > 0 { w.raw(",") }
            writeKnownHandle(h.handle, subject: includeSubject ? h.subject : nil, to: &w)
        }
        w.raw("]},\"permissions\":[")
        for (i, p) in diff.permissions.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{")
            if includeSubject { w.raw("\"subject\":"); w.string(p.subject); w.raw(",") }
            w.raw("\"permission\":"); w.string(p.permission.rawValue)
            w.raw(",\"from\":"); w.optionalString(p.from?.rawValue)
            w.raw(",\"to\":"); w.optionalString(p.to?.rawValue)
            w.raw("}")
        }
        w.raw("]}")
        return w.text
    }

    /// The `stats` command's JSON.
    public static func statisticsResult(_ stats: LedgerStatistics) -> String {
        let point = stats.point
        var w = JSONWriter()
        w.raw("{\"asOf\":"); writeAsOf(point, to: &w)
        w.raw(",\"head\":{\"seq\":"); w.integer(stats.head.seq)
        w.raw(",\"hash\":"); w.string(stats.head.hash.description)
        w.raw(",\"recordedAt\":"); w.optionalString(stats.head.recordedAt?.description)
        w.raw("},\"events\":"); w.integer(stats.eventsByType.values.reduce(0, +))
        w.raw(",\"eventsByType\":{")
        for (i, type) in EventType.allCases.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(type.rawValue); w.raw(":"); w.integer(stats.eventsByType[type] ?? 0)
        }
        w.raw("},\"subjects\":"); w.integer(stats.subjects)
        w.raw(",\"questions\":"); w.integer(stats.questionsByState.values.reduce(0, +))
        w.raw(",\"questionsByState\":{")
        for (i, state) in QuestionState.allCases.enumerated() {
            if i > 0 { w.raw(",") }
            w.string(state.rawValue); w.raw(":"); w.integer(stats.questionsByState[state] ?? 0)
        }
        w.raw("},\"fileBytes\":"); w.integer(stats.sizes.fileBytes)
        w.raw(",\"keyFile\":"); w.optionalString(stats.keyFile)
        w.raw(",\"migratedFrom\":")
        if let from = stats.migratedFrom {
            w.raw("{\"seq\":"); w.integer(from.seq); w.raw(",\"hash\":"); w.string(from.hash.description); w.raw("}")
        } else {
            w.raw("null")
        }
        w.raw("}")
        return w.text
    }

    /// The `who-approved` command's JSON: every version of the handle's record for each subject.
    public static func handleRecordsResult(_ records: [HandleRecord], handle: [CommunicationHandle], at point: AsOfPoint) -> String {
        var w = JSONWriter()
        w.raw("{\"asOf\":"); writeAsOf(point, to: &w)
        w.raw(",\"handles\":"); EventJSON.writeHandles(handle, to: &w)
        w.raw(",\"records\":[")
        for (i, r) in records.enumerated() {
            if i > 0 { w.raw(",") }
            w.raw("{\"subject\":"); w.string(r.subject)
            w.raw(",\"handle\":"); EventJSON.writeHandle(r.handle, to: &w)
            w.raw(",\"seq\":"); w.integer(r.seq)
            w.raw(",\"known\":"); w.bool(r.known)
            w.raw(",\"since\":"); w.time(r.since)
            w.raw(",\"until\":"); w.optionalString(r.until?.description)
            w.raw(",\"source\":")
            writeSource(r.source, to: &w)
            w.raw(",\"question\":")
            if let q = r.question {
                w.raw("{\"id\":"); w.string(q.question.id.uuidString)
                w.raw(",\"state\":"); w.string(q.state.rawValue)
                w.raw(",\"choice\":")
                if let choice = q.choice { EventJSON.writeChoice(choice, to: &w) } else { w.raw("null") }
                w.raw(",\"via\":"); w.optionalString(q.via?.rawValue)
                w.raw(",\"askedAt\":"); w.time(q.askedAt)
                w.raw(",\"answeredAt\":"); w.optionalString(q.resolvedAt?.description)
                w.raw(",\"late\":"); w.bool(q.late)
                w.raw("}")
            } else {
                w.raw("null")
            }
            w.raw(",\"ended\":")
            if let ended = r.ended {
                w.raw("{\"by\":"); w.string(ended.cause.rawValue)
                w.raw(",\"at\":"); w.time(ended.at)
                w.raw(",\"seq\":"); if let seq = ended.seq { w.integer(seq) } else { w.raw("null") }
                w.raw(",\"knownAfter\":"); w.bool(ended.knownAfter)
                w.raw("}")
            } else {
                w.raw("null")
            }
            w.raw("}")
        }
        w.raw("]}")
        return w.text
    }
}
