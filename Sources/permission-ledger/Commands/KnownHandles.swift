import ArgumentParser
import Foundation
import PermissionLedger
import PermissionModel

struct KnownHandles: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "known-handles",
        abstract: "List the handles a subject may talk to, and on whose approval or observation.",
        discussion: """
        Example:
          permission-ledger known-handles --subject kid-1 --as-of 2026-11-03T12:00:00Z
        """)

    @OptionGroup var ledger: LedgerOption
    @Option(help: "The subject (child).") var subject: String
    @OptionGroup var asOf: AsOfOption
    @OptionGroup var format: FormatOption

    func run() throws {
        let (opened, point) = try ledger.openForReading(asOf: asOf)
        let (handles, at) = try reading(opened, asOf: point) { (try $0.knownHandles(subject: subject), $0.point) }
        switch format.resolved {
        case .json:
            var out = Output()
            try QueryJSON.knownHandlesResult(handles, subject: subject, at: at) { bytes throws(OutputFailure) in try out.write(bytes: bytes) }
            try out.write("\n")
            try out.flush()
        case .table, .csv:
            let csv = format.resolved == .csv
            var table = csv ? Table("kind", "value", "since", "until", "source") : Table("kind", "value", "since (UTC)", "until (UTC)", "source")
            for h in handles {
                let source: String
                switch h.source {
                case .question(let id): source = csv ? "question:\(id.uuidString)" : "question \(id.uuidString)"
                case .observation(let seq): source = csv ? "observation:\(seq)" : "observed, seq \(seq)"
                }
                let kind = csv ? h.handle.kind.rawValue : ["phoneNumber": "phone", "emailAddress": "email"][h.handle.kind.rawValue] ?? h.handle.kind.rawValue
                table.add(kind, h.erased.map(erasedText) ?? h.handle.value, csv ? h.since.description : tableTime(h.since),
                          csv ? (h.until?.description ?? "") : tableTime(h.until), source)
            }
            var out = Output()
            if !csv { try out.write("\(displayed(subject)) as of seq \(at.seq), \(at.time)\n\n") }
            try table.write(format.resolved, to: &out)
            try out.flush()
        }
    }
}
