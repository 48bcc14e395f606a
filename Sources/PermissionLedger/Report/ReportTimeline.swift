import Foundation
import PermissionModel

/// The timeline picture of an audit report: an inline SVG, one lane per contact and per system permission, time
/// running left to right over the report's period.
///
/// Nothing in it carries meaning by colour alone: each bar of a contact holds the letter of its source (M, P, D,
/// O) and a pattern, a lapse is drawn as a bar that stops at a cross with the word "lapsed", an erased value is
/// drawn grey and hatched with the word "erased", every bar has a `<title>` that says what it is, and each
/// lane's question marks one that counts them.
/// Every bar carries the `seq` of the event that began it in `data-seq` (and the class `holds` while it still
/// holds), each lane what it is about (`data-handle` and `data-kind`, or `data-erased`; `data-permission`), and the
/// `svg` element its period (`data-from`, `data-to`) and where the plot begins and ends in user units, so that a
/// reader (or a test) can check each bar against the ledger's own answer.
struct ReportTimeline {
    let report: AuditReport

    /// The drawing's width in user units; the SVG scales to the width of the page.
    static let width = 1000.0
    static let plotStart = 250.0
    static let plotEnd = 985.0
    static let laneHeight = 26.0
    static let axisHeight = 34.0
    static let headingHeight = 26.0

    /// The x of `time` on the plot, the period's ends at its edges.
    func x(_ time: Timestamp) -> Double {
        let span = max(1, Double(report.to.microseconds - report.from.microseconds))
        let offset = Double(time.microseconds - report.from.microseconds)
        return Self.plotStart + (Self.plotEnd - Self.plotStart) * min(max(offset / span, 0), 1)
    }

    func svg() -> String {
        var y = Self.axisHeight
        var body = lanes("Contacts", report.contacts, empty: "no contact known in this period", y: &y, contactLane)
        y += 8
        body += lanes("System permissions", report.permissions, empty: "no permission changed", y: &y, permissionLane)
        let height = y + 6
        return """
        <svg xmlns="http://www.w3.org/2000/svg" id="timeline-chart" class="timeline" viewBox="0 0 \(Self.width) \(svgNumber(height))" \
        data-from="\(report.from)" data-to="\(report.to)" data-plot-start="\(Self.plotStart)" data-plot-end="\(Self.plotEnd)" \
        width="\(Self.width)" height="\(svgNumber(height))" role="img" aria-labelledby="timeline-title timeline-desc" \
        preserveAspectRatio="xMinYMin meet">
        <title id="timeline-title">Timeline of \(HTMLText.escaped(report.subject))'s contacts and permissions</title>
        <desc id="timeline-desc">One lane per contact: bars where it was known, lettered by source (M approved in \
        Messages, P in person, D by default, O observed); question marks where questions were asked and ended. \
        Then one lane per system permission, one bar per state. The tables below hold the same facts.</desc>
        \(Self.definitions)
        \(axis(bottom: height - 4))
        \(body)</svg>
        """
    }

    /// Patterns that tell sources and states apart without colour.
    static let definitions = """
        <defs>
        <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">\
        <rect width="6" height="6" class="hatch-ground"/><line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern>
        <pattern id="dots" width="5" height="5" patternUnits="userSpaceOnUse">\
        <rect width="5" height="5" class="dots-ground"/><circle cx="2.5" cy="2.5" r="1.2" class="dots-dot"/></pattern>
        </defs>
        """

    /// A heading, then one lane a row (or a note when there is none), from `y` down; `y` ends below the last.
    private func lanes<Lane>(_ title: String, _ lanes: [Lane], empty: String, y: inout Double, _ draw: (Lane, Double) -> String) -> String {
        var out = heading(title, y: y)
        y += Self.headingHeight
        if lanes.isEmpty {
            out += note(empty, y: y)
            y += Self.laneHeight
        }
        for lane in lanes {
            out += draw(lane, y)
            y += Self.laneHeight
        }
        return out
    }

    /// Where a bar from `start` to `end` (`nil`: the report's point) begins and how wide it is, clipped to the
    /// period and at least 2 units wide; `nil` when it lies outside the period.
    private func bar(_ start: Timestamp, _ end: Timestamp?) -> (x: Double, width: Double)? {
        let end = end ?? report.point.time
        guard end >= report.from, start <= report.to else { return nil }
        let x0 = x(max(start, report.from))
        return (x0, max(x(min(end, report.to)) - x0, 2))
    }

    private func heading(_ text: String, y: Double) -> String {
        "<text class=\"lane-heading\" x=\"4\" y=\"\(svgNumber(y + 18))\">\(text)</text>\n"
    }

    private func note(_ text: String, y: Double) -> String {
        "<text class=\"lane-note\" x=\"\(svgNumber(Self.plotStart))\" y=\"\(svgNumber(y + 17))\">\(text)</text>\n"
    }

