import Foundation
@testable import PermissionLedger
import PermissionModel
import Testing

/// Audit reports (docs/REPORTS.md) opened in a real browser, headless Chromium: they render with no console message
/// and no request, at desktop and phone widths and in print; the timeline's bars are where the ledger's intervals
/// say; erased values show as erased; hostile values stay text.
@Suite("audit reports in a browser", .enabled(if: Chromium.isAvailable, Chromium.unavailableReason), .timeLimit(.minutes(10)))
struct ReportBrowserTests {
    @Test("a report renders with no console message and no request, in screenshots at two widths and in a PDF")
    func rendersAndPrints() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let report = sandbox.path("kid-ben.html")
            let run = try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-ben", "--out", report])
            try #require(run.status == 0, "\(run)")

            // The page as it is, its content security policy in place: any blocked script, style or request
            // would be logged on the console.
            for (width, height, name) in [(1280, 2000, "desktop.png"), (390, 1800, "phone.png")] {
                let shot = try Chromium.run(report, ["--screenshot=\(sandbox.path(name))"], width: width, height: height, sandbox: sandbox)
                #expect(shot.status == 0, "\(shot.log.suffix(2000))")
                #expect(shot.consoleMessages.isEmpty, "\(shot.consoleMessages)")
                let png = try Data(contentsOf: URL(fileURLWithPath: sandbox.path(name)))
                #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(name) is not a PNG")
                // The image's width, from its header, is the window's: the page drew at that width.
                let pngWidth = png.dropFirst(16).prefix(4).reduce(0) { $0 << 8 | Int($1) }
                #expect(pngWidth == width)
                #expect(png.count > 20_000, "\(name) is nearly empty: \(png.count) bytes")
            }
            let pdf = sandbox.path("kid-ben.pdf")
            let print = try Chromium.run(report, ["--print-to-pdf=\(pdf)", "--no-pdf-header-footer"], sandbox: sandbox)
            #expect(print.status == 0 && print.consoleMessages.isEmpty, "\(print.log.suffix(2000))")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: pdf))
            #expect(bytes.starts(with: Array("%PDF-".utf8)))
            // Each of the seven sections starts a page of its own.
            let pages = String(decoding: bytes, as: UTF8.self).components(separatedBy: "/Type /Page\n").count - 1
                + String(decoding: bytes, as: UTF8.self).components(separatedBy: "/Type /Page/").count - 1
                + String(decoding: bytes, as: UTF8.self).components(separatedBy: "/Type /Page ").count - 1
            #expect(pages >= 7, "\(pages) pages")

