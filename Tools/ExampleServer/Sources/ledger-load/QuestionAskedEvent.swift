import Foundation

/// One valid `question.asked` event in the JSON Lines form of docs/spec/EVENTS.md: a fresh question (its own
/// UUID) from child `kid-<n % 8>` about a custom handle, with a fresh event id.
struct QuestionAskedEvent {
    let id: String
    let line: String

    init(number: Int, occurredAt: String) {
        id = "load-" + UUID().uuidString.lowercased()
        let question = UUID().uuidString
        line = #"{"type":"question.asked","id":"\#(id)","subject":"kid-\#(number % 8)","occurredAt":"\#(occurredAt)","#
            + #""question":{"id":"\#(question)","topic":{"communication":{"people":[{"handle":{"value":"friend-\#(number % 40)","kind":"custom"}}],"#
            + #""actions":["message"]}}}}"#
    }

    /// The current time in RFC 3339, UTC, to the second.
    static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
