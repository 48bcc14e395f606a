import Foundation
import PermissionModel

/// The index page of the audit reports of several children (a family, or every subject): one row per report,
/// with what it covers, its counts and its integrity, linking to the report's own file.
public struct AuditReportIndex: Sendable {
    /// Each report and the file name, relative to the index, it was written to.
    public var entries: [(report: AuditReport, file: String)]

    /// The index of `entries`, in their order.
    public init(entries: [(report: AuditReport, file: String)]) {
        self.entries = entries
    }

    /// The index as one self-contained HTML document, in the reports' look.
    public func html() -> String {
        var page = ReportPage()
        page.open(title: "Audit reports: \(entries.count) \(entries.count == 1 ? "child" : "children")")
        page.raw("<header>\n<h1>Audit reports</h1>\n<p class=\"lede\">One report per child")
        if let first = entries.first {
            page.raw(", as the ledger recorded it up to event \(first.report.point.seq) (\(HTMLText.time(first.report.point.time)))")
        }
        page.raw(".</p>\n</header>\n<main>\n<section id=\"reports\" aria-labelledby=\"reports-heading\">\n<h2 id=\"reports-heading\">Children</h2>\n")
        page.table(caption: "\(entries.count) reports", headers: ["Child", "Period", "Events", "Questions", "Known at the end", "Erasures", "Integrity"])
        for (report, file) in entries {
            let link = "<a href=\"\(HTMLText.escaped(Self.href(file)))\"><bdi>\(HTMLText.escaped(report.subject))</bdi></a>"
            page.raw("<tr>" + page.htmlCell(link) + page.htmlCell("\(HTMLText.time(report.from)) to \(HTMLText.time(report.to))")
                + page.cell(String(report.events.count), "number") + page.cell(String(report.questions.count), "number")
                + page.cell(String(report.knownAtEnd.count), "number") + page.cell(String(report.erasures.count), "number")
                + page.htmlCell(ReportPage.integrityStatus(report.integrity)) + "</tr>\n")
        }
        page.endTable()
        page.raw("</section>\n</main>\n")
        page.close(footer: "Made by PermissionLedger. Each report is a file of its own, beside this index.")
        return page.text
    }

    /// A relative link to `file`: each byte outside the unreserved set percent-encoded (RFC 3986), so that no
    /// file name can become a scheme, a query or another directory.
    static func href(_ file: String) -> String {
        var result = ""
        for byte in file.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += String(format: "%%%02X", byte)
            }
        }
        return result.hasPrefix(".") ? "./" + result : result
    }
}