    /// The time axis: ticks at round times, labelled, with grid lines down to `bottom`.
    private func axis(bottom: Double) -> String {
        var out = "<g class=\"axis\">"
        for tick in ticks() {
            let tx = svgNumber(x(tick.time))
            out += "<line class=\"grid\" x1=\"\(tx)\" y1=\"\(svgNumber(Self.axisHeight - 6))\" x2=\"\(tx)\" y2=\"\(svgNumber(bottom))\"/>"
            out += "<text class=\"tick\" x=\"\(tx)\" y=\"14\" text-anchor=\"middle\">\(tick.label.0)</text>"
            if let second = tick.label.1 {
                out += "<text class=\"tick\" x=\"\(tx)\" y=\"26\" text-anchor=\"middle\">\(second)</text>"
            }
        }
        return out + "</g>"
    }

    /// Round times inside the period, at most eight, each with its label (a day, and a time of day when the step
    /// is shorter than a day).
    func ticks() -> [(time: Timestamp, label: (String, String?))] {
        let minute: Int64 = 60_000_000
        let day = 1_440 * minute
        let steps: [Int64] = [minute, 5 * minute, 15 * minute, 60 * minute, 180 * minute, 360 * minute, 720 * minute,
                              day, 2 * day, 7 * day, 14 * day, 30 * day, 91 * day, 365 * day, 3_650 * day]
        let span = report.to.microseconds - report.from.microseconds
        let step: Int64 = steps.first(where: { span / $0 <= 7 }) ?? 3_650 * day
        var first = report.from.microseconds / step * step
        if first < report.from.microseconds { first += step }
        var result: [(Timestamp, (String, String?))] = []
        var t = first
        while t <= report.to.microseconds, result.count < 9 {
            let time = Timestamp(microseconds: t)
            result.append((time, (HTMLText.day(time), step < day ? HTMLText.minute(time) : nil)))
            t += step
        }
        return result
    }

    private func label(_ text: String, y: Double, title: String, erased: Bool) -> String {
        // Long values are cut on the picture; the title and the tables hold them whole.
        var shown = displayed(text)
        if shown.count > 30 { shown = String(shown.prefix(29)) + "…" }
        return "<text class=\"lane-label\(erased ? " erased-label" : "")\" x=\"4\" y=\"\(svgNumber(y + 17))\">"
            + "<title>\(HTMLText.escaped(title))</title>\(HTMLText.escaped(shown))</text>\n"
    }

    private func contactLane(_ lane: ContactLane, y: Double) -> String {
        var out = "<g class=\"lane contact\" \(ReportPage.handleAttributes(lane.handle, kind: lane.kind))>"
        switch lane.handle {
        case .readable(let handle):
            out += label(handle.value, y: y, title: "\(handle.kind.rawValue) \(handle.value)", erased: false)
        case .erased(let mark):
            out += label("(erased, seq \(mark.seq))", y: y, title: "a \(lane.kind.rawValue) erased by seq \(mark.seq) (\(mark.basis.rawValue))", erased: true)
        }
        out += "<line class=\"lane-line\" x1=\"\(svgNumber(Self.plotStart))\" y1=\"\(svgNumber(y + 13))\" x2=\"\(svgNumber(Self.plotEnd))\" y2=\"\(svgNumber(y + 13))\"/>"
        for interval in lane.intervals {
            guard let (x0, width) = bar(interval.start, interval.end) else { continue }
            let source = interval.erased != nil ? "erased" : interval.source.rawValue
            let letter = interval.erased != nil ? "E" : Self.letter(interval.source)
            var title = "\(Self.sourcePhrase(interval.source)), \(HTMLText.short(interval.start))"
            title += interval.end.map { " to " + (HTMLText.day($0) == HTMLText.day(interval.start) ? HTMLText.clock($0) : HTMLText.short($0)) } ?? ", still known"
            if interval.lapsed { title += ", lapsed" }
            else if let until = interval.until { title += ", until \(HTMLText.short(until))" }
            if let erased = interval.erased { title += ", erased by seq \(erased.seq)" }
            out += "<g class=\"bar source-\(source)\(interval.end == nil ? " holds" : "")\" data-seq=\"\(interval.seq)\">"
            out += "<title>\(HTMLText.escaped(title))</title>"
            out += "<rect x=\"\(svgNumber(x0))\" y=\"\(svgNumber(y + 6))\" width=\"\(svgNumber(width))\" height=\"14\"/>"
            if width >= 12 {
                out += "<text class=\"bar-letter\" x=\"\(svgNumber(x0 + 3))\" y=\"\(svgNumber(y + 17))\">\(letter)</text>"
            }
            if interval.lapsed {
                out += "<text class=\"lapse\" x=\"\(svgNumber(x0 + width + 2))\" y=\"\(svgNumber(y + 17))\">✕ lapsed</text>"
            }
            out += "</g>"
        }
        out += questionMarks(lane.marks, y: y)
        return out + "</g>\n"
    }