            // Without its policy, the markup alone fetches nothing and nothing overflows a phone's width.
            let probe = try Chromium.probed(report, probe: """
                ({ resources: performance.getEntriesByType('resource').map(e => e.name),
                   pageWidth: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })
                """, sandbox: sandbox)
            let phone = try Chromium.run(probe, ["--dump-dom"], width: 390, height: 1800, sandbox: sandbox)
            let result = try #require(try Chromium.probeResult(phone) as? [String: Any])
            #expect((result["resources"] as? [String]) == [], "\(result)")
            #expect((result["pageWidth"] as? Int) == (result["viewport"] as? Int), "the page is wider than a phone: \(result)")
        }
    }

    @Test("every bar of the timeline is where the ledger's intervals say, read back from the browser's layout")
    func barsAreWhereTheLedgerSays() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("family-day.jsonl"))
            let opened = try Ledger(path: ledger, options: .init(readOnly: true))
            for asOf in ["seq:400", "seq:1200"] {
                let report = sandbox.path("kid-ben-\(asOf).html")
                let run = try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-ben", "--as-of", asOf, "--out", report])
                try #require(run.status == 0, "\(run)")
                // For each bar, its drawn box (getBBox, in the drawing's units) and what it says it stands for.
                let probe = try Chromium.probed(report, probe: """
                    (() => { const svg = document.getElementById('timeline-chart');
                      return { from: svg.dataset.from, to: svg.dataset.to, plotStart: +svg.dataset.plotStart, plotEnd: +svg.dataset.plotEnd,
                        bars: [...svg.querySelectorAll('g.lane.contact g.bar')].map(g => { const r = g.querySelector('rect').getBBox();
                          return { handle: g.parentNode.dataset.handle || null, kind: g.parentNode.dataset.kind,
                                   seq: +g.dataset.seq, x: r.x, width: r.width }; }) }; })()
                    """, sandbox: sandbox)
                let result = try #require(try Chromium.probeResult(try Chromium.run(probe, ["--dump-dom"], sandbox: sandbox)) as? [String: Any])
                let bars = try #require(result["bars"] as? [[String: Any]])
                let from = try Timestamp(rfc3339: try #require(result["from"] as? String))
                let to = try Timestamp(rfc3339: try #require(result["to"] as? String))
                let plotStart = try #require(result["plotStart"] as? Double), plotEnd = try #require(result["plotEnd"] as? Double)
                func x(_ t: Timestamp) -> Double {
                    let fraction = Double(t.microseconds - from.microseconds) / Double(max(1, to.microseconds - from.microseconds))
                    return plotStart + (plotEnd - plotStart) * min(max(fraction, 0), 1)
                }

                // What the ledger says: every version of every handle of kid-ben that made it known, and what ended it.
                var expected: [String: (start: Timestamp, end: Timestamp?)] = [:]
                let pointTime = try opened.read(asOf: try AsOf(parsing: asOf)) { $0.point.time }
                try opened.read(asOf: try AsOf(parsing: asOf)) { view in
                    for lane in try view.contactLanes(subject: "kid-ben", questions: []) {
                        guard case .readable(let handle) = lane.handle else { continue }
                        for record in try view.handleRecords(handle, subject: "kid-ben") where record.known {
                            expected["\(handle.kind.rawValue) \(handle.value) \(record.seq)"] = (record.since, record.ended?.at)
                        }
                    }
                }
                #expect(bars.count == expected.count && bars.count > 20, "\(bars.count) bars, \(expected.count) intervals")
                for bar in bars {
                    let key = "\(bar["kind"] as? String ?? "") \(bar["handle"] as? String ?? "") \(bar["seq"] as? Int ?? 0)"
                    let interval = try #require(expected[key], "a bar the ledger has no interval for: \(key)")
                    let end = interval.end ?? pointTime
                    let drawnStart = bar["x"] as? Double ?? .nan, drawnWidth = bar["width"] as? Double ?? .nan
                    #expect(abs(drawnStart - x(interval.start)) < 0.02, "\(key): starts at \(drawnStart), not \(x(interval.start))")
                    #expect(abs(drawnStart + drawnWidth - max(x(end), x(interval.start) + 2)) < 0.02, "\(key): ends at \(drawnStart + drawnWidth), not \(x(end))")
                }
            }
        }
    }

    @Test("every erased value shows as erased, and none of the erased values is anywhere in the page")
    func erasedValuesShowAsErased() throws {
        try withSandbox { sandbox in
            let ledger = try sandbox.ledger(importing: Fixture.path("erasure.jsonl"))
            let report = sandbox.path("kid-ava.html")
            let run = try sandbox.run(["report", "--ledger", ledger, "--subject", "kid-ava", "--as-of", "seq:9", "--out", report])
            try #require(run.status == 0, "\(run)")
            let probe = try Chromium.probed(report, probe: """
                ({ text: document.body.innerText,
                   erasedLanes: [...document.querySelectorAll('g.lane.contact')].map(g => g.dataset.erased || null),
                   erasedBars: document.querySelectorAll('g.bar.source-erased').length })
                """, sandbox: sandbox)
            let result = try #require(try Chromium.probeResult(try Chromium.run(probe, ["--dump-dom"], sandbox: sandbox)) as? [String: Any])
            let text = try #require(result["text"] as? String)
            // kid-ava's values from before the erasure (seq 8), each of them.
            let erased = try Fixture.events("erasure.jsonl").prefix(7).filter { $0.subject == "kid-ava" }
                .flatMap { PersonalFields(of: $0).entries.map(\.value) }.filter { $0.utf8.count >= 4 }
            #expect(erased.count >= 5)
            for value in erased { #expect(!text.contains(value), "the page shows \(value), which seq 8 erased") }
            #expect(text.contains("(erased, seq 8)"))
            let lanes = try #require(result["erasedLanes"] as? [Any])
            #expect(!lanes.isEmpty && lanes.allSatisfy { ($0 as? String) == "8" }, "\(lanes)")
            #expect((result["erasedBars"] as? Int ?? 0) > 0)
        }
    }

    @Test("hostile subjects, handles, names and descriptions show as text: no script runs, no element is injected")
    func hostileValuesStayText() throws {
        try withSandbox { sandbox in
            let file = try sandbox.write(HostileReport.fixture, to: "hostile.jsonl")
            let ledger = try sandbox.ledger(importing: file)
            let report = sandbox.path("hostile.html")
            let run = try sandbox.run(["report", "--ledger", ledger, "--subject", HostileReport.subject, "--out", report])
            try #require(run.status == 0, "\(run)")
            let html = try String(contentsOfFile: report, encoding: .utf8)
            #expect(!html.contains("<script") && !html.contains("<img") && !html.contains("<iframe"))
            let probe = try Chromium.probed(report, probe: """
                ({ pwned: window.__pwned === true,
                   tags: [...new Set([...document.querySelectorAll('*')].map(e => e.localName))].sort(),
                   handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
                   text: document.body.innerText })
                """, sandbox: sandbox)
            let browser = try Chromium.run(probe, ["--dump-dom"], sandbox: sandbox)
            let result = try #require(try Chromium.probeResult(browser) as? [String: Any])
            #expect((result["pwned"] as? Bool) == false)
            #expect((result["handlers"] as? Int) == 0)
            // Only the elements a report is made of; the one script is the probe's.
            let tags = Set(try #require(result["tags"] as? [String]))
            let allowed: Set<String> = [
                "html", "head", "meta", "title", "style", "body", "header", "main", "footer", "section", "nav", "h1", "h2", "h3",
                "p", "ul", "ol", "li", "dl", "dt", "dd", "a", "div", "span", "bdi", "code", "pre", "time", "table", "caption",
                "thead", "tbody", "tr", "th", "td", "svg", "defs", "pattern", "rect", "line", "circle", "path", "g", "text", "desc", "script",
            ]
            #expect(tags.subtracting(allowed).isEmpty, "elements no report is made of: \(tags.subtracting(allowed))")
            // The hostile values are there, as the text they are (control and direction characters as \u{XXXX}).
            let text = try #require(result["text"] as? String)
            for value in HostileReport.shownValues { #expect(text.contains(value), "the page does not show \(value)") }
            #expect(browser.consoleMessages.isEmpty, "\(browser.consoleMessages)")
        }
    }
}

/// A child whose every personal value and name is an attempt to inject markup or reorder text.
enum HostileReport {
    static let subject = "kid-<b>bold</b>\"'&"
    static let handle = "<img src=x onerror=\"window.__pwned=true\">"
    static let name = "<script>window.__pwned=true</script>"
    static let description = "Update \u{202E}gnp.exe <iframe src=javascript:window.__pwned=true>"

    static var fixture: String {
        func json(_ value: String) -> String { JSONObjectWriter.string(value) }
        return """
            {"type":"question.asked","id":"h-1","subject":\(json(subject)),"occurredAt":"2026-11-20T09:00:00Z","question":{"id":"6A3F1C2E-00FF-4000-8000-000000000001","topic":{"communication":{"people":[{"handle":{"value":\(json(handle)),"kind":"custom"},"name":{"givenName":\(json(name)),"nickname":"\u{202E}evil"}}]}},"choices":[{"id":"yes","title":\(json(name)),"answer":"approval"},{"id":"no","title":"No","answer":"denial"}],"defaultChoice":"no"}}
            {"type":"question.answered","id":"h-2","subject":\(json(subject)),"occurredAt":"2026-11-20T09:05:00Z","questionId":"6A3F1C2E-00FF-4000-8000-000000000001","choiceId":"yes","via":"messages"}
            {"type":"question.asked","id":"h-3","subject":\(json(subject)),"occurredAt":"2026-11-20T09:10:00Z","question":{"id":"6A3F1C2E-00FF-4000-8000-000000000002","topic":{"significantAppUpdate":{"description":\(json(description))}}}}
            {"type":"handles.observed","id":"h-4","subject":\(json(subject)),"occurredAt":"2026-11-20T09:20:00Z","checked":[{"value":\(json(handle)),"kind":"custom"}],"known":[{"value":\(json(handle)),"kind":"custom"}]}

            """
    }

    /// How the page shows the hostile values: as they are, the right-to-left override written as `\u{202E}`.
    static let shownValues = [subject, handle, name, "Update \\u{202E}gnp.exe <iframe src=javascript:window.__pwned=true>"]
}
