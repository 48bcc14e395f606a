import Foundation
import PermissionModel

extension AuditReport {
    /// The report as one self-contained HTML document (docs/REPORTS.md): no script, and nothing fetched from
    /// anywhere (a content security policy forbids both), so that it reads the same from a file, an email
    /// attachment or a case file, and prints to PDF on A4 or Letter.
    ///
    /// - Parameter bundleDirectory: where the subject's audit bundle was written beside the report, to name in its
    ///   integrity section; `nil` when none was.
    public func html(bundleDirectory: String? = nil) -> String {
        var page = ReportPage()
        page.idLength = shortQuestionIDLength()
        page.open(title: "Audit report: \(subject)")
        page.header(self)
        page.raw("<main>\n")
        page.summary(self)
        page.timeline(self)
        page.contacts(self)
        page.questions(self)
        page.permissions(self)
        page.events(self)
        page.integrity(self, bundleDirectory: bundleDirectory)
        page.raw("</main>\n")
        page.close(footer: "Made by PermissionLedger from the ledger's records up to seq \(point.seq). "
            + "Every value is shown as the ledger holds it; control and direction characters are written as \\u{XXXX}.")
        return page.text
    }
}

extension AuditReport {
    /// How many leading characters of a question id tell every question the report names apart: at least 8, as
    /// `permission-ledger question` accepts them. The questions table gives each id whole.
    func shortQuestionIDLength() -> Int {
        var ids = Set(questions.map(\.question.id))
        for recorded in events { if let id = recorded.questionID { ids.insert(id) } }
        for records in approvals.values { for record in records { if case .question(let id) = record.source { ids.insert(id) } } }
        let texts = ids.map(\.uuidString)
        return (8...36).first { length in Set(texts.map { $0.prefix(length) }).count == texts.count } ?? 36
    }
}

/// An HTML document being written, with what every page of a report shares.
struct ReportPage {
    private(set) var text = ""
    /// The length question ids are shortened to outside the questions table.
    var idLength = 36

    /// A question id, shortened to ``idLength`` characters.
    func questionID(_ id: UUID) -> String { String(id.uuidString.prefix(idLength)) }

    mutating func raw(_ html: String) { text += html }

    /// Appends `value` as inert text.
    mutating func add(_ value: String) { text += HTMLText.escaped(value) }

    mutating func open(title: String) {
        raw("""
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
            <meta name="generator" content="PermissionLedger">
            <title>\(HTMLText.escaped(title))</title>
            <style>
            \(ReportStyle.css)
            </style>
            </head>
            <body>

            """)
    }

    mutating func close(footer: String) {
        raw("<footer><p>\(HTMLText.escaped(footer))</p></footer>\n</body>\n</html>\n")
    }

