import Foundation
import Testing

/// One line of `export`, byte for byte, with the fields that `history` filters on.
struct ExportedLine {
    /// The line as `export` wrote it, without its newline.
    var text: String
    var object: [String: Any]
    var seq: Int
    var type: String
    var subject: String
    var recordedAt: String
    /// `recordedAt` in microseconds since 1970, to compare in time order.
    var recordedMicros: Int64
    /// The question the event is about: `question.id` of a `question.asked`, else `questionId`.
    var questionID: String?
}

extension Sandbox {
    /// The ledger's export, one parsed line per event.
    func exportedLines(_ ledger: String) throws -> [ExportedLine] {
        let text = String(decoding: try export(ledger), as: UTF8.self)
        return try text.split(separator: "\n").map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
            let recordedAt = try #require(object.string("recordedAt"), "\(line)")
            return ExportedLine(
                text: String(line), object: object,
                seq: try #require(object.int("seq"), "\(line)"),
                type: try #require(object.string("type"), "\(line)"),
                subject: try #require(object.string("subject"), "\(line)"),
                recordedAt: recordedAt,
                recordedMicros: try #require(microseconds(recordedAt), "\(recordedAt)"),
                questionID: (object["question"] as? [String: Any])?.string("id") ?? object.string("questionId"))
        }
    }
}

/// A JSON value written with sorted keys, so that two parsed values compare as text.
func canonicalJSON(_ value: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    else { return "\(value)" }
    return String(decoding: data, as: UTF8.self)
}

/// An RFC 3339 time for `micros` (microseconds since 1970), written with a numeric offset of `offsetMinutes`
/// (or `Z` for 0) and six fraction digits, such as `2026-11-20T12:08:09.250001+01:00`.
func rfc3339(micros: Int64, offsetMinutes: Int = 0) -> String {
    let local = micros + Int64(offsetMinutes) * 60_000_000
    let seconds = local >= 0 ? local / 1_000_000 : (local - 999_999) / 1_000_000
    let fraction = local - seconds * 1_000_000
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    let body = String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!, Int(fraction))
    guard offsetMinutes != 0 else { return body + "Z" }
    let sign = offsetMinutes > 0 ? "+" : "-"
    return body + String(format: "%@%02d:%02d", sign, abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
}

/// The lines of a fixture that are events (not `#` comments or blank).
func fixtureEventLines(_ name: String) throws -> [String] {
    try Fixture.text(name).split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
}

/// The lines of a table wider than 80 columns, counting Characters (so `…` and `•` count as one).
func linesWiderThan80(_ run: ToolRun) -> [String] {
    run.outLines.filter { $0.count > 80 }
}

/// The lines of a table that show a value cut short (with `…`): docs/spec/CLI.md says tables never do.
func linesCutShort(_ run: ToolRun) -> [String] {
    run.outLines.filter { $0.contains("…") }
}