    /// The marks of a lane's questions, drawn compactly: the times they were asked as one path of short ticks,
    /// and each outcome's glyph at the times questions ended so, in one `<text>` per outcome (its `x` a list), each
    /// group with a title that counts it. A busy child has thousands; the questions table lists each one.
    private func questionMarks(_ marks: [QuestionMark], y: Double) -> String {
        var asked: [Double] = []
        var ended: [QuestionState: [Double]] = [:]
        for mark in marks {
            if mark.askedAt >= report.from, mark.askedAt <= report.to { asked.append(x(mark.askedAt)) }
            if let at = mark.resolvedAt, at >= report.from, at <= report.to { ended[mark.state, default: []].append(x(at)) }
        }
        var out = ""
        if !asked.isEmpty {
            // Marks closer than a unit apart are one on the picture.
            let points = Set(asked.map { ($0 * 2).rounded() / 2 }).sorted()
            let path = points.map { "M\(svgNumber($0)) \(svgNumber(y))v6" }.joined()
            out += "<g class=\"mark asked\"><title>\(asked.count) \(asked.count == 1 ? "question" : "questions") asked</title><path d=\"\(path)\"/></g>"
        }
        for state in QuestionState.allCases {
            guard let xs = ended[state] else { continue }
            let points = Set(xs.map { ($0 * 2).rounded() / 2 }).sorted()
            let glyphs = String(repeating: Self.glyph(state), count: points.count)
            out += "<g class=\"mark ended state-\(state.rawValue)\"><title>\(xs.count) \(state.rawValue)</title>"
                + "<text x=\"\(points.map(svgNumber).joined(separator: " "))\" y=\"\(svgNumber(y + 5))\" text-anchor=\"middle\">\(glyphs)</text></g>"
        }
        return out
    }

    static func glyph(_ state: QuestionState) -> String {
        switch state {
        case .approved: "✓"
        case .denied: "✗"
        case .canceled: "⊘"
        case .expired: "◷"
        case .failed: "!"
        case .pending: "?"
        }
    }

    private func permissionLane(_ lane: PermissionLane, y: Double) -> String {
        var out = "<g class=\"lane permission\" data-permission=\"\(lane.permission.rawValue)\">"
        out += label(lane.permission.rawValue, y: y, title: "permission \(lane.permission.rawValue)", erased: false)
        out += "<line class=\"lane-line\" x1=\"\(svgNumber(Self.plotStart))\" y1=\"\(svgNumber(y + 13))\" x2=\"\(svgNumber(Self.plotEnd))\" y2=\"\(svgNumber(y + 13))\"/>"
        for interval in lane.intervals {
            guard let (x0, width) = bar(interval.start, interval.end) else { continue }
            var title = "\(lane.permission.rawValue) \(interval.state.rawValue), \(HTMLText.short(interval.start))"
            title += interval.end.map { " to \(HTMLText.short($0))" } ?? ""
            title += interval.cause.map { " (\($0.rawValue))" } ?? ""
            title += ", seq \(interval.seq)"
            out += "<g class=\"bar state-\(interval.state.rawValue)\(interval.end == nil ? " holds" : "")\" data-seq=\"\(interval.seq)\">"
            out += "<title>\(HTMLText.escaped(title))</title>"
            out += "<rect x=\"\(svgNumber(x0))\" y=\"\(svgNumber(y + 6))\" width=\"\(svgNumber(width))\" height=\"14\"/>"
            let name = interval.state.rawValue
            if width >= Double(name.count) * 6 + 6 {
                out += "<text class=\"bar-letter\" x=\"\(svgNumber(x0 + 3))\" y=\"\(svgNumber(y + 17))\">\(name)</text>"
            }
            out += "</g>"
        }
        return out + "</g>\n"
    }

    static func letter(_ source: KnownInterval.Source) -> String {
        switch source {
        case .messages: "M"
        case .inPerson: "P"
        case .byDefault: "D"
        case .observation: "O"
        }
    }

    static func sourcePhrase(_ source: KnownInterval.Source) -> String {
        switch source {
        case .messages: "approved in Messages"
        case .inPerson: "approved in person"
        case .byDefault: "approved by the default choice"
        case .observation: "observed as known"
        }
    }
}

/// A coordinate with at most two decimals, without trailing zeros: SVG's numbers, short and exact enough.
func svgNumber(_ value: Double) -> String {
    let hundredths = (value * 100).rounded()
    if hundredths.truncatingRemainder(dividingBy: 100) == 0 { return String(Int(hundredths / 100)) }
    var text = String(format: "%.2f", hundredths / 100)
    if text.hasSuffix("0") { text.removeLast() }
    return text
}