    /// A cell of a table: the value as inert text.
    func cell(_ value: String, _ className: String? = nil) -> String {
        "<td\(className.map { " class=\"\($0)\"" } ?? "")>\(HTMLText.escaped(value))</td>"
    }

    /// A cell that holds HTML this type made.
    func htmlCell(_ html: String, _ className: String? = nil) -> String {
        "<td\(className.map { " class=\"\($0)\"" } ?? "")>\(html)</td>"
    }

    /// A table's opening, caption and header row.
    mutating func table(caption: String, headers: [String], id: String? = nil) {
        raw("<div class=\"scroll\"><table\(id.map { " id=\"\($0)\"" } ?? "")><caption>\(HTMLText.escaped(caption))</caption><thead><tr>")
        for header in headers { raw("<th scope=\"col\">\(HTMLText.escaped(header))</th>") }
        raw("</tr></thead><tbody>\n")
    }

    mutating func endTable() { raw("</tbody></table></div>\n") }

    // MARK: Sections

    mutating func header(_ report: AuditReport) {
        raw("<header>\n<h1>Audit report: <bdi>")
        add(report.subject)
        raw("</bdi></h1>\n<p class=\"lede\">Who this child could talk to, since when and on whose answer, from ")
        raw(HTMLText.time(report.from) + " to " + HTMLText.time(report.to))
        raw(", as the ledger recorded it up to event \(report.point.seq).</p>\n<dl class=\"facts\">")
        raw("<dt>Child (subject)</dt><dd><bdi>\(HTMLText.escaped(report.subject))</bdi></dd>")
        raw("<dt>Period</dt><dd>\(HTMLText.time(report.from)) to \(HTMLText.time(report.to))</dd>")
        raw("<dt>As of</dt><dd>event \(report.point.seq), \(HTMLText.time(report.point.time))</dd>")
        raw("<dt>Ledger</dt><dd>\(report.head.seq) events; head hash <code>\(report.head.hash)</code></dd>")
        raw("<dt>Integrity</dt><dd>" + Self.integrityStatus(report.integrity) + "</dd>")
        raw("</dl>\n<nav aria-label=\"Sections\"><ol>")
        for (id, title) in Self.sections { raw("<li><a href=\"#\(id)\">\(title)</a></li>") }
        raw("</ol></nav>\n</header>\n")
    }

    static let sections = [
        ("summary", "Summary"), ("timeline", "Timeline"), ("contacts", "Contacts and who approved them"),
        ("questions", "Questions"), ("permissions", "System permissions"), ("events", "Every event of the period"),
        ("integrity", "Integrity"),
    ]

    static func integrityStatus(_ integrity: ReportIntegrity) -> String {
        integrity.isIntact
            ? "<span class=\"status ok\">checked</span>: every event of this child is in the ledger's Merkle tree"
            : "<span class=\"status failed\">not checked or failed</span>: see Integrity"
    }

    private mutating func sectionStart(_ id: String) {
        let index = Self.sections.firstIndex { $0.0 == id }!
        raw("<section id=\"\(id)\" aria-labelledby=\"\(id)-heading\">\n<h2 id=\"\(id)-heading\">\(index + 1). \(Self.sections[index].1)</h2>\n")
    }

    private mutating func sectionEnd() { raw("</section>\n") }

    /// A contact as the report shows it: its value, or `(erased, seq N)`.
    func contact(_ handle: Erasable<CommunicationHandle>, kind: CommunicationHandle.Kind) -> String {
        switch handle {
        case .readable(let h): "<bdi>\(HTMLText.escaped(h.value))</bdi> <span class=\"kind\">(\(h.kind.rawValue))</span>"
        case .erased(let mark): erased(mark) + " <span class=\"kind\">(\(kind.rawValue))</span>"
        }
    }

    /// The attributes that name a contact for a reader of the page's markup (a test, a script of the reader's own):
    /// `data-kind`, and `data-handle` with its value or `data-erased` with the erasure's seq.
    static func handleAttributes(_ handle: Erasable<CommunicationHandle>, kind: CommunicationHandle.Kind) -> String {
        switch handle {
        case .readable(let h): "data-kind=\"\(h.kind.rawValue)\" data-handle=\"\(HTMLText.escaped(h.value))\""
        case .erased(let mark): "data-kind=\"\(kind.rawValue)\" data-erased=\"\(mark.seq)\""
        }
    }

    func erased(_ mark: ErasureMark) -> String { "<span class=\"erased\">(erased, seq \(mark.seq))</span>" }

    func erasable(_ value: Erasable<String>) -> String {
        switch value {
        case .readable(let text): "<bdi>\(HTMLText.escaped(text))</bdi>"
        case .erased(let mark): erased(mark)
        }
    }

    mutating func summary(_ report: AuditReport) {
        sectionStart("summary")
        raw("<div class=\"cards\">")
        knownCard("Known at the start", report.knownAtStart, at: report.from)
        knownCard("Known at the end", report.knownAtEnd, at: report.to)
        let byState = report.questionsByState
        raw("<div class=\"card\"><h3>Questions in the period</h3><p class=\"big\">\(report.questions.count)</p><ul>")
        for state in QuestionState.allCases where byState[state] != nil {
            raw("<li>\(state.rawValue): \(byState[state]!)</li>")
        }
        raw("</ul></div>")
        let late = report.questions.filter(\.late).count
        let expired = report.questions.filter { $0.state == .expired }.count
        raw("<div class=\"card\"><h3>Late answers</h3><p class=\"big\">\(late)</p><p>answers that came after their question had expired</p></div>")
        raw("<div class=\"card\"><h3>Expiries</h3><p class=\"big\">\(expired)</p><p>questions that ended unanswered</p></div>")
        raw("<div class=\"card\"><h3>Erasures</h3><p class=\"big\">\(report.erasures.count)</p><p>")
        raw(report.erasures.isEmpty ? "none in the period" : report.erasures.map { "seq \($0.seq)" }.joined(separator: ", "))
        raw("</p></div></div>\n")
        sectionEnd()
    }

    private mutating func knownCard(_ title: String, _ known: [KnownHandle], at time: Timestamp) {
        raw("<div class=\"card\"><h3>\(title)</h3><p class=\"big\">\(known.count)</p><p>\(HTMLText.time(time))</p><ul>")
        for handle in known {
            raw("<li \(Self.handleAttributes(handle.erased.map { .erased($0) } ?? .readable(handle.handle), kind: handle.handle.kind))>"
                + contact(handle.erased.map { .erased($0) } ?? .readable(handle.handle), kind: handle.handle.kind) + "</li>")
        }
        raw("</ul></div>")
    }

    mutating func timeline(_ report: AuditReport) {
        sectionStart("timeline")
        raw("<p>Time runs left to right, from \(HTMLText.time(report.from)) to \(HTMLText.time(report.to)). ")
        raw("A bar shows when a contact was known, or what state a permission was in. Hover over a bar or mark for its details; the tables that follow hold the same facts.</p>\n")
        raw("<ul class=\"legend\">")
        for source in KnownInterval.Source.allCases {
            raw("<li>" + legendSwatch("source-\(source.rawValue)", letter: ReportTimeline.letter(source)) + ReportTimeline.sourcePhrase(source) + "</li>")
        }
        raw("<li>" + legendSwatch("source-erased", letter: "E") + "erased on a guardian's request or by retention</li>")
        raw("<li><span aria-hidden=\"true\">✕</span> lapsed: a time-limited approval ran out</li>")
        raw("<li><span aria-hidden=\"true\">|</span> question asked; ✓ approved, ✗ declined, ⊘ canceled, ◷ expired, ! failed</li>")
        raw("</ul>\n<div class=\"chart\">\n")
        raw(ReportTimeline(report: report).svg())
        raw("\n</div>\n")
        sectionEnd()
    }

    private func legendSwatch(_ className: String, letter: String) -> String {
        "<svg width=\"30\" height=\"16\" viewBox=\"0 0 30 16\" aria-hidden=\"true\" class=\"swatch\">"
            + ReportTimeline.definitions
            + "<g class=\"bar \(className)\"><rect x=\"1\" y=\"1\" width=\"28\" height=\"14\" rx=\"2\"/><text class=\"bar-letter\" x=\"4\" y=\"12\">\(letter)</text></g></svg>"
    }

    mutating func contacts(_ report: AuditReport) {
        sectionStart("contacts")
        raw("<p>For each contact, every answer and observation that made it known or not, and what ended it: what <code>permission-ledger who-approved</code> says. Times are in UTC; question ids are shortened, and whole in the questions table.</p>\n")
        if report.contacts.isEmpty { raw("<p>No contact.</p>\n") }
        for lane in report.contacts {
            raw("<h3>" + contact(lane.handle, kind: lane.kind) + "</h3>\n")
            if case .readable(let handle) = lane.handle, let records = report.approvals[handle], !records.isEmpty {
                table(caption: "Who made it known, and what ended it", headers: ["Seq", "Said", "Since", "Until", "By", "Ended"])
                for record in records {
                    var by: String
                    switch record.source {
                    case .observation: by = "observation"
                    case .question(let id):
                        by = "question \(questionID(id))"
                        if let q = record.question {
                            by += ": \(q.state.rawValue)"
                            if let via = q.via { by += " via \(via.rawValue)" }
                            if let choice = q.choice { by += ", choice \(choice.id)" }
                        }
                    }
                    // What ended a version is the next row, unless it lapsed.
                    let ended = record.ended.map { $0.cause == .lapse ? "lapsed \(HTMLText.short($0.at))" : "by the next" } ?? "holds"
                    raw("<tr>" + cell("\(record.seq)") + cell(record.known ? "known" : "not known")
                        + cell(HTMLText.short(record.since)) + cell(record.until.map(HTMLText.short) ?? "–")
                        + cell(by) + cell(ended) + "</tr>\n")
                }
                endTable()
                continue
            }
            // An erased contact: its intervals, without what its erased events said.
            table(caption: "Intervals in which it was known", headers: ["From", "To", "How", "Seq"])
            if lane.intervals.isEmpty { raw("<tr><td colspan=\"4\">never known</td></tr>") }
            for interval in lane.intervals {
                var how = ReportTimeline.sourcePhrase(interval.source)
                if let id = interval.question { how += " (question \(questionID(id)))" }
                if let until = interval.until { how += ", until \(HTMLText.short(until))" }
                let to = interval.end.map { HTMLText.short($0) + (interval.lapsed ? " (lapsed)" : "") } ?? "still known"
                raw("<tr>" + cell(HTMLText.short(interval.start)) + cell(to)
                    + htmlCell(HTMLText.escaped(how) + (interval.erased.map { " " + erased($0) } ?? ""))
                    + cell("\(interval.seq)") + "</tr>\n")
            }
            endTable()
        }
        sectionEnd()
    }

    mutating func questions(_ report: AuditReport) {
        sectionStart("questions")
        table(caption: "Questions asked by the end of the period and not ended before it, as of event \(report.point.seq) (times in UTC, under the day they were asked)",
              headers: ["Asked", "Question", "About", "Outcome", "Choice", "Via", "Late", "Ended"])
        if report.questions.isEmpty { raw("<tr><td colspan=\"8\">No question.</td></tr>") }
        var day = ""
        for status in report.questions {
            dayRow(&day, status.askedAt, columns: 8)
            let about: String
            if let description = status.appUpdateDescription {
                about = "app update: " + erasable(description)
            } else {
                about = status.handles.map { handle in
                    switch handle {
                    case .readable(let h): "<bdi>\(HTMLText.escaped(h.value))</bdi>"
                    case .erased(let mark): erased(mark)
                    }
                }.joined(separator: ", ")
            }
            var outcome = HTMLText.escaped(status.state.rawValue)
            if status.state == .failed, let error = status.error { outcome += ": \(error.code.rawValue)" }
            if let message = status.errorMessage { outcome += " " + erasable(message) }
            let choice = status.choiceTitle.map(erasable) ?? "–"
            let ended = status.resolvedAt.map { HTMLText.day($0) == day ? HTMLText.clock($0) : HTMLText.short($0) } ?? "–"
            raw("<tr data-state=\"\(status.state.rawValue)\"><td>\(HTMLText.clock(status.askedAt))</td><td><code>\(status.question.id.uuidString)</code></td>"
                + htmlCell(about) + htmlCell(outcome) + htmlCell(choice) + "<td>\(status.via?.rawValue ?? "–")</td>"
                + "<td>\(status.late ? "late" : "no")</td><td>\(ended)</td></tr>\n")
        }
        endTable()
        sectionEnd()
    }

    mutating func permissions(_ report: AuditReport) {
        sectionStart("permissions")
        table(caption: "Every change of a system permission up to event \(report.point.seq) (times in UTC)", headers: ["Permission", "State", "Since", "Until", "Cause", "Seq"])
        if report.permissions.isEmpty { raw("<tr><td colspan=\"6\">No change.</td></tr>") }
        for lane in report.permissions {
            for interval in lane.intervals {
                raw("<tr>" + cell(lane.permission.rawValue) + cell(interval.state.rawValue, "status")
                    + cell(HTMLText.short(interval.start)) + cell(interval.end.map(HTMLText.short) ?? "holds")
                    + cell(interval.cause?.rawValue ?? "–") + cell("\(interval.seq)") + "</tr>\n")
            }
        }
        endTable()
        sectionEnd()
    }

    mutating func events(_ report: AuditReport) {
        sectionStart("events")
        table(caption: "The child's events that happened in the period, in the order the ledger recorded them (\(report.events.count); times in UTC, under the day they happened; question ids shortened, whole in the questions table)",
              headers: ["Seq", "Happened", "Recorded", "Type", "What"], id: "event-table")
        if report.events.isEmpty { raw("<tr><td colspan=\"5\">No event.</td></tr>") }
        var day = ""
        for recorded in report.events {
            dayRow(&day, recorded.occurredAt, columns: 5)
            let happened = HTMLText.clock(recorded.occurredAt)
            let recordedAt = recorded.recordedAt == recorded.occurredAt ? "same"
                : HTMLText.day(recorded.recordedAt) == day ? HTMLText.clock(recorded.recordedAt) : HTMLText.short(recorded.recordedAt)
            raw("<tr><td>\(recorded.seq)</td><td>\(happened)</td><td>\(recordedAt)</td><td>\(recorded.type.rawValue)</td>"
                + htmlCell(what(recorded.event)) + "</tr>\n")
        }
        endTable()
        sectionEnd()
    }

    /// A row that names the day of `time`, when it is not `day`, the day of the rows before it: rows then show the
    /// time of day alone.
    private mutating func dayRow(_ day: inout String, _ time: Timestamp, columns: Int) {
        let next = HTMLText.day(time)
        guard next != day else { return }
        day = next
        raw("<tr class=\"day\"><th colspan=\"\(columns)\" scope=\"rowgroup\">\(next)</th></tr>\n")
    }

    /// What an event says, in a line of inert HTML; an erased value as `(erased, seq N)`.
    func what(_ event: PermissionEvent) -> String {
        func value(_ text: String) -> String {
            event.erased.map { erased($0) } ?? "<bdi>\(HTMLText.escaped(text))</bdi>"
        }
        func handles(_ list: [CommunicationHandle]) -> String { list.isEmpty ? "none" : list.map { value($0.value) }.joined(separator: ", ") }
        switch event.payload {
        case .questionAsked(let q):
            let about: String = switch q.topic {
            case .communication(let topic): "about " + handles(topic.handles)
            case .significantAppUpdate(let topic): "about an app update: " + value(topic.description)
            }
            return "question <code>\(questionID(q.id))</code> \(about)"
        case .questionSendCanceled(let id):
            return "the child canceled sending <code>\(questionID(id))</code>"
        case .questionAskFailed(let id, let error):
            return "<code>\(questionID(id))</code> could not be asked: \(error.code.rawValue)" + (error.message.map { " " + value($0) } ?? "")
        case .questionAnswered(let id, let choice, let via):
            return "<code>\(questionID(id))</code> answered with \(HTMLText.escaped(choice)) via \(via.rawValue)"
        case .questionExpired(let id):
            return "<code>\(questionID(id))</code> expired"
        case .handlesObserved(let checked, let known):
            guard event.erased == nil else { return "checked: \(handles(checked)); known: \(handles(known))" }
            let knownSet = Set(known)
            return "known: \(handles(checked.filter { knownSet.contains($0) })); not known: \(handles(checked.filter { !knownSet.contains($0) }))"
        case .permissionChanged(let permission, let state, let cause):
            return "\(permission.rawValue) → \(state.rawValue)" + (cause.map { " (\($0.rawValue))" } ?? "")
        case .subjectErased(let erasure):
            var text = "erasure: \(erasure.basis.rawValue)"
            if let reference = erasure.reference { text += ", reference <bdi>\(HTMLText.escaped(reference))</bdi>" }
            if let before = erasure.before { text += ", of what was recorded before \(HTMLText.time(before))" }
            return text
        }
    }

    mutating func integrity(_ report: AuditReport, bundleDirectory: String?) {
        sectionStart("integrity")
        let integrity = report.integrity
        raw("<h3>The child's events</h3>\n<p>")
        if let tree = integrity.tree {
            if let problem = integrity.problem {
                raw("<span class=\"status failed\">Failed</span> after \(integrity.checkedEvents) events: \(HTMLText.escaped(problem)).")
            } else {
                raw("<span class=\"status ok\">Checked</span>: all \(integrity.checkedEvents) events of this child up to event \(report.point.seq) ")
                raw("are in the ledger's Merkle tree (RFC 9162) of \(tree.size) events, whose root is <code>\(tree.root.base64)</code>: ")
                raw("each event's leaf was made again from its record and its inclusion proof leads to that root.")
            }
        } else {
            raw("<span class=\"status failed\">Not checked</span>: \(HTMLText.escaped(integrity.problem ?? "no tree")).")
        }
        raw("</p>\n<h3>The whole ledger</h3>\n<p>")
        if let verification = integrity.verification {
            if verification.isIntact {
                raw("<span class=\"status ok\">Intact</span>: <code>permission-ledger verify</code> checked all \(verification.events) events, every hash of the chain, the Merkle tree and every table; head hash <code>\(verification.head)</code>.")
            } else {
                raw("<span class=\"status failed\">Damaged</span>: \(HTMLText.escaped(verification.problem ?? ""))\(verification.damagedSeq.map { " (seq \($0))" } ?? "").")
            }
        } else {
            raw("Not verified for this report. <code>permission-ledger verify</code> checks every event of the ledger; its time grows with the whole ledger. Run it, or make the report with <code>--verify</code>.")
        }
        raw("</p>\n<h3>Signed checkpoint</h3>\n")
        if let signed = integrity.signedCheckpoint, let key = integrity.verifierKey {
            raw("<p>The ledger's key signed this checkpoint (C2SP tlog-checkpoint, a signed note with Ed25519). Its verifier key:</p>\n")
            raw("<pre>\(HTMLText.escaped(key))</pre>\n<pre>\(HTMLText.escapedLines(signed))</pre>\n")
        } else {
            raw("<p>None: the report was made without a signing key. <code>permission-ledger report --signing-key FILE</code> signs one and writes the audit bundle beside the report.</p>\n")
        }
        raw("<h3>Audit bundle</h3>\n")
        if let bundleDirectory {
            raw("<p>The child's audit bundle is in <code>\(HTMLText.escaped(bundleDirectory))</code>, beside this file: each event, its leaf and its proof against the checkpoint above. Anyone can check it with Go's and Python's own libraries, without PermissionLedger:</p>\n")
            raw("<pre>\(HTMLText.escapedLines(BundleReadme.checkCommands(directory: bundleDirectory)))</pre>\n")
            raw("<p>Its <code>README.md</code> says what it proves and what it cannot.</p>\n")
        } else {
            raw("<p>None was written with this report.</p>\n")
        }
        sectionEnd()
    }
}
