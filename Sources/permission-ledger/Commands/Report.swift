import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write a child's audit report: one HTML file to read in a browser, print to PDF or attach to a case.",
        discussion: """
        The report shows who the child could talk to, since when and on whose answer, over the period: a summary, \
        a timeline (one lane per contact and per system permission), each contact's approvals, the questions, \
        every event, and the proof of integrity. It is one self-contained file, with no script and nothing fetched \
        from anywhere. It holds the child's personal values: it is written with mode 0600.

        With --signing-key (or $PERMISSION_LEDGER_SIGNING_KEY), the checkpoint the child's events are checked \
        against is signed, and the child's audit bundle is written beside the report (FILE.bundle), with the \
        commands that check it with third-party tools. With --verify, the whole ledger is verified first and the \
        result shown in the report: its time grows with the whole ledger.

        With several --subject, or --all, --out names a new (or empty) directory: one report per child, and \
        index.html linking them.

        Examples:
          permission-ledger report --ledger family.ledger --subject kid-ben --out kid-ben.html
          permission-ledger report --ledger family.ledger --subject kid-ben --from 2026-11-01T00:00:00Z \\
              --to 2026-11-30T23:59:59Z --signing-key signing.key --verify --out kid-ben-november.html
          permission-ledger report --ledger family.ledger --all --out family-reports
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: ArgumentHelp("The child (subject) the report is about; repeat it for several.", valueName: "SUBJECT"))
    var subject: [String] = []
    @Flag(help: "A report for every subject of the ledger (as of --as-of), with an index.") var all = false
    @Option(help: ArgumentHelp("The period's first instant, RFC 3339. Default: the child's first event.", valueName: "TIME"))
    var from: String?
    @Option(help: ArgumentHelp("The period's last instant, RFC 3339; without --as-of, also the point the report answers for. Default: the --as-of point.", valueName: "TIME"))
    var to: String?
    @OptionGroup var asOf: AsOfHeadOption
    @Option(help: ArgumentHelp("The HTML file to write; with several subjects, the directory.", valueName: "FILE"))
    var out: String
    @OptionGroup var signingKey: SigningKeyOption
    @Flag(help: "Verify the whole ledger first and show the result in the report.") var verify = false
    @OptionGroup var format: FormatOption

    func validate() throws {
        if out.isEmpty { throw ValidationError("--out: an empty path") }
        if subject.contains("") { throw ValidationError("--subject: an empty subject") }
        if subject.isEmpty, !all { throw ValidationError("give --subject SUBJECT (once or more) or --all") }
        if !subject.isEmpty, all { throw ValidationError("give --subject or --all, not both") }
    }

    func run() throws {
        let period = ReportPeriod(from: try from.map { try time($0, option: "--from") }, to: try to.map { try time($0, option: "--to") })
        if let start = period.from, let end = period.to, end < start {
            throw ToolFailure(.usage, "usage: --to \(to!) is before --from \(from!)")
        }
        try ledger.refuseOutputInsideLedger(out, option: "--out")
        let signer = try signingKey.optionalSigner()
        // Without --as-of, a period that ends at --to is reported as the ledger knew it then: what it recorded by
        // that time, its clock at that time (so that what lapsed by then shows as lapsed).
        if asOf.asOf == nil, let end = period.to, end > Timestamp(Date()) {
            throw ToolFailure(.usage, "usage: --to \(to!) is in the future; give --as-of to report as of another point")
        }
        let point = try asOf.point() ?? period.to.map { .time($0) }
        // The whole ledger is verified before it is opened to be read: one process opens a ledger once at a time.
        let verification: VerificationReport? = try verify ? {
            do { return try Ledger.verify(path: ledger.path) } catch { throw ToolFailure(error) }
        }() : nil
        let opened = try ledger.openForReading()
        do {
            // One point for every report, whatever the wall clock or the log does meanwhile.
            let fixed = try point ?? .seq(opened.head().seq)
            let subjects = all ? try opened.read(asOf: fixed) { try $0.subjects() } : subject
            guard !subjects.isEmpty else { throw LedgerError(.notFound, "the ledger has no subject as of that point") }
            var written: [(report: AuditReport, file: String, bundle: String?)] = []
            if all || subjects.count > 1 {
                try makeDirectory(out)
                for (index, name) in subjects.enumerated() {
                    let file = Self.fileName(index: index + 1, subject: name)
                    let report = try AuditReport(ledger: opened, subject: name, period: period, asOf: fixed, signer: signer, verification: verification)
                    let bundle = try writeBundle(opened, report: report, signer: signer, beside: out + "/" + file)
                    try AuditReport.writeFile(report.html(bundleDirectory: bundle.map { ($0 as NSString).lastPathComponent }), to: out + "/" + file)
                    written.append((report, out + "/" + file, bundle))
                }
                let index = AuditReportIndex(entries: written.map { ($0.report, ($0.file as NSString).lastPathComponent) })
                try AuditReport.writeFile(index.html(), to: out + "/index.html")
            } else {
                let report = try AuditReport(ledger: opened, subject: subjects[0], period: period, asOf: fixed, signer: signer, verification: verification)
                let bundle = try writeBundle(opened, report: report, signer: signer, beside: out)
                try AuditReport.writeFile(report.html(bundleDirectory: bundle.map { ($0 as NSString).lastPathComponent }), to: out)
                written.append((report, out, bundle))
            }
            try summarize(written)
        } catch let failure as ToolFailure {
            throw failure
        } catch {
            throw ToolFailure(error)
        }
    }

    /// Writes the child's audit bundle beside `file` (`FILE.bundle`, new) when there is a signer.
    private func writeBundle(_ ledger: Ledger, report: AuditReport, signer: CheckpointSigner?, beside file: String) throws -> String? {
        guard let signer else { return nil }
        let directory = (file.hasSuffix(".html") ? String(file.dropLast(5)) : file) + ".bundle"
        _ = try AuditBundle.write(ledger, subject: report.subject, asOf: .seq(report.point.seq), signer: signer, to: directory)
        return directory
    }

    private func makeDirectory(_ path: String) throws {
        do throws(OwnerOnlyDirectory.Problem) {
            try OwnerOnlyDirectory.makeNewOrEmpty(path)
        } catch .notEmpty {
            throw LedgerError(.storage, "\(path): must be a new or empty directory for several reports")
        } catch .cannotBeMade(let reason) {
            throw LedgerError(.storage, "\(path): cannot be made (\(reason)); several reports need a new or empty directory")
        }
    }

    /// A report's file name in a directory of reports: its position, then the subject's letters, digits, `-`, `_`
    /// and `.` (others as `_`), so that no subject can name another directory or a hidden file.
    static func fileName(index: Int, subject: String) -> String {
        var safe = ""
        for scalar in subject.unicodeScalars.prefix(40) {
            let c = Character(scalar)
            safe.append(scalar.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_" || c == ".") ? c : "_")
        }
        return String(format: "%03d-", index) + safe + ".html"
    }

    private func time(_ text: String, option: String) throws -> Timestamp {
        do { return try Timestamp(rfc3339: text) } catch { throw ToolFailure(.usage, "usage: \(option) \(error.reason)") }
    }

    private func summarize(_ written: [(report: AuditReport, file: String, bundle: String?)]) throws {
        switch format.resolved {
        case .table:
            for entry in written {
                var line = "wrote \(displayed(entry.file)): \(displayed(entry.report.subject)), \(entry.report.events.count) events, "
                line += "\(entry.report.questions.count) questions, integrity \(entry.report.integrity.isIntact ? "checked" : "NOT checked")"
                if let bundle = entry.bundle { line += "; bundle \(displayed(bundle))" }
                try writeOut(line)
            }
            if written.count > 1 { try writeOut("wrote \(displayed(out))/index.html") }
        case .json:
            var reports: [String] = []
            for entry in written {
                var json = JSONObjectWriter()
                json.string("file", entry.file)
                json.string("subject", entry.report.subject)
                json.integer("events", entry.report.events.count)
                json.integer("questions", entry.report.questions.count)
                json.bool("intact", entry.report.integrity.isIntact)
                json.string("bundle", entry.bundle)
                reports.append(json.text)
            }
            try writeOut("{\"reports\":[" + reports.joined(separator: ",") + "]}")
        case .csv:
            var table = Table("file", "subject", "events", "questions", "intact", "bundle")
            for entry in written {
                table.add(entry.file, entry.report.subject, String(entry.report.events.count), String(entry.report.questions.count),
                          String(entry.report.integrity.isIntact), entry.bundle ?? "")
            }
            try writeOut(table.csv(), terminator: "")
        }
    }
}
